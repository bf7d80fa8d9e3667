"""Hostile calls with a WebRTC party against the ASan/UBSan gateway, driven
over ng as Kamailio would (helpers and fixture from test_voip_hostile.py):

  * datagrams of 1, 12, 1500, 1501, 1984 and 1985 bytes to the phone-facing
    port of a WebRTC-to-SIP call, plain and SDES (authentic SRTP at every
    size, forgeries from the phone and a stranger): the gateway lives, what
    exceeds the relay MTU is counted too_big;
  * a WebRTC call deleted or re-offered before its answer, with the phone's
    packets arriving all along: nothing is relayed to the session that is
    not started yet;
  * both parties WebRTC: deleted before the answer, re-offered, answered
    twice, a plain answer to Moat's WebRTC offer; every session ends and
    the ASan gateway exits cleanly;
  * authentic RTP of 1400 to 1960 bytes from the WebRTC party of a
    transcoded call: what exceeds the relay MTU is counted too_big, not fed
    to the transcoder (before, it counted as transcoder input and then as
    its queue_full, as if the transcoder were falling behind)."""
import asyncio
import base64
import os
import re
import socket
import struct
import threading
import time

from aiortc import RTCPeerConnection, RTCRtpSender, RTCSessionDescription
from pylibsrtp import Policy, Session
from pylibsrtp._binding import ffi as srtp_ffi

from aiortc_peer import ToneTrack
from test_voip_webrtc import call as transcoded_call
from test_voip_webrtc import phone_answer as pcmu_phone_answer
from test_voip_webrtc import run_phone, webrtc_offer
from voip_peers import sdp_port
from test_voip_hostile import (call_drops, finish, port_of, relay, relayed, sdp,  # noqa: F401
                               send_sizes, start, udp, wait_metric)


async def webrtc_offer_sdp():
    """aiortc's offer with PCMU alone: the phone answers PCMU, so the call
    relays (no transcoding) into the WebRTC leg's session."""
    pc = RTCPeerConnection()
    transceiver = pc.addTransceiver(ToneTrack(440.0), direction="sendrecv")
    transceiver.setCodecPreferences([c for c in RTCRtpSender.getCapabilities("audio").codecs
                                     if c.mimeType == "audio/PCMU"])
    await pc.setLocalDescription(await pc.createOffer())
    return pc, pc.localDescription.sdp


def webrtc_call(client, call_id, offer_sdp):
    return client.command("offer", call_id=call_id, from_tag="webrtc", sdp=offer_sdp,
                          transport_protocol="RTP/AVP", ICE="remove", DTLS="off")


def phone_answer(client, call_id, phone):
    text = ("v=0\r\no=- 7 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {phone.getsockname()[1]} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n")
    return client.command("answer", call_id=call_id, from_tag="webrtc", to_tag="phone",
                          sdp=text, ICE="force", DTLS="passive",
                          transport_protocol="UDP/TLS/RTP/SAVPF")


def test_datagram_sizes_webrtc_phone_port(relay):
    gw, client, _ = relay
    phone = udp()

    async def scenario():
        pc, offer_sdp = await webrtc_offer_sdp()
        try:
            offer = webrtc_call(client, "wsizes", offer_sdp)
            assert offer["result"] == "ok", offer
            answer = phone_answer(client, "wsizes", phone)
            assert answer["result"] == "ok", answer
            before = call_drops(gw, "too_big")
            to_phone_leg = port_of(offer["sdp"])
            for _ in range(3):
                send_sizes(phone, to_phone_leg,
                           lambda n: struct.pack("!BBHII", 0x80, 0, 1, 160, 0x70) +
                           bytes(max(0, n - 12)) if n >= 12 else b"\x80" * n)
            assert wait_metric(lambda: call_drops(gw, "too_big"),
                               lambda v: v >= before + 6) == before + 6
            assert client.command("ping")["result"] == "pong"
        finally:
            await pc.close()

    asyncio.run(scenario())


def big_srtp_sender(key):
    """pylibsrtp outbound session whose work buffer takes 2 KB packets."""
    send = Session(Policy(key=key, srtp_profile=Policy.SRTP_PROFILE_AES128_CM_SHA1_80,
                          ssrc_type=Policy.SSRC_ANY_OUTBOUND))
    send._cdata = srtp_ffi.new("char[]", 4096)
    send._buffer = srtp_ffi.buffer(send._cdata)
    return send


def test_datagram_sizes_sdes_phone_facing_webrtc(relay):
    """An SDES phone's leg in a WebRTC-to-SIP call: authentic SRTP at every
    size limit from the phone, then forgeries of the same sizes from it and
    from a stranger; what decrypts to more than the relay MTU is dropped
    (too_big), nothing crashes, and the WebRTC party's audio still reaches
    the phone, protected with the key Moat offered it."""
    gw, client, _ = relay
    phone, stranger = udp(), udp()

    async def scenario():
        pc, offer_sdp = await webrtc_offer_sdp()
        try:
            offer = client.command("offer", call_id="wsdes", from_tag="webrtc", sdp=offer_sdp,
                                   transport_protocol="RTP/SAVP", ICE="remove", DTLS="off")
            assert offer["result"] == "ok", offer
            tag, key = re.search(r"^a=crypto:(\d+) AES_CM_128_HMAC_SHA1_80 inline:(\S+)",
                                 offer["sdp"], re.M).groups()
            mine = os.urandom(30)
            text = ("v=0\r\no=- 7 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
                    f"m=audio {phone.getsockname()[1]} RTP/SAVP 0\r\na=rtpmap:0 PCMU/8000\r\n"
                    f"a=crypto:{tag} AES_CM_128_HMAC_SHA1_80 "
                    f"inline:{base64.b64encode(mine).decode()}\r\n")
            answer = client.command("answer", call_id="wsdes", from_tag="webrtc",
                                    to_tag="phone", sdp=text, ICE="force", DTLS="passive",
                                    transport_protocol="UDP/TLS/RTP/SAVPF")
            assert answer["result"] == "ok", answer
            to_leg = port_of(offer["sdp"])
            send, seq = big_srtp_sender(mine), [100]

            def authentic(n):
                if n < 22:
                    return b"\x80" * n
                seq[0] += 1
                return send.protect(struct.pack("!BBHII", 0x80, 0, seq[0], seq[0] * 160, 0x70)
                                    + bytes(n - 22))

            def forged(n):
                return struct.pack("!BBHII", 0x80, 0, 7, 160, 0x70) + os.urandom(max(0, n - 12))

            before = call_drops(gw, "too_big")
            send_sizes(phone, to_leg, authentic)
            send_sizes(phone, to_leg, forged)
            send_sizes(stranger, to_leg, forged)
            # decrypted 1984 -> 1974: over the relay MTU; 1985 is truncated
            assert wait_metric(lambda: call_drops(gw, "too_big"),
                               lambda v: v >= before + 1) == before + 1
            assert client.command("ping")["result"] == "pong"
            # aiortc's PCMU reaches the phone protected with Moat's key.
            await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"],
                                                                type="answer"))
            receive = Session(Policy(key=base64.b64decode(key),
                                     srtp_profile=Policy.SRTP_PROFILE_AES128_CM_SHA1_80,
                                     ssrc_type=Policy.SSRC_ANY_INBOUND))
            heard, deadline = 0, time.monotonic() + 10
            phone.settimeout(0.2)
            while heard < 20 and time.monotonic() < deadline:
                try:
                    data = await asyncio.get_running_loop().run_in_executor(
                        None, phone.recv, 4096)
                except socket.timeout:
                    continue
                if len(data) > 1 and not 192 <= data[1] <= 223:
                    assert receive.unprotect(data)[1] & 0x7F == 0
                    heard += 1
            assert heard >= 20, heard
        finally:
            await pc.close()

    asyncio.run(scenario())


def test_webrtc_call_deleted_or_reoffered_before_the_answer():
    """The phone's packets reach the phone-facing port while the WebRTC
    leg's session waits for the answer (heuristic learning: they are
    accepted there): nothing may reach that session before its worker owns
    it; delete and re-offer free it with traffic arriving."""
    gw, client, _ = start(["--call-allow-loopback-destinations", "--call-learning", "heuristic"])
    phone = udp()
    stop = threading.Event()
    target = [0]

    def spam():
        n = 0
        while not stop.is_set():
            if target[0]:
                n += 1
                phone.sendto(struct.pack("!BBHII", 0x80, 0, n & 0xFFFF, n * 160, 0x99) +
                             bytes(160), ("127.0.0.1", target[0]))
            time.sleep(0.0005)

    thread = threading.Thread(target=spam)
    thread.start()

    async def scenario():
        for round_ in range(4):
            call_id = f"pending-{round_}"
            pcs = []
            try:
                for _ in range(2):  # an offer, then a re-offer replacing its session
                    pc, offer_sdp = await webrtc_offer_sdp()
                    pcs.append(pc)
                    offer = webrtc_call(client, call_id, offer_sdp)
                    assert offer["result"] == "ok", offer
                    target[0] = port_of(offer["sdp"])
                    await asyncio.sleep(0.3)
                assert relayed(gw) == 0  # nothing went to a session not started
                assert call_drops(gw, "no_destination") > 0
                assert client.command("delete", call_id=call_id, delete_delay=0)["result"] == "ok"
                target[0] = 0
            finally:
                for pc in pcs:
                    await pc.close()

    try:
        asyncio.run(scenario())
    finally:
        stop.set()
        thread.join()
    assert gw.metric("moat_sessions") == 0
    finish(gw, client)


def test_webrtc_to_webrtc_deleted_reoffered_or_answered_twice():
    """Both parties WebRTC (two sessions per call): a call deleted before
    the answer, a caller re-offering (its session and Moat's offer to the
    callee replaced), an answer repeated, and a callee's answer that is not
    WebRTC: every session ends with its call, nothing leaks (ASan)."""
    gw, client, _ = start(["--call-allow-loopback-destinations"])
    webrtc = {"ICE": "force", "DTLS": "passive", "transport_protocol": "UDP/TLS/RTP/SAVPF"}

    async def callee_answer(offer_sdp):
        pc = RTCPeerConnection()
        await pc.setRemoteDescription(RTCSessionDescription(sdp=offer_sdp, type="offer"))
        await pc.setLocalDescription(await pc.createAnswer())
        return pc, pc.localDescription.sdp

    async def scenario():
        pcs = []
        try:
            for round_ in range(3):
                call_id = f"ww-{round_}"
                for _ in range(2):  # an offer, then the caller's re-offer
                    pc, offer_sdp = await webrtc_offer_sdp()
                    pcs.append(pc)
                    offer = client.command("offer", call_id=call_id, from_tag="a",
                                           sdp=offer_sdp, **webrtc)
                    assert offer["result"] == "ok", offer
                if round_ == 0:  # deleted before any answer
                    assert client.command("delete", call_id=call_id,
                                          delete_delay=0)["result"] == "ok"
                    continue
                if round_ == 2:  # a plain answer to Moat's WebRTC offer
                    plain = sdp(udp().getsockname()[1])
                    reply = client.command("answer", call_id=call_id, from_tag="a",
                                           to_tag="b", sdp=plain, **webrtc)
                    assert reply["result"] == "error", reply
                pc, answer_sdp = await callee_answer(offer["sdp"])
                pcs.append(pc)
                for _ in range(2):  # the same answer twice
                    reply = client.command("answer", call_id=call_id, from_tag="a",
                                           to_tag="b", sdp=answer_sdp, **webrtc)
                    assert reply["result"] == "ok", reply
                assert client.command("delete", call_id=call_id, delete_delay=0)["result"] == "ok"
        finally:
            for pc in pcs:
                await pc.close()

    asyncio.run(scenario())
    for _ in range(50):
        if gw.metric("moat_sessions") == 0:
            break
        time.sleep(0.1)
    assert gw.metric("moat_sessions") == 0
    assert gw.metric("moat_call_webrtc_legs") == 0
    assert client.command("ping")["result"] == "pong"
    finish(gw, client)


def test_oversized_rtp_from_the_webrtc_party_of_a_transcoded_call(relay):
    gw, client, _ = relay
    phone = udp()
    queue_full = 'moat_transcode_dropped_packets_total{reason="queue_full"}'
    fed = 'moat_transcode_packets_total{direction="in"}'

    async def scenario():
        pc, _ = await webrtc_offer(True)
        received, stop = [], threading.Event()
        worker = None
        try:
            offer = transcoded_call(client, "wbig", pc.localDescription.sdp)
            assert offer["result"] == "ok", offer
            answer = client.command("answer", call_id="wbig", from_tag="webrtc",
                                    to_tag="phone", sdp=pcmu_phone_answer(phone.getsockname()[1]),
                                    ICE="force", DTLS="passive",
                                    transport_protocol="UDP/TLS/RTP/SAVPF")
            assert answer["result"] == "ok", answer
            pt = int(re.search(r"^a=rtpmap:(\d+) opus/48000/2", answer["sdp"], re.M).group(1))
            worker = threading.Thread(target=run_phone,
                                      args=(phone, sdp_port(offer["sdp"]), received, stop))
            worker.start()
            await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"],
                                                                type="answer"))
            assert wait_metric(lambda: gw.metric(fed), lambda v: v > 0, 10) > 0
            sender = pc.getSenders()[0]
            sender.replaceTrack(None)
            await asyncio.sleep(0.5)
            dtls, seq = sender.transport, 30000
            dtls._tx_srtp._cdata = srtp_ffi.new("char[]", 4096)
            dtls._tx_srtp._buffer = srtp_ffi.buffer(dtls._tx_srtp._cdata)
            before = (call_drops(gw, "too_big"), gw.metric(queue_full))
            for size in (1400, 1500, 1501, 1600, 1900, 1960):
                for _ in range(5):
                    seq += 1
                    await dtls._send_rtp(struct.pack("!BBHII", 0x80, pt, seq, seq * 960,
                                                     0x1234ABCD) + b"\xf8" + bytes(size - 13))
                    await asyncio.sleep(0.03)
            assert wait_metric(lambda: call_drops(gw, "too_big"),
                               lambda v: v >= before[0] + 20) == before[0] + 20
            assert gw.metric(queue_full) == before[1]
            assert client.command("ping")["result"] == "pong"
        finally:
            stop.set()
            if worker:
                worker.join()
            await pc.close()

    asyncio.run(scenario())
