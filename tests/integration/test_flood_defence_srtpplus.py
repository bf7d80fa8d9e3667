"""Flood defence with SRTP+ (moat-flood is the SRTP+ peer: it negotiates prn
or chain and tags what it sends): a forged flood on the call's own 5-tuple
and SSRC switches the detector on within 100 ms by the gateway's own clock,
the forgeries die at the tag check, the call keeps its media, and the
detector is off again within the hold time plus a second after the flood.
And a legitimate video call with keyframe bursts and jitter never switches
it on."""
import json
import subprocess
import time

import pytest

from conftest import ROOT, Gateway

FLOOD = ROOT / "build" / "tools" / "moat-flood"
HOLD_MS = 2000


@pytest.fixture
def gateway_one_worker():
    gw = Gateway(workers=1, extra_args=("--detector-hold-ms", str(HOLD_MS)))
    yield gw
    assert gw.stop() == 0


def poll_transport(gateway, process):
    """Samples the (single) transport every 100 ms while moat-flood runs."""
    samples = []
    while process.poll() is None:
        stats = json.loads(gateway.get("/api/stats"))
        if stats["transports"]:
            samples.append((time.monotonic(), stats["transports"][0]))
        time.sleep(0.1)
    return samples


@pytest.mark.parametrize("scheme", ["prn", "chain"])
def test_forged_flood_on_an_srtpplus_call(gateway_one_worker, scheme):
    gateway = gateway_one_worker
    process = subprocess.Popen(
        [str(FLOOD), "--whip", gateway.base + "/whip/echo", "--sessions", "1", "--media", "g711",
         "--srtpplus", scheme, "--attack", "forged-own", "--rate", "50000", "--attack-after", "2",
         # Forge where the next legitimate packets go: chain tags are known
         # there (beyond them, chain forgeries can only spend the budget).
         "--forge-ahead", "1:24",
         "--attack-for", "2.5", "--duration", "9", "--json", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = poll_transport(gateway, process)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    report = json.loads(out)
    session = report["sessions"][0]
    assert session["srtpplus"] == scheme
    forged = report["sent"]["forged-own"]
    assert forged > 30000

    assert samples, "no transport seen in /api/stats"
    transport = samples[-1][1]
    assert transport["srtpplus"] == scheme
    drops = transport["drops"]
    # Forgeries die at the tag check (a few land outside the index window).
    assert drops["tag"] > 0.5 * forged, drops
    assert drops["tag"] + drops["index"] + drops["auth"] >= 0.99 * forged, (drops, forged)
    assert drops["auth"] < 0.01 * forged, drops
    # Enforcing within 100 ms of the first forged packet, by the gateway's clock.
    detector = transport["detector"]
    assert detector["switches_on"] >= 1
    assert detector["detection_delay_ms"] < 100, detector
    # The legitimate call kept its media (at most 1 % lost under 50 kpps).
    print(f"{scheme}: forged {forged}, loss {session['loss']:.4f}, drops {drops}")
    assert session["loss"] <= 0.01, session
    assert session["received"] > 300
    # Off again within the hold time plus one second after the flood stopped:
    # the flood stopped at the last sample whose drop count still grew.
    def dropped(t):
        return sum(t["drops"].values())
    last_growth = max(i for i in range(1, len(samples))
                      if dropped(samples[i][1]) > dropped(samples[i - 1][1]))
    flood_stopped = samples[last_growth][0]
    off_at = next((when for when, t in samples[last_growth:] if not t["enforcing"]), None)
    assert off_at is not None, "the detector stayed on"
    # The snapshot is up to 0.5 s old and sampled every 0.1 s.
    assert off_at - flood_stopped <= HOLD_MS / 1000 + 1.0 + 0.6, off_at - flood_stopped
    assert detector["switches_off"] >= 1 or not samples[-1][1]["enforcing"]


def test_video_with_keyframe_bursts_and_jitter_is_no_anomaly(gateway_one_worker):
    gateway = gateway_one_worker
    result = subprocess.run(
        [str(FLOOD), "--whip", gateway.base + "/whip/echo", "--sessions", "3", "--media", "video",
         "--jitter", "10", "--duration", "10", "--json", "--quiet"],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert all(s["received"] > 200 and s["loss"] == 0 for s in report["sessions"]), report["sessions"]
    m = gateway.metrics()
    assert m["moat_rtp_packets_received_total"] > 900
    assert m["moat_detector_switches_on_total"] == 0
    assert m["moat_detector_worker_switches_on_total"] == 0
    assert m['moat_dropped_packets_total{reason="budget"}'] == 0
