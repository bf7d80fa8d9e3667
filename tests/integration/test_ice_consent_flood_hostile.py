"""Forged ICE checks cannot starve a peer's authenticated ones.

USERNAME travels in clear, so anyone who saw one check knows both ufrags
and can send checks the session must look at, from any address: the
peer's own (spoofed) included. Sessions used to charge every check to a
per-session budget before its MESSAGE-INTEGRITY was checked (50/s for pairs
already checked, 100/s for new sources): some hundred forged checks a second
from the peer's tuple emptied it, the peer's consent checks were refused as
`stun_rate`, and the session ended "consent expired"; from the forger's own
address, the budget for new sources, which a moving peer or an ICE restart
needs.

Now a check's MESSAGE-INTEGRITY is checked first (one HMAC); a forged one
is a `stun_auth` drop and spends nothing, so the budgets are left to checks
that authenticate. Here an aiortc peer keeps its session (and its audio)
through 18 s of forged checks from its own tuple and from another address,
with consent expiring after 8 s, and a check it sends from a new address
mid-flood is answered."""
import asyncio
import re
import socket
import threading
import time

import pytest

from conftest import Gateway
from spoof import udp_datagram
from stun_check import binding_request
from test_flood_defence_legacy import audio_loss, nominated_pair, start_call

pytestmark = pytest.mark.hostile

RATE = 2000  # forged checks per second from each of two sources (~200 KB/s each)
FLOOD_S = 18
CONSENT_S = 8


@pytest.fixture
def gateway():
    gw = Gateway(workers=1, extra_args=["--consent-timeout", str(CONSENT_S)])
    yield gw
    assert gw.stop() == 0


async def answered(sock, request, address, tries=3):
    """Whether a check sent (and re-sent, as an agent would) draws a STUN
    success answer."""
    sock.setblocking(False)
    for _ in range(tries):
        sock.sendto(request, address)
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            try:
                data = sock.recv(2048)
            except BlockingIOError:
                await asyncio.sleep(0.01)
                continue
            if len(data) >= 20 and data[:2] == b"\x01\x01":
                return True
    return False


class Flood(threading.Thread):
    """RATE forged checks a second from each source, evenly paced (a burst
    now and then would leave the budgets gaps to refill in)."""

    def __init__(self, spoofed, forged, host, port):
        super().__init__(daemon=True)
        self.spoofed, self.forged, self.address = spoofed, forged, (host, port)
        self.stop = threading.Event()
        self.sent = 0

    def run(self):
        raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        raw.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
        own = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        own.bind(("127.0.0.1", 0))
        start = time.monotonic()
        try:
            while not self.stop.is_set() and time.monotonic() - start < FLOOD_S + 5:
                while self.sent < (time.monotonic() - start) * RATE:
                    raw.sendto(self.spoofed, (self.address[0], 0))  # from the peer's tuple
                    own.sendto(self.forged, self.address)           # from the forger's own
                    self.sent += 1
                time.sleep(0.0002)
        finally:
            raw.close()
            own.close()


def test_forged_checks_do_not_end_the_session(gateway):
    async def run():
        pc, _, _, recorders = await start_call(gateway.base)
        assert pc.connectionState == "connected"
        peer_host, peer_port, host, port = nominated_pair(pc)
        gateway_ufrag = re.search(r"a=ice-ufrag:(\S+)", pc.remoteDescription.sdp).group(1)
        gateway_pwd = re.search(r"a=ice-pwd:(\S+)", pc.remoteDescription.sdp).group(1)
        peer_ufrag = re.search(r"a=ice-ufrag:(\S+)", pc.localDescription.sdp).group(1)
        await asyncio.sleep(1)
        before = gateway.metrics()
        # Right USERNAME, MESSAGE-INTEGRITY made with a wrong password.
        forged = binding_request(gateway_ufrag, peer_ufrag, "not-the-gateway-password")
        flood = Flood(udp_datagram(peer_host, peer_port, host, port, forged), forged, host, port)
        moved = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        moved.bind(("127.0.0.1", 0))
        frames = recorders["audio"].frames
        move_answered, ended_at = None, None
        start = time.monotonic()
        flood.start()
        try:
            while (elapsed := time.monotonic() - start) < FLOOD_S:
                if move_answered is None and elapsed > FLOOD_S / 2:
                    # The peer at a new address (a network change): its
                    # check, with the real password, makes a pair.
                    move_answered = await answered(
                        moved, binding_request(gateway_ufrag, peer_ufrag, gateway_pwd),
                        (host, port))
                if ended_at is None and gateway.metric("moat_sessions") == 0:
                    ended_at = elapsed
                await asyncio.sleep(0.1)
        finally:
            flood.stop.set()
            flood.join()
            moved.close()
        sent = flood.sent
        after = gateway.metrics()

        def grew(name):
            return after.get(name, 0.0) - before.get(name, 0.0)

        auth = grew('moat_dropped_packets_total{reason="stun_auth"}')
        rate = grew('moat_dropped_packets_total{reason="stun_rate"}')
        print(f"{sent} forged checks from each source; session ended at {ended_at}; "
              f"stun_auth +{auth:.0f}, stun_rate +{rate:.0f}")
        assert ended_at is None, f"the session ended after {ended_at:.1f} s of forged checks"
        assert grew("moat_consent_expired_total") == 0
        # Each forged check was refused by its integrity, no genuine one by
        # a budget.
        assert auth >= 2 * sent * 0.95
        assert rate == 0
        assert move_answered, "the peer's check from a new address was not answered"
        # The audio went on (50 frames a second).
        assert recorders["audio"].frames - frames > FLOOD_S * 50 * 0.8
        loss, _ = await audio_loss(pc)
        assert loss < 0.05, loss
        assert pc.connectionState == "connected"
        await pc.close()

    asyncio.run(run())
