"""moat-flood (build/tools/moat-flood) against a real gateway on loopback:
for every attack class the gateway's drop counters account for every packet
the tool says it sent, the JSON, CSV and PNG outputs are what they claim,
remote targets are refused, and every run ends by itself."""
import json
import os
import re
import signal
import struct
import subprocess
import time
import zlib

import pytest

from conftest import ARTIFACTS, ROOT, Gateway

FLOOD = ROOT / "build" / "tools" / "moat-flood"
CLASSES = ["forged-own", "forged-spoofed", "random-ssrc", "replay", "forged-rtcp",
           "stun-flood", "dtls-hello-flood", "malformed"]
RATE = 2000
DURATION = 1.0
LOSS_COLOR = (0xD0, 0x30, 0x30)
RTT_COLOR = (0x20, 0x60, 0xC0)


@pytest.fixture(scope="module")
def gw():
    gateway = Gateway()
    yield gateway
    assert gateway.stop() == 0, f"moat exited badly; log in {gateway.log_path}"


def flood(*args, timeout=60):
    return subprocess.run([str(FLOOD), *args], capture_output=True, text=True, timeout=timeout)


def whip(gateway):
    return gateway.base + "/whip/echo"


def total_drops(gateway):
    return sum(v for k, v in gateway.metrics().items()
               if k.startswith("moat_dropped_packets_total{"))


def settled_drops(gateway):
    """Total drops once the gateway has read everything queued to it."""
    previous = total_drops(gateway)
    for _ in range(50):
        time.sleep(0.2)
        current = total_drops(gateway)
        if current == previous:
            return current
        previous = current
    return previous


def record(name, figures):
    """Keeps the figures of a counting run for the lead's report."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / "flood-counts.jsonl"
    with open(path, "a") as f:
        f.write(json.dumps({"test": name, **figures}) + "\n")


def check_counted(gateway, args, classes, label):
    """Runs the tool and checks the gateway counted what it reported sending:
    every attack packet, plus the legitimate packets the gateway's defence
    dropped (sent but never echoed), within 1 % of the attack count."""
    before = settled_drops(gateway)
    result = flood(*args, "--json", "--quiet")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    sent = sum(summary["sent"][kind] for kind in classes)
    legit = summary["legitimate"]
    lost = legit["sent"] - legit["received"]
    counted = settled_drops(gateway) - before
    record(label, {"sent": sent, "legit_lost": lost, "gateway_counted": counted,
                   "per_class": summary["sent"]})
    assert sent > 0
    assert abs(counted - sent - lost) <= 0.01 * sent, (
        f"{label}: tool sent {sent} (+{lost} legitimate lost), gateway counted {counted}")
    return summary


@pytest.mark.parametrize("kind", CLASSES)
def test_gateway_counts_every_packet_of_each_class(gw, kind):
    if kind == "forged-spoofed" and os.geteuid() != 0:
        pytest.skip("forged-spoofed needs a raw socket (root)")
    summary = check_counted(gw, ["--whip", whip(gw), "--attack", kind, "--rate", str(RATE),
                                 "--duration", str(DURATION)], [kind], kind)
    # The rate asked for was the rate sent, give or take scheduling.
    assert summary["sent"][kind] >= 0.9 * RATE * DURATION
    assert summary["sent"][kind] <= RATE * DURATION + 64
    assert summary["sessions_connected"] == 1


@pytest.mark.parametrize("scheme,kind", [("prn", "forged-own"), ("prn", "replay"),
                                         ("prn", "forged-rtcp"), ("chain", "forged-own"),
                                         ("chain", "random-ssrc")])
def test_gateway_counts_every_packet_with_srtpplus(gw, scheme, kind):
    summary = check_counted(gw, ["--whip", whip(gw), "--srtpplus", scheme, "--attack", kind,
                                 "--rate", str(RATE), "--duration", str(DURATION)], [kind],
                            f"{kind} ({scheme})")
    assert [s["srtpplus"] for s in summary["sessions"]] == [scheme]
    # Tagged legitimate packets get through and come back.
    assert summary["legitimate"]["received"] > 0


def test_gateway_counts_a_mix(gw):
    mix = ["forged-own", "replay", "stun-flood", "malformed"]
    summary = check_counted(gw, ["--whip", whip(gw), "--sessions", "2", "--attack",
                                 "forged-own,replay:500,stun-flood,malformed:300",
                                 "--rate", "1000", "--duration", str(DURATION)], mix, "mix")
    assert summary["rate_pps"] == {"forged-own": 1000, "replay": 500, "stun-flood": 1000,
                                   "malformed": 300}
    assert summary["sent"]["malformed"] < summary["sent"]["stun-flood"]


def test_count_bounds_a_class_exactly(gw):
    before = gw.drops("malformed")
    started = time.time()
    result = flood("--target", f"127.0.0.1:{gw.media_port}", "--attack", "malformed",
                   "--count", "300", "--rate", "3000", "--duration", "60", "--json", "--quiet")
    assert result.returncode == 0, result.stderr
    assert time.time() - started < 10
    assert json.loads(result.stdout)["sent"] == {"malformed": 300}
    settled_drops(gw)
    assert gw.drops("malformed") - before == 300


def read_png(path):
    """Checks every chunk's CRC; returns width, height and the RGB rows."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, idat, header = 8, b"", None
    while offset < len(data):
        length, kind = struct.unpack("!I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        (crc,) = struct.unpack("!I", data[offset + 8 + length:offset + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        if kind == b"IHDR":
            header = struct.unpack("!IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
        if kind == b"IEND":
            break
    assert offset == len(data) and header is not None
    width, height, depth, color, _, _, interlace = header
    assert (depth, color, interlace) == (8, 2, 0)
    raw = zlib.decompress(idat)
    assert len(raw) == (width * 3 + 1) * height
    rows = []
    for y in range(height):
        row = raw[y * (width * 3 + 1):(y + 1) * (width * 3 + 1)]
        assert row[0] == 0  # filter: none
        rows.append(row[1:])
    return width, height, rows


def count_color(rows, color):
    target = bytes(color)
    return sum(row[i:i + 3] == target for row in rows for i in range(0, len(row), 3))


def test_json_csv_and_plot(gw, tmp_path):
    csv_path, png_path = tmp_path / "series.csv", tmp_path / "plot.png"
    result = flood("--whip", whip(gw), "--sessions", "2", "--media", "opus", "--attack",
                   "forged-own", "--rate", "300", "--ramp", "1", "--duration", "4",
                   "--csv", str(csv_path), "--plot", str(png_path), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert isinstance(summary["sent"]["forged-own"], int)
    assert summary["sent_total"] == summary["sent"]["forged-own"]
    assert len(summary["sessions"]) == 2
    for session in summary["sessions"]:
        assert session["state"] == "connected"
        assert 0.0 <= session["loss"] <= 1.0
        assert session["jitter_ms"] >= 0.0
        assert session["rtt_ms"] > 0.0
        assert session["rtt_min_ms"] <= session["rtt_ms"] <= session["rtt_max_ms"]
        assert session["received"] > 0 and session["sent"] >= session["received"]
    # The progress line and the human summary went to stderr.
    assert "attack" in result.stderr and "legit" in result.stderr
    assert "legitimate sessions (opus" in result.stderr

    lines = csv_path.read_text().splitlines()
    header = lines[0].split(",")
    assert header == ["time_s", "interval_s", "attack_target_pps", "attack_pps",
                      "forged-own_pps", "legit_sent", "legit_received", "loss_percent",
                      "rtt_ms", "jitter_ms"]
    rows = [dict(zip(header, line.split(","))) for line in lines[1:]]
    assert len(rows) == 4
    # The ramp: 300, 600, 900, 1200 pps targeted, and about that achieved.
    assert [float(r["attack_target_pps"]) for r in rows] == [300, 600, 900, 1200]
    for r in rows:
        assert abs(float(r["attack_pps"]) - float(r["attack_target_pps"])) <= 0.1 * float(
            r["attack_target_pps"]) + 5
        assert int(r["legit_sent"]) >= 90  # two opus sessions, 50 pps each
        assert float(r["rtt_ms"]) > 0

    width, height, pixels = read_png(png_path)
    assert (width, height) == (960, 560)
    assert count_color(pixels, LOSS_COLOR) > 100  # axis labels and the loss series
    assert count_color(pixels, RTT_COLOR) > 100


def wait_until_calm(gateway):
    """Until no worker's flood detector enforces: a baseline without attack
    must not inherit the defence a previous test switched on."""
    for _ in range(100):
        workers = json.loads(gateway.get("/api/stats"))["workers"]
        if not any(w["enforcing"] for w in workers):
            return
        time.sleep(0.1)
    raise AssertionError("the gateway kept enforcing for 10 s after the last flood")


@pytest.mark.parametrize("media", ["g711", "opus", "video"])
def test_each_media_kind_is_echoed(gw, media):
    wait_until_calm(gw)
    result = flood("--whip", whip(gw), "--media", media, "--duration", "2", "--json", "--quiet")
    assert result.returncode == 0, result.stderr
    session = json.loads(result.stdout)["sessions"][0]
    assert session["received"] >= 0.95 * session["sent"] > 0
    assert session["rtt_ms"] > 0
    assert session["rtcp_received"] > 0  # the gateway's reports reach the tool
    if media == "video":
        assert session["sent"] > 2 * 30  # 30 fps, several packets per keyframe


def test_reception_reports_give_the_gateway_an_rtt(gw):
    """moat-flood reports on what it receives as a browser does (a reception
    report block with LSR/DLSR in its SR each second): the gateway learns
    the round-trip time of its sessions, which sizes their retransmission
    caches (docs/MEMORY.md)."""
    wait_until_calm(gw)
    process = subprocess.Popen([str(FLOOD), "--whip", whip(gw), "--media", "video",
                                "--duration", "6", "--json", "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rtts = []
    while process.poll() is None and not rtts:
        transports = json.loads(gw.get("/api/stats"))["transports"]
        rtts = [t["rtt_ms"] for t in transports if t.get("rtt_ms") is not None]
        time.sleep(0.2)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr
    assert rtts and 0 < rtts[0] < 1000, "the gateway never learned an RTT"
    session = json.loads(stdout)["sessions"][0]
    assert session["sender_reports_received"] > 0  # the gateway's SRs on the echoes
    assert session["reception_reports"] > 0
    assert json.loads(stdout)["legitimate"]["reception_reports"] >= session["reception_reports"]


def wait_for_no_sessions(gateway):
    for _ in range(50):
        if json.loads(gateway.get("/api/sessions"))["sessions"] == []:
            return True
        time.sleep(0.1)
    return False


def test_sessions_hang_up_and_a_signal_ends_the_run(gw):
    process = subprocess.Popen([str(FLOOD), "--whip", whip(gw), "--sessions", "4",
                                "--attack", "random-ssrc", "--rate", "500", "--duration", "60",
                                "--json", "--quiet"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)
    assert len(json.loads(gw.get("/api/sessions"))["sessions"]) == 4
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=10)
    assert process.returncode == 0, stderr
    summary = json.loads(stdout)
    assert summary["interrupted"] is True
    assert summary["sessions_connected"] == 4
    assert summary["run_s"] < 10
    assert wait_for_no_sessions(gw)  # every WHIP resource was DELETEd


def test_remote_targets_are_refused():
    for args in (["--whip", "http://203.0.113.9:8088/whip/echo"],
                 ["--target", "198.51.100.7:3478", "--attack", "stun-flood"],
                 ["--target", "8.8.8.8:53", "--attack", "malformed"]):
        started = time.time()
        result = flood(*args, "--duration", "1")
        assert result.returncode == 2, (args, result.stderr)
        assert "--allow-remote" in result.stderr
        assert time.time() - started < 3


def test_remote_candidates_are_not_used():
    gateway = Gateway(extra_args=["--announced-address", "198.51.100.7"])
    try:
        offer_answer = flood("--whip", whip(gateway), "--duration", "1", "--json", "--quiet")
        assert offer_answer.returncode == 0, offer_answer.stderr
        summary = json.loads(offer_answer.stdout)
        assert summary["target"].startswith("127.0.0.1:")
        assert summary["sessions"][0]["received"] > 0
    finally:
        assert gateway.stop() == 0


def test_help_documents_every_option():
    source = (ROOT / "tools" / "moat-flood" / "flood_options.c").read_text()
    options = re.findall(r'\{"([a-z-]+)", (?:required|no)_argument', source)
    assert len(options) >= 20
    result = flood("--help")
    assert result.returncode == 0
    for option in options:
        assert f"--{option}" in result.stdout, option
    for kind in CLASSES:
        assert kind in result.stdout
    bad = flood("--attack", "nonsense", "--target", "127.0.0.1:9")
    assert bad.returncode == 2 and "unknown attack class" in bad.stderr
