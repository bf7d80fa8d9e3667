"""WebRTC to SIP through the ng protocol: an aiortc peer is the caller (its
offer is UDP/TLS/RTP/SAVPF with ICE and a fingerprint, as a SIP-over-
WebSocket client's) and a PCMU phone (a UDP socket) answers. The test
drives offer/answer as Kamailio would: the offer towards the phone with
transport-protocol RTP/AVP, ICE remove, DTLS off, codec-transcode PCMU; the
answer back with ICE force, DTLS passive, UDP/TLS/RTP/SAVPF. Moat's WebRTC
leg is a core session (ICE-lite, DTLS-SRTP); its Opus crosses the
transcoder to PCMU and back. aiortc sends 440 Hz, the phone 660 Hz; each
must hear the other's tone. Hostile WebRTC offers get an error reply. The
reverse direction (a phone calls a WebRTC client) is in
test_voip_webrtc_callee.py."""
import asyncio
import re
import socket
import threading
import time

import numpy as np
import pytest
from aiortc import RTCPeerConnection, RTCRtpSender, RTCSessionDescription

from aiortc_peer import Recorder, ToneTrack
from conftest import Gateway, free_port
from ng_client import NgClient
from test_voip_transcode import (frequency, rtp, sdp_port, tone, udp, ulaw_decode, ulaw_encode,
                                 voip)  # noqa: F401 (fixture)

SECONDS = 6


def phone_answer(port):
    return ("v=0\r\no=- 7 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=sendrecv\r\n")


def run_phone(sock, moat_port, received, stop):
    """660 Hz PCMU every 20 ms to Moat; keeps what comes back."""
    n, start = 0, time.monotonic()
    while not stop.is_set():
        pcm = tone(660, 8000, n * 160, 160)
        sock.sendto(rtp(0, n, n * 160, 0x5150, bytes(ulaw_encode(s) for s in pcm)),
                    ("127.0.0.1", moat_port))
        n += 1
        until = start + n * 0.02
        while time.monotonic() < until:
            try:
                received.append(sock.recvfrom(2048)[0])
            except socket.timeout:
                pass


async def webrtc_offer(opus_only=True):
    """aiortc's offer: Opus only, or its defaults (Opus, PCMU, PCMA), as a
    browser offers G.711 too."""
    pc = RTCPeerConnection()
    transceiver = pc.addTransceiver(ToneTrack(440.0), direction="sendrecv")
    if opus_only:
        transceiver.setCodecPreferences([c for c in RTCRtpSender.getCapabilities("audio").codecs
                                         if c.mimeType == "audio/opus"])
    tracks = []
    pc.on("track", lambda track: tracks.append(Recorder(track)))
    await pc.setLocalDescription(await pc.createOffer())
    return pc, tracks


def call(client, call_id, sdp):
    offer = client.command("offer", call_id=call_id, from_tag="webrtc", sdp=sdp,
                           transport_protocol="RTP/AVP", ICE="remove", DTLS="off",
                           codec={"transcode": ["PCMU"]}, replace=["origin"])
    return offer


@pytest.mark.parametrize("opus_only", [True, False], ids=["opus-offer", "opus-pcmu-offer"])
def test_webrtc_caller_to_pcmu_phone(voip, opus_only):
    """With PCMU in aiortc's offer too, Moat's answer still names only the
    codec aiortc will send (Opus, its first), and the call transcodes."""
    check_call(*voip, opus_only)


def test_ringing_longer_than_the_ice_timeout():
    """The session starts at the answer, when aiortc gets Moat's answer:
    ringing longer than [limits] pending_timeout_s does not end it."""
    media_min = free_port(socket.SOCK_DGRAM, 40)
    media_min += media_min & 1
    ng_port = free_port(socket.SOCK_DGRAM)
    gw = Gateway(extra_args=["--call-allow-loopback-destinations",
                             "--ng-port", str(ng_port), "--media-port-min", str(media_min),
                             "--media-port-max", str(media_min + 37),
                             "--announced-address", "127.0.0.1", "--pending-timeout", "1"])
    ring = NgClient(ng_port)
    try:
        check_call(gw, ring, True, ring_seconds=2.5)
    finally:
        ring.close()
        assert gw.stop() == 0, f"moat exited badly; log in {gw.log_path}"


def check_call(gw, client, opus_only, ring_seconds=0.0):
    phone = udp()

    async def scenario():
        pc, tracks = await webrtc_offer(opus_only)
        offer = call(client, "wr-1", pc.localDescription.sdp)
        assert offer["result"] == "ok", offer
        await asyncio.sleep(ring_seconds)
        # The phone sees plain RTP/AVP with PCMU, nothing of ICE or DTLS.
        assert re.search(r"^m=audio \d+ RTP/AVP .*\b0\b", offer["sdp"], re.M), offer["sdp"]
        for absent in ("a=fingerprint", "a=ice-ufrag", "a=candidate", "a=setup", "TLS"):
            assert absent not in offer["sdp"], offer["sdp"]
        answer = client.command("answer", call_id="wr-1", from_tag="webrtc", to_tag="phone",
                                sdp=phone_answer(phone.getsockname()[1]), ICE="force",
                                DTLS="passive", transport_protocol="UDP/TLS/RTP/SAVPF")
        assert answer["result"] == "ok", answer
        sdp = answer["sdp"]
        assert "UDP/TLS/RTP/SAVPF" in sdp and "a=fingerprint:sha-256" in sdp, sdp
        assert "a=ice-lite" in sdp and "a=setup:passive" in sdp and "a=candidate" in sdp, sdp
        assert re.search(r"^a=rtpmap:\d+ opus/48000/2", sdp, re.M), sdp
        assert "PCMU" not in sdp, sdp

        received, stop = [], threading.Event()
        thread = threading.Thread(target=run_phone,
                                  args=(phone, sdp_port(offer["sdp"]), received, stop))
        thread.start()
        try:
            await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="answer"))
            await asyncio.sleep(SECONDS)
        finally:
            stop.set()
            await asyncio.get_running_loop().run_in_executor(None, thread.join)
        heard_by_webrtc = tracks[0].dominant_frequency(skip_seconds=1.0) if (
            tracks and tracks[0].samples) else 0
        query = client.command("query", call_id="wr-1")
        sessions = gw.metric("moat_sessions")
        await pc.close()
        return received, heard_by_webrtc, query, sessions

    received, heard_by_webrtc, query, sessions = asyncio.run(scenario())
    # aiortc's 440 Hz Opus arrives at the phone as PCMU.
    pcmu = [p for p in received if len(p) > 12 and p[1] & 0x7F == 0]
    assert len(pcmu) > 50, f"the phone got {len(received)} packets, {len(pcmu)} PCMU"
    samples = [ulaw_decode(b) for p in pcmu[25:] for b in p[12:]]
    assert abs(frequency(samples, 8000) - 440) < 15, frequency(samples, 8000)
    # The phone's 660 Hz PCMU arrives at aiortc as Opus.
    assert abs(heard_by_webrtc - 660) < 15, heard_by_webrtc
    # query and metrics count the WebRTC leg.
    assert query["result"] == "ok", query
    medias = query["tags"]["webrtc"]["medias"]
    assert medias[0]["protocol"] == "UDP/TLS/RTP/SAVPF", medias
    assert medias[0]["streams"][0]["stats"]["packets"] > 50, medias
    assert gw.metric("moat_call_webrtc_legs") == 1
    assert sessions == 1  # the WebRTC leg is a core session

    deleted = client.command("delete", call_id="wr-1", delete_delay=0)
    assert deleted["result"] == "ok", deleted
    assert gw.metric("moat_call_webrtc_legs") == 0
    # delete ends the session too (aiortc closing may have ended it first)
    wait_sessions_gone(gw)


def wait_sessions_gone(gw):
    """Every WebRTC leg's session ends with its call, within 5 s."""
    for _ in range(50):
        if gw.metric("moat_sessions") == 0:
            return
        time.sleep(0.1)
    pytest.fail("a WebRTC leg's session outlived the call")


@pytest.mark.parametrize("attribute", ["a=fingerprint", "a=ice-ufrag"])
def test_webrtc_offer_missing_credentials_is_refused(voip, attribute):
    gw, client = voip

    async def offer_sdp():
        pc, _ = await webrtc_offer()
        sdp = pc.localDescription.sdp
        await pc.close()
        return sdp

    sdp = asyncio.run(offer_sdp())
    stripped = "".join(line for line in sdp.splitlines(True) if not line.startswith(attribute))
    assert stripped != sdp
    reply = call(client, "wr-bad", stripped)
    assert reply["result"] == "error", reply
    assert attribute[2:] in reply["error-reason"], reply
    assert client.command("ping")["result"] == "pong"
    # The daemon stays up and the next, well-formed call works.
    good = call(client, "wr-good", sdp)
    assert good["result"] == "ok", good
    assert gw.metric("moat_sessions") == 1  # created, waiting for the answer
    # Deleted before any answer: the session that never ran goes too.
    assert client.command("delete", call_id="wr-good", delete_delay=0)["result"] == "ok"
    assert gw.metric("moat_sessions") == 0
    assert gw.metric("moat_call_webrtc_legs") == 0

