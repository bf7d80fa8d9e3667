"""Path MTU discovery (RFC 8899) on the gateway's SCTP associations, with
aiortc peers: the gateway's HEARTBEAT + PAD probes are answered by the
peer's SCTP, the packet size found is reported in /api/stats (each
transport's "datachannel" object, "pmtu"), and echoed data stays byte-exact.

On loopback the size is bounded by [datachannel] max_packet, 1500 by
default (aiortc reads each DTLS record into 1500 bytes, and a larger one
leaves it a record behind for good: test_datachannel_hostile, whose
single echoes would then wait for the next datagram, runs with the
defaults). Over a TUN link whose devices have a 1400-byte MTU (two network
namespaces this test creates) it is bounded by the link: datagrams above it
are refused by the kernel (IP_PMTUDISC_PROBE), never fragmented. Both must
find more than the 1200 bytes every association starts with, and with
[datachannel] plpmtud = false the size stays 1200."""
import asyncio
import json
import subprocess
import threading
import time

import pytest

from conftest import ROOT, Gateway
from datachannel_peer import DataChannelPeer, bulk_message
from netns import NetnsPair
from test_datachannel_lossy import TunLink

BASE = 1200
# IPv4 (20) + UDP (8) + a DTLS 1.2 AES-GCM record's header, nonce and tag (37).
LINK_OVERHEAD = 20 + 8 + 37


class PmtuSampler:
    """Reads /api/stats until stopped: every data channel's "pmtu" object,
    the last one seen per transport, and the largest size seen."""

    def __init__(self, gateway):
        self.gateway = gateway
        self.last = {}
        self.largest = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def sample(self):
        try:
            stats = json.loads(self.gateway.get("/api/stats"))
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return
        for transport in stats["transports"]:
            dc = transport.get("datachannel")
            if dc and dc.get("up"):
                self.last[transport["id"]] = dc["pmtu"]
                self.largest = max(self.largest, dc["pmtu"]["packet_size"])

    def _run(self):
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(0.2)

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=15)

    def wait_complete(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.last and all(p["state"] in ("search_complete", "off")
                                 for p in self.last.values()):
                return True
            time.sleep(0.2)
        return False


def echo_exact(gateway, count=80, wait_s=25):
    """One aiortc peer on /whip/echo: waits for the search to end, then
    sends count messages of up to 60 KB and checks every echo."""
    sampler = PmtuSampler(gateway)

    async def scenario():
        peer = await DataChannelPeer(gateway.base, [{"label": "pmtu"}]).connect()
        channel = peer.channels[0]
        loop = asyncio.get_running_loop()
        complete = await loop.run_in_executor(None, sampler.wait_complete, wait_s)
        messages = [bulk_message(0, i, 16 + (i * 7919) % 60000) for i in range(count)]
        await channel.send_paced(messages, time.monotonic() + 30, window_bytes=1024 * 1024)
        deadline = time.monotonic() + 30
        while len(channel.received) < count and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        sampler.sample()
        status = await peer.delete()
        await peer.close()
        return complete, channel.received == messages, len(channel.received), status

    try:
        complete, exact, received, status = asyncio.run(scenario())
    finally:
        sampler.stop()
    return sampler, complete, exact, received, status


def test_aiortc_loopback_discovers_a_larger_packet(gateway):
    sampler, complete, exact, received, status = echo_exact(gateway)
    summary = f"pmtu {sampler.last}, largest {sampler.largest}"
    print(summary)
    assert status == 200
    assert exact, f"{received} echoes, not byte-exact; {summary}"
    assert complete, summary
    (pmtu,) = sampler.last.values()
    assert pmtu["discovery"] is True
    assert pmtu["state"] == "search_complete"
    assert pmtu["probes_acked"] >= 1
    # Larger than the base, within max_packet (what aiortc reads).
    assert BASE < pmtu["packet_size"] <= 1500, summary
    assert pmtu["max_packet"] == 1500
    assert pmtu["black_holes"] == 0
    # /metrics counts it once the session has ended.
    deadline = time.monotonic() + 10
    while gateway.metric("moat_datachannel_pmtu_raised_total") < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    m = gateway.metrics()
    assert m["moat_datachannel_pmtu_raised_total"] == 1
    assert m["moat_datachannel_pmtu_probes_acked_total"] == pmtu["probes_acked"]
    assert m["moat_datachannel_pmtu_probes_sent_total"] == pmtu["probes_sent"]
    assert m["moat_datachannel_pmtu_black_holes_total"] == 0


def test_discovery_off_keeps_the_base():
    gateway = Gateway(extra_args=["--plpmtud", "false"])
    try:
        sampler, complete, exact, received, status = echo_exact(gateway, count=20, wait_s=3)
    finally:
        gateway.stop()
    assert exact and status == 200
    (pmtu,) = sampler.last.values()
    assert pmtu["discovery"] is False and pmtu["state"] == "off"
    assert pmtu["packet_size"] == BASE
    assert pmtu["probes_sent"] == 0


@pytest.mark.parametrize("mtu", [1400, 1500])
def test_tun_link_mtu_bounds_the_packet(mtu):
    """max_packet 16384: only the link (and the worker's buffers) bound it."""
    link = TunLink(0.0035, 0, mtu=mtu)
    gateway = None
    try:
        gateway = Gateway(netns=link.server, address=NetnsPair.SERVER, workers=1,
                          extra_args=["--datachannel-max-packet", "16384"])
        sampler = PmtuSampler(gateway)
        try:
            peer = subprocess.run(
                ["ip", "netns", "exec", link.client, "env", f"MOAT_API_TOKEN={gateway.token or ''}",
                 str(ROOT / ".venv" / "bin" / "python"),
                 str(ROOT / "tests" / "integration" / "datachannel_peer.py"), "bulk",
                 "--url", gateway.base, "--count", "1500", "--size", "4096",
                 "--window", str(1024 * 1024), "--timeout", "90", "--wait-pmtu", "30"],
                capture_output=True, text=True, timeout=150)
        finally:
            sampler.stop()
        assert peer.returncode == 0, peer.stderr[-3000:]
        result = json.loads(peer.stdout.strip().splitlines()[-1])
        summary = f"pmtu {sampler.last}, largest {sampler.largest}, result {result}"
        print(summary)
        (session,) = result["sessions"]
        assert session["exact"] and session["received_when_closed"] == 1500, summary
        (pmtu,) = sampler.last.values()
        assert pmtu["state"] == "search_complete", summary
        # Above the base, within what the link carries, and not far below.
        assert BASE < pmtu["packet_size"] <= mtu - LINK_OVERHEAD, summary
        assert pmtu["packet_size"] > mtu - LINK_OVERHEAD - 20, summary
        assert sampler.largest <= mtu - LINK_OVERHEAD, summary
        assert pmtu["probes_lost"] > 0, summary
        assert pmtu["black_holes"] == 0, summary
    finally:
        if gateway:
            gateway.stop()
        link.close()
