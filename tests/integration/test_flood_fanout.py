"""moat-flood's fan-out mode (--subscribers): one paced publisher and N
subscribers that decrypt and count what they receive. Through Moat's room
plugin (WHIP /whip/room/<room>, WHEP /whep/room/<room>) on loopback, and
through Debian's Janus videoroom in a network namespace (Janus offers to
each subscriber, which answers). Each run is short and bounded; the
figures are counts, not timings."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, Gateway
from netns import NetnsPair

FLOOD = ROOT / "build" / "tools" / "moat-flood"
SUBSCRIBERS = 4
DURATION = 2.0

sys.path.insert(0, str(ROOT / "bench" / "sfu"))
import sfu  # noqa: E402  (the Janus configuration the benchmark uses)


def fan_out(*args, netns=None, timeout=90):
    command = [str(FLOOD), *args, "--subscribers", str(SUBSCRIBERS), "--duration",
               str(DURATION), "--json", "--quiet"]
    if netns is not None:
        command = ["ip", "netns", "exec", netns, *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def check_every_subscriber_received(result):
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["subscribers"] == SUBSCRIBERS
    assert report["connected"] == SUBSCRIBERS, report["first_failure"]
    # 150 video and 50 audio packets a second for DURATION seconds.
    assert report["published"] >= 0.5 * 200 * DURATION
    for subscriber in report["per_subscriber"]:
        assert subscriber["state"] == "connected"
        assert subscriber["unprotect_failures"] == 0
        # Both streams reached every subscriber, decrypted.
        assert subscriber["received"] >= 0.5 * report["published"], subscriber
    assert report["loss_max"] < 0.5
    return report


def test_fan_out_through_moat_rooms():
    gateway = Gateway(workers=1)
    try:
        result = fan_out("--whip", gateway.base + "/whip/room/fanout",
                         "--whep", gateway.base + "/whep/room/fanout")
        check_every_subscriber_received(result)
        # The relay saw the subscribers and forwarded to them.
        assert gateway.metric("moat_rtp_packets_sent_total") >= SUBSCRIBERS * 100
    finally:
        assert gateway.stop() == 0


def test_fan_out_across_workers_through_moat_rooms():
    """Every subscriber on worker 1, the publisher on worker 0: each packet
    crosses the relay (one ring slot per packet for all of them)."""
    gateway = Gateway(workers=2)
    try:
        body = json.dumps({"name": "fanout-far", "publisher_worker": 0,
                           "subscriber_worker": 1}).encode()
        request = urllib.request.Request(gateway.base + "/api/rooms", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as reply:
            assert reply.status == 201
        result = fan_out("--whip", gateway.base + "/whip/room/fanout-far",
                         "--whep", gateway.base + "/whep/room/fanout-far")
        report = check_every_subscriber_received(result)
        metrics = gateway.metrics()
        assert metrics["moat_relay_delivered_packets_total"] >= 0.5 * SUBSCRIBERS * report[
            "published"]
        for reason in ("ring_full", "pool_empty", "too_big"):
            assert metrics[f'moat_relay_dropped_packets_total{{reason="{reason}"}}'] == 0
    finally:
        assert gateway.stop() == 0


def test_fan_out_option_combinations_are_refused():
    for args in (["--whep", "http://127.0.0.1:1/whep/room/x"],
                 ["--subscribers", "2", "--whip", "http://127.0.0.1:1/whip/room/x"],
                 ["--subscribers", "2", "--janus", "http://127.0.0.1:1/janus",
                  "--whip", "http://127.0.0.1:1/whip/room/x"],
                 ["--subscribers", "0", "--janus", "http://127.0.0.1:1/janus"],
                 ["--subscribers", "2", "--janus", "http://127.0.0.1:1/janus",
                  "--attack", "stun-flood"]):
        result = subprocess.run([str(FLOOD), *args], capture_output=True, text=True, timeout=10)
        assert result.returncode == 2, (args, result.stderr)


def test_fan_out_to_a_remote_whep_is_refused():
    result = subprocess.run([str(FLOOD), "--whip", "http://192.0.2.1/whip/room/x", "--whep",
                             "http://192.0.2.1/whep/room/x", "--subscribers", "1"],
                            capture_output=True, text=True, timeout=10)
    assert result.returncode == 2, result.stderr


@pytest.mark.skipif(shutil.which("janus") is None or os.geteuid() != 0,
                    reason="needs Debian's janus and root for a network namespace")
def test_fan_out_through_janus_videoroom():
    pair = NetnsPair()
    folder = Path(tempfile.mkdtemp(prefix="fanout-janus-"))
    sfu.write_janus_config(folder)
    janus = subprocess.Popen(["ip", "netns", "exec", pair.server, "janus", "-C",
                              str(folder / "janus.jcfg"), "-F", str(folder)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://{NetnsPair.SERVER}:8088/janus"
    try:
        deadline = time.monotonic() + 20
        while True:
            probe = subprocess.run(["ip", "netns", "exec", pair.client, "curl", "-sf", "-m", "2",
                                    base + "/info"], capture_output=True)
            if probe.returncode == 0:
                break
            assert time.monotonic() < deadline, "Janus did not come up"
            time.sleep(0.3)
        # 198.18.0.0/15 (RFC 2544) is outside the tool's default target
        # policy; it is the namespace pair this test made.
        check_every_subscriber_received(fan_out("--janus", base, "--allow-remote",
                                                netns=pair.client))
    finally:
        sfu.stop(janus)
        shutil.rmtree(folder, ignore_errors=True)
        pair.close()
