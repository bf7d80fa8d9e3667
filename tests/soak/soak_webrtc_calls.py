"""The soak's WebRTC calls over ng (soak.py runs them on their own thread):
alternately an aiortc caller to an SDES-SRTP phone (pylibsrtp, keyed from
the a=crypto lines Moat writes; a stranger's forgeries at the phone's leg
first) and an aiortc caller to an aiortc callee (two WebRTC legs). Media
must cross both ways; then the call is deleted. PCMU only, so nothing
transcodes (the soak is about the legs' and sessions' lifetimes)."""
import asyncio
import base64
import os
import re
import socket
import struct

from aiortc import RTCPeerConnection, RTCRtpSender, RTCSessionDescription
from pylibsrtp import Policy, Session

from aiortc_peer import ToneTrack

WEBRTC = {"ICE": "force", "DTLS": "passive", "transport_protocol": "UDP/TLS/RTP/SAVPF"}
SUITE = "AES_CM_128_HMAC_SHA1_80"


def pcmu_peer():
    pc = RTCPeerConnection()
    transceiver = pc.addTransceiver(ToneTrack(440.0), direction="sendrecv")
    transceiver.setCodecPreferences([c for c in RTCRtpSender.getCapabilities("audio").codecs
                                     if c.mimeType == "audio/PCMU"])
    return pc


async def received_packets(pc):
    stats = await pc.getStats()
    return sum(s.packetsReceived for s in stats.values() if s.type == "inbound-rtp")


def srtp(key, outbound):
    return Session(Policy(key=key, srtp_profile=Policy.SRTP_PROFILE_AES128_CM_SHA1_80,
                          ssrc_type=Policy.SSRC_ANY_OUTBOUND if outbound
                          else Policy.SSRC_ANY_INBOUND))


def rtp(seq):
    return struct.pack("!BBHII", 0x80, 0, seq, seq * 160, 0x50DE5) + bytes([0xFF]) * 160


async def to_sdes_phone(client, call_id, offer_sdp, pc):
    """The phone's half; returns a failure or None."""
    offer = client.command("offer", call_id=call_id, from_tag="w", sdp=offer_sdp,
                           transport_protocol="RTP/SAVP", ICE="remove", DTLS="off")
    if offer.get("result") != "ok":
        return f"offer {offer.get('error-reason')}"
    line = re.search(rf"^a=crypto:(\d+) {SUITE} inline:(\S+)", offer["sdp"], re.M)
    if not line:
        return "no a=crypto line offered to the phone"
    phone, stranger = (socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2))
    try:
        phone.bind(("127.0.0.1", 0))
        phone.setblocking(False)
        mine = os.urandom(30)
        sdp = ("v=0\r\no=- 5 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
               f"m=audio {phone.getsockname()[1]} RTP/SAVP 0\r\na=rtpmap:0 PCMU/8000\r\n"
               f"a=crypto:{line.group(1)} {SUITE} inline:{base64.b64encode(mine).decode()}\r\n")
        answer = client.command("answer", call_id=call_id, from_tag="w", to_tag="p", sdp=sdp,
                                **WEBRTC)
        if answer.get("result") != "ok":
            return f"answer {answer.get('error-reason')}"
        leg = ("127.0.0.1", int(re.search(r"^m=audio (\d+) ", offer["sdp"], re.M).group(1)))
        forged = srtp(os.urandom(30), True)
        for seq in range(1, 21):
            stranger.sendto(forged.protect(rtp(seq)), leg)
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type="answer"))
        send, receive = srtp(mine, True), srtp(base64.b64decode(line.group(2)), False)
        heard = failed = 0
        for seq in range(100, 250):  # 3 s at 20 ms
            phone.sendto(send.protect(rtp(seq)), leg)
            await asyncio.sleep(0.02)
            while True:
                try:
                    data = phone.recv(2048)
                except BlockingIOError:
                    break
                if len(data) > 1 and 192 <= data[1] <= 223:
                    continue  # SRTCP
                try:
                    receive.unprotect(data)
                    heard += 1
                except Exception:  # noqa: BLE001 (pylibsrtp.Error)
                    failed += 1
        got = await received_packets(pc)
        if heard < 50 or failed or got < 50:
            return f"SDES phone heard {heard} ({failed} failed), WebRTC caller got {got}"
        return None
    finally:
        phone.close()
        stranger.close()


async def to_webrtc_callee(client, call_id, offer_sdp, pc):
    offer = client.command("offer", call_id=call_id, from_tag="w", sdp=offer_sdp, **WEBRTC)
    if offer.get("result") != "ok":
        return f"offer {offer.get('error-reason')}"
    callee = RTCPeerConnection()
    try:
        await callee.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type="offer"))
        callee.getTransceivers()[0].sender.replaceTrack(ToneTrack(660.0))
        callee.getTransceivers()[0].direction = "sendrecv"
        await callee.setLocalDescription(await callee.createAnswer())
        answer = client.command("answer", call_id=call_id, from_tag="w", to_tag="c",
                                sdp=callee.localDescription.sdp, **WEBRTC)
        if answer.get("result") != "ok":
            return f"answer {answer.get('error-reason')}"
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type="answer"))
        await asyncio.sleep(3)
        got = (await received_packets(pc), await received_packets(callee))
        if min(got) < 50:
            return f"WebRTC to WebRTC: caller, callee received {got}"
        return None
    finally:
        await callee.close()


async def webrtc_call(client, call_id, sdes_phone):
    """One call; a failure's text, or None."""
    pc = pcmu_peer()
    try:
        await pc.setLocalDescription(await pc.createOffer())
        half = to_sdes_phone if sdes_phone else to_webrtc_callee
        failure = await half(client, call_id, pc.localDescription.sdp, pc)
    finally:
        await pc.close()
        reply = client.command("delete", call_id=call_id, delete_delay=0)
    if failure is None and reply.get("result") != "ok":
        failure = f"delete {reply.get('result')}"
    return failure
