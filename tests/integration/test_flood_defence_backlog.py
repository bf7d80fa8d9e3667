"""A defence must never make things worse than no defence (issue 9): a room
publisher's authenticated, in-rate stream must reach the relay whole when
the gateway falls behind because of other sessions' legitimate load, and
the flood defence must not switch on for it.

The SFU benchmark showed the shape: with hundreds of WHEP subscribers on one
worker, the worker's socket queue backs up, the publisher's packets are read
late in one burst, and the transport detector took that burst for a flood
(ingress_rate) and enforced against the publisher. Here the backlog is made
on purpose and bounded: moat-flood publishes to a room with SUBSCRIBERS
subscribers while the gateway is stopped (SIGSTOP) for STALL_S seconds, so
about 200 pps x STALL_S of the publisher's packets wait in the kernel queue
and are drained in one wake-up. Every packet moat-flood published must then
be received by Moat or counted as a drop, with no drop and no detector
switch-on. Counts, not timings."""
import json
import signal
import subprocess
import threading
import time

from conftest import ROOT, Gateway

FLOOD = ROOT / "build" / "tools" / "moat-flood"
SUBSCRIBERS = 100
DURATION = 6.0
STALL_AFTER_S = 2.0
STALL_S = 1.5


def settled(gateway, name, timeout=10.0):
    """The counter once it stopped moving (the worker drained its queue)."""
    value, deadline = -1.0, time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = gateway.metric(name)
        if now == value:
            break
        value = now
    return value


def stall_once_media_flows(gateway, before, done):
    """SIGSTOP the gateway STALL_AFTER_S after the publisher's media started
    (the relay counts its packets), for STALL_S seconds."""
    deadline = time.monotonic() + 120
    while not done.is_set() and time.monotonic() < deadline:
        if gateway.metric("moat_rtp_packets_received_total") > before + 50:
            break
        time.sleep(0.1)
    if done.is_set():
        return
    time.sleep(STALL_AFTER_S)
    gateway.process.send_signal(signal.SIGSTOP)
    time.sleep(STALL_S)
    gateway.process.send_signal(signal.SIGCONT)


def test_publisher_survives_a_gateway_backlog_with_many_subscribers():
    # One host sets up 100 subscribers at once: a load test, so the
    # per-source cap on sessions still waiting for ICE is lifted.
    gateway = Gateway(extra_args=("--max-pending-per-source", "0"), workers=1)
    done = threading.Event()
    staller = None
    try:
        before = gateway.metric("moat_rtp_packets_received_total")
        staller = threading.Thread(target=stall_once_media_flows, args=(gateway, before, done))
        staller.start()
        result = subprocess.run(
            [str(FLOOD), "--whip", gateway.base + "/whip/room/backlog", "--whep",
             gateway.base + "/whep/room/backlog", "--subscribers", str(SUBSCRIBERS),
             "--duration", str(DURATION), "--setup-timeout", "60", "--json", "--quiet"],
            capture_output=True, text=True, timeout=150)
        done.set()
        staller.join()
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["connected"] == SUBSCRIBERS, report["first_failure"]
        published = report["published"]
        assert published >= 0.5 * 200 * DURATION
        received = settled(gateway, "moat_rtp_packets_received_total") - before
        metrics = gateway.metrics()
        drops = {k: v for k, v in metrics.items()
                 if k.startswith("moat_dropped_packets_total") and v}
        # The stall did make a burst: more than the rate test's threshold
        # (4 x the declared 480 pps over 100 ms) waited in the queue.
        assert 200 * STALL_S > 0.1 * 4 * 480
        # No defence reaction to legitimate load ...
        assert metrics.get("moat_detector_switches_on_total", 0) == 0, drops
        assert metrics.get("moat_detector_worker_switches_on_total", 0) == 0, drops
        # ... and every published packet reached the relay.
        assert received == published, (received, published, drops)
    finally:
        done.set()
        if staller:
            staller.join()
        gateway.process.send_signal(signal.SIGCONT)
        assert gateway.stop() == 0
