"""SIP to WebRTC through the ng protocol: a PCMU phone (a UDP socket) is the
caller and an aiortc peer answers, as a SIP-over-WebSocket client would.
The test drives offer/answer as Kamailio would: the offer towards the
client with ICE force, DTLS passive, UDP/TLS/RTP/SAVPF and codec-transcode
Opus, so Moat writes its own WebRTC offer (ICE-lite, host candidates,
fingerprint, a=setup:passive, BUNDLE, Opus first); the client's answer
goes back with transport-protocol RTP/AVP and ICE remove, and Moat's
session for the client is built from it with the credentials and SSRCs it
offered. The phone sends 660 Hz PCMU, aiortc 440 Hz Opus; each must hear
the other's tone. A client answer without ICE credentials or a
fingerprint gets an error reply and the daemon stays up."""
import asyncio
import re
import threading
import time

import pytest
from aiortc import RTCPeerConnection, RTCSessionDescription

from aiortc_peer import Recorder, ToneTrack
from test_voip_transcode import frequency, udp, ulaw_decode, voip  # noqa: F401 (fixture)
from test_voip_webrtc import phone_answer, run_phone, wait_sessions_gone

SECONDS = 6


def phone_offer(port):
    return phone_answer(port)  # the same plain PCMU SDP


def moat_offer(client, call_id, phone):
    return client.command("offer", call_id=call_id, from_tag="phone",
                          sdp=phone_offer(phone.getsockname()[1]), ICE="force",
                          DTLS="passive", transport_protocol="UDP/TLS/RTP/SAVPF",
                          codec={"transcode": ["opus"]}, replace=["origin"])


def client_answer(client, call_id, sdp):
    return client.command("answer", call_id=call_id, from_tag="phone", to_tag="webrtc",
                          sdp=sdp, transport_protocol="RTP/AVP", ICE="remove", DTLS="off")


async def webrtc_answer(offer_sdp, hz=440.0):
    """aiortc answering Moat's offer with a tone; (pc, recorded tracks)."""
    pc = RTCPeerConnection()
    tracks = []
    pc.on("track", lambda track: tracks.append(Recorder(track)))
    await pc.setRemoteDescription(RTCSessionDescription(sdp=offer_sdp, type="offer"))
    pc.getTransceivers()[0].sender.replaceTrack(ToneTrack(hz))
    pc.getTransceivers()[0].direction = "sendrecv"
    await pc.setLocalDescription(await pc.createAnswer())
    return pc, tracks


def sdp_port(sdp):
    return int(re.search(r"^m=audio (\d+) ", sdp, re.M).group(1))


def ssrcs(sdp):
    return set(re.findall(r"^a=ssrc:(\d+) ", sdp, re.M))


def test_pcmu_phone_calls_webrtc_client(voip):
    gw, client = voip
    phone = udp()

    async def scenario():
        offer = moat_offer(client, "wc-1", phone)
        assert offer["result"] == "ok", offer
        sdp = offer["sdp"]
        # Moat's own WebRTC offer.
        opus = re.search(r"^a=rtpmap:(\d+) opus/48000/2", sdp, re.M)
        assert opus and re.search(rf"^m=audio \d+ UDP/TLS/RTP/SAVPF {opus.group(1)} 0\b", sdp,
                                  re.M), sdp
        for present in ("a=ice-lite", "a=ice-ufrag:", "a=ice-pwd:", "a=candidate:",
                        "a=fingerprint:sha-256 ", "a=setup:passive", "a=rtcp-mux", "a=mid:0",
                        "a=group:BUNDLE 0", "opus/48000/2", "PCMU/8000", "a=ssrc:"):
            assert present in sdp, (present, sdp)
        offered_ssrcs = ssrcs(sdp)
        pc, tracks = await webrtc_answer(sdp)
        answer = client_answer(client, "wc-1", pc.localDescription.sdp)
        assert answer["result"] == "ok", answer
        plain = answer["sdp"]
        # The phone gets plain RTP/AVP PCMU, nothing of ICE or DTLS.
        assert re.search(r"^m=audio \d+ RTP/AVP 0\b", plain, re.M), plain
        for absent in ("a=fingerprint", "a=ice-ufrag", "a=candidate", "a=setup", "TLS", "opus"):
            assert absent not in plain, plain

        received, stop = [], threading.Event()
        thread = threading.Thread(target=run_phone,
                                  args=(phone, sdp_port(plain), received, stop))
        thread.start()
        try:
            await asyncio.sleep(SECONDS)
        finally:
            stop.set()
            await asyncio.get_running_loop().run_in_executor(None, thread.join)
        heard_by_webrtc = tracks[0].dominant_frequency(skip_seconds=1.0) if (
            tracks and tracks[0].samples) else 0
        remote_ssrcs = {
            str(s.source) for s in pc.getReceivers()[0].getSynchronizationSources()}
        query = client.command("query", call_id="wc-1")
        sessions = gw.metric("moat_sessions")
        await pc.close()
        return received, heard_by_webrtc, query, sessions, offered_ssrcs, remote_ssrcs

    received, heard_by_webrtc, query, sessions, offered_ssrcs, remote_ssrcs = asyncio.run(
        scenario())
    # aiortc's 440 Hz Opus arrives at the phone as PCMU.
    pcmu = [p for p in received if len(p) > 12 and p[1] & 0x7F == 0]
    assert len(pcmu) > 50, f"the phone got {len(received)} packets, {len(pcmu)} PCMU"
    samples = [ulaw_decode(b) for p in pcmu[25:] for b in p[12:]]
    assert abs(frequency(samples, 8000) - 440) < 15, frequency(samples, 8000)
    # The phone's 660 Hz PCMU arrives at aiortc as Opus, with the SSRC
    # Moat offered.
    assert abs(heard_by_webrtc - 660) < 15, heard_by_webrtc
    assert remote_ssrcs and remote_ssrcs <= offered_ssrcs, (remote_ssrcs, offered_ssrcs)
    assert query["result"] == "ok", query
    assert gw.metric("moat_call_webrtc_legs") == 1
    assert sessions == 1  # the WebRTC leg is a core session
    assert client.command("delete", call_id="wc-1", delete_delay=0)["result"] == "ok"
    assert gw.metric("moat_call_webrtc_legs") == 0
    wait_sessions_gone(gw)


def without(attribute):
    return lambda sdp: "".join(line for line in sdp.splitlines(True)
                               if not line.startswith(attribute))


@pytest.mark.parametrize("mutate, reason", [
    (without("a=fingerprint"), "fingerprint"),
    (without("a=ice-ufrag"), "ice-ufrag"),
    # Moat offered a=setup:passive: a client that wants to be the DTLS
    # server too would leave nobody to start the handshake.
    (lambda sdp: sdp.replace("a=setup:active", "a=setup:passive"), "setup:active"),
], ids=["no-fingerprint", "no-ice-ufrag", "setup-passive"])
def test_client_answer_missing_credentials_is_refused(voip, mutate, reason):
    gw, client = voip
    phone = udp()

    async def answer_sdp():
        offer = moat_offer(client, "wc-bad", phone)
        assert offer["result"] == "ok", offer
        pc, _ = await webrtc_answer(offer["sdp"])
        sdp = pc.localDescription.sdp
        await pc.close()
        return sdp

    sdp = asyncio.run(answer_sdp())
    bad = mutate(sdp)
    assert bad != sdp
    reply = client_answer(client, "wc-bad", bad)
    assert reply["result"] == "error", reply
    assert reason in reply["error-reason"], reply
    assert client.command("ping")["result"] == "pong"
    assert gw.metric("moat_sessions") == 0
    # The well-formed answer to the same offer still works.
    good = client_answer(client, "wc-bad", sdp)
    assert good["result"] == "ok", good
    assert gw.metric("moat_call_webrtc_legs") == 1
    assert client.command("delete", call_id="wc-bad", delete_delay=0)["result"] == "ok"
    assert gw.metric("moat_call_webrtc_legs") == 0


def test_delete_before_the_client_answers(voip):
    """An unanswered WebRTC offer holds no session; delete frees the call."""
    gw, client = voip
    phone = udp()
    offer = moat_offer(client, "wc-ring", phone)
    assert offer["result"] == "ok", offer
    assert gw.metric("moat_sessions") == 0
    assert gw.metric("moat_call_webrtc_legs") == 0
    assert client.command("delete", call_id="wc-ring", delete_delay=0)["result"] == "ok"
    assert gw.metric("moat_calls") == 0
    assert client.command("ping")["result"] == "pong"
