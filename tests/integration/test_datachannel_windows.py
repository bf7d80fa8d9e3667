"""SCTP windows that grow with the path, paid for as they grow: over a link
with a 400 ms round trip (two network namespaces this test creates, the
gateway in one, aiortc peers in the other), a lone session's buffers grow
past the 1 MiB they start with, while several sessions together never hold
more than [limits] datachannel_total_mib. Every transfer comes back
byte-exact and in order, and nothing is lost when the peers hang up with
echoes still on their way. What grew is given back when sessions end.

Buffer sizes come from /api/stats (each transport's "datachannel" object),
the memory in use from /metrics (moat_datachannel_memory_bytes)."""
import json
import subprocess
import threading
import time

from conftest import ROOT, Gateway
from netns import NetnsPair
from test_datachannel_lossy import NetemLink, TunLink, netem_available

MIB = 1024 * 1024
DELAY_S = 0.200
TOTAL_MIB = 16
# What one association reserves up front: 1 MiB each way and reassembly.
BASE_BYTES = 3 * MIB
# 4 KiB messages: 4.9 MB alone (its windows pass 1 MiB within the first
# seconds), then 3.7 MB per session for three at once, 100 round trips and
# more of pressure on the total (aiortc's SCTP carries ~0.35 MB/s here).
ALONE_COUNT = 1200
TOGETHER_COUNT = 900


class StatsSampler:
    """Reads /api/stats and /metrics from the gateway's namespace until
    stopped: the largest buffers per transport and the most memory in use."""

    def __init__(self, gateway):
        self.gateway = gateway
        self.largest = {}  # transport id: (send, receive, reserved)
        self.most_memory = 0.0
        self.most_grown = 0  # growth of all transports together, one sample
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                stats = json.loads(self.gateway.get("/api/stats"))
                memory = self.gateway.metric("moat_datachannel_memory_bytes")
            except (OSError, ValueError, subprocess.TimeoutExpired):
                continue
            self.samples += 1
            self.most_memory = max(self.most_memory, memory)
            grown = 0
            for transport in stats["transports"]:
                dc = transport.get("datachannel")
                # Until the association is up, INIT's receive window is on
                # loan (sctp_window.c): growth is what comes after.
                if not dc or not dc["up"]:
                    continue
                grown += max(0, dc["reserved_bytes"] - BASE_BYTES)
                old = self.largest.get(transport["id"], (0, 0, 0))
                self.largest[transport["id"]] = (max(old[0], dc["send_buffer"]),
                                                 max(old[1], dc["receive_buffer"]),
                                                 max(old[2], dc["reserved_bytes"]))
            self.most_grown = max(self.most_grown, grown)
            self._stop.wait(0.2)

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=15)


def run_bulk(link, gateway, sessions, count, size, window):
    peer = subprocess.run(
        ["ip", "netns", "exec", link.client, str(ROOT / ".venv" / "bin" / "python"),
         str(ROOT / "tests" / "integration" / "datachannel_peer.py"), "bulk",
         "--url", gateway.base, "--sessions", str(sessions), "--count", str(count),
         "--size", str(size), "--window", str(window), "--timeout", "100"],
        capture_output=True, text=True, timeout=150)
    assert peer.returncode == 0, peer.stderr[-3000:]
    return json.loads(peer.stdout.strip().splitlines()[-1])


def assert_all_back(result, count):
    assert all(status == 200 for status in result["delete_statuses"]), result
    for session in result["sessions"]:
        assert session["sent"] == count, result
        # Every echo arrived before the channel reported closed, as sent.
        assert session["received_when_closed"] == count, result
        assert session["exact"], result


def wait_memory_back(gateway):
    deadline = time.monotonic() + 15
    while gateway.metric("moat_datachannel_memory_bytes") > 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    return gateway.metric("moat_datachannel_memory_bytes")


def test_windows_grow_alone_and_stay_within_the_total():
    link = NetemLink(DELAY_S, 0) if netem_available() else TunLink(DELAY_S, 0)
    gateway = None
    try:
        gateway = Gateway(netns=link.server, address=NetnsPair.SERVER, workers=1,
                          env={"MOAT_LIMITS_DATACHANNEL_TOTAL_MIB": str(TOTAL_MIB)})
        total = TOTAL_MIB * MIB
        assert gateway.metric("moat_datachannel_memory_limit_bytes") == total

        # One session alone: its windows grow past the 1 MiB they start with.
        sampler = StatsSampler(gateway)
        try:
            alone = run_bulk(link, gateway, sessions=1, count=ALONE_COUNT, size=4096, window=4 * MIB)
        finally:
            sampler.stop()
        summary = f"alone: largest {sampler.largest}, most memory {sampler.most_memory}"
        print(summary)
        assert_all_back(alone, ALONE_COUNT)
        assert sampler.samples > 0, summary
        assert len(sampler.largest) == 1, summary
        send, receive, reserved = next(iter(sampler.largest.values()))
        assert max(send, receive) > MIB, summary
        assert reserved > BASE_BYTES, summary
        assert sampler.most_memory <= total, summary
        # Its growth came back with it.
        assert wait_memory_back(gateway) == 0

        # Three at once: their base shares (9 MiB) leave them 3 MiB to grow
        # into together (growth stops a quarter short of the total, which
        # queues keep), and together they never hold more than the total.
        # Each sender stays within 512 KiB of its echoes, so the queues fit.
        sampler = StatsSampler(gateway)
        try:
            together = run_bulk(link, gateway, sessions=3, count=TOGETHER_COUNT, size=4096,
                                window=MIB // 2)
        finally:
            sampler.stop()
        summary = (f"together: largest {sampler.largest}, most memory {sampler.most_memory}, "
                   f"most grown {sampler.most_grown}")
        print(summary)
        assert_all_back(together, TOGETHER_COUNT)
        assert sampler.samples > 0, summary
        assert sampler.most_memory <= total, summary
        assert sampler.most_grown <= total - total // 4 - 3 * BASE_BYTES, summary
        assert wait_memory_back(gateway) == 0
        assert gateway.stop() == 0
    finally:
        if gateway and gateway.process.poll() is None:
            gateway.stop()
        link.close()
