"""RTCP and ICE consent against aiortc: NACKs for echoed packets are
answered from the gateway's retransmission cache, the gateway sends
receiver/sender reports, and a peer that vanishes without a word is closed
once consent expires (RFC 7675)."""
import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time

import pylibsrtp
import pytest
from aiortc.rtcdtlstransport import RTCDtlsTransport

from aiortc_peer import echo_call
from conftest import Gateway


class LossyUnprotect:
    """Stands in front of aiortc's SRTP receive context and loses a few
    video packets there, before SRTP's replay window sees them, as a lossy
    path would; their retransmissions must then decrypt."""

    def __init__(self, session, dropped, recovered):
        self.session, self.dropped, self.recovered = session, dropped, recovered

    media_ssrc = None  # the first video stream seen; RTX comes later, on its own

    def unprotect(self, data):
        if len(data) >= 12 and 96 <= (data[1] & 0x7F) <= 127:
            key = (int.from_bytes(data[8:12], "big"), int.from_bytes(data[2:4], "big"))
            if self.media_ssrc is None:
                self.media_ssrc = key[0]
            if key[0] == self.media_ssrc and key[1] % 25 == 3 and key not in self.dropped:
                self.dropped.add(key)
                raise pylibsrtp.Error("lost on the path (test)")
            if key in self.dropped:
                plain = self.session.unprotect(data)
                self.recovered.add(key)
                return plain
            plain = self.session.unprotect(data)
            self.note_rtx(key[0], plain)
            return plain
        return self.session.unprotect(data)

    def note_rtx(self, ssrc, plain):
        """A retransmission on the RTX stream (RFC 4588, negotiated with
        aiortc): its payload opens with the original sequence number."""
        if ssrc == self.media_ssrc or len(plain) < 14:
            return
        offset = 12 + 4 * (plain[0] & 0x0F)
        if plain[0] & 0x10 and len(plain) >= offset + 4:
            offset += 4 + 4 * int.from_bytes(plain[offset + 2:offset + 4], "big")
        if len(plain) < offset + 2:
            return
        original = (self.media_ssrc, int.from_bytes(plain[offset:offset + 2], "big"))
        if original in self.dropped:
            self.recovered.add(original)

    def unprotect_rtcp(self, data):
        return self.session.unprotect_rtcp(data)


def test_nacks_are_answered_from_the_retransmission_cache(gateway, monkeypatch):
    original = RTCDtlsTransport._recv_next
    dropped, recovered = set(), set()

    async def recv_next(self):
        rx = getattr(self, "_rx_srtp", None)
        if rx is not None and not isinstance(rx, LossyUnprotect):
            self._rx_srtp = LossyUnprotect(rx, dropped, recovered)
        return await original(self)

    monkeypatch.setattr(RTCDtlsTransport, "_recv_next", recv_next)
    result = asyncio.run(echo_call(gateway.base, seconds=5, audio=False, video=True))
    assert result["recorders"]["video"].frames > 30
    assert len(dropped) >= 5
    retransmitted = gateway.metric("moat_nack_retransmissions_total")
    assert retransmitted >= 0.8 * len(dropped), (retransmitted, len(dropped))
    # The retransmissions (on the RTX stream, or as the packet itself when
    # RTX is not negotiated) decrypt: the cache kept the right packets.
    assert len(recovered) >= 0.8 * len(dropped), (len(recovered), len(dropped))
    # Reports flow both ways.
    assert gateway.metric("moat_rtcp_packets_sent_total") >= 4
    assert gateway.metric("moat_rtcp_packets_received_total") >= 4


PEER = textwrap.dedent("""
    import asyncio, sys, time
    sys.path.insert(0, sys.argv[2])
    from aiortc import RTCPeerConnection
    from aiortc_peer import ToneTrack, whip_publish
    async def main():
        pc = RTCPeerConnection()
        pc.addTrack(ToneTrack())
        await whip_publish(pc, sys.argv[1] + "/whip/echo")
        while pc.connectionState != "connected":
            await asyncio.sleep(0.05)
        print("connected", flush=True)
        await asyncio.sleep(3600)
    asyncio.run(main())
""")


def test_a_vanished_peer_is_closed_when_consent_expires():
    gateway = Gateway(workers=1, extra_args=("--consent-timeout", "5"))
    try:
        peer = subprocess.Popen([sys.executable, "-c", PEER, gateway.base, os.path.dirname(__file__)],
                                stdout=subprocess.PIPE, text=True)
        assert peer.stdout.readline().strip() == "connected"
        time.sleep(1)
        assert gateway.metric("moat_sessions") == 1
        # Gone without a DTLS close_notify, a WHIP DELETE or another check.
        peer.send_signal(signal.SIGKILL)
        peer.wait()
        killed = time.monotonic()
        while time.monotonic() - killed < 12 and gateway.metric("moat_sessions") != 0:
            time.sleep(0.2)
        closed_after = time.monotonic() - killed
        assert gateway.metric("moat_sessions") == 0
        assert gateway.metric("moat_consent_expired_total") == 1
        # Not before the timeout: the peer's last check came at most one
        # consent interval (RFC 7675: 4 to 6 s, aioice's jitter) before the
        # kill, so the session lives on for a good part of the 5 s after it.
        assert 2.5 <= closed_after <= 7.5, closed_after
        assert "consent expired" in gateway.log_text()
    finally:
        assert gateway.stop() == 0
