"""A DTLS peer whose certificate does not match the fingerprint in its SDP is
refused: the handshake fails, no media flows, the session is closed."""
import asyncio
import re
import time

from aiortc import RTCPeerConnection

from aiortc_peer import ToneTrack, whip_publish


def wrong_fingerprint(sdp):
    def flip(match):
        value = match.group(2)
        first = "00" if not value.startswith("00") else "11"
        return match.group(1) + first + value[2:]
    return re.sub(r"(a=fingerprint:sha-256 )(\S+)", flip, sdp)


def test_mismatched_fingerprint_is_refused(gateway):
    async def call():
        pc = RTCPeerConnection()
        pc.addTrack(ToneTrack())
        await whip_publish(pc, gateway.base + "/whip/echo", mangle_offer=wrong_fingerprint)
        deadline = time.time() + 10
        while time.time() < deadline and gateway.metric("moat_dtls_handshake_failures_total") < 1:
            await asyncio.sleep(0.2)
        await asyncio.sleep(1)
        await pc.close()

    asyncio.run(call())
    m = gateway.metrics()
    assert m["moat_dtls_handshake_failures_total"] >= 1
    assert m["moat_dtls_handshakes_total"] == 0
    assert m["moat_rtp_packets_received_total"] == 0
    assert "fingerprint" in gateway.log_text()
    deadline = time.time() + 5
    while time.time() < deadline and gateway.metric("moat_sessions") != 0:
        time.sleep(0.2)
    assert gateway.metric("moat_sessions") == 0
