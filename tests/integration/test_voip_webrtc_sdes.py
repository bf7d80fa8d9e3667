"""WebRTC to an SDES-SRTP phone and back, through the ng protocol as
Kamailio drives it: the browser side is aiortc (ICE, DTLS-SRTP, Opus), the
phone a UDP socket that speaks SDES-SRTP with its own libsrtp binding
(pylibsrtp), keyed only from the a=crypto lines Moat writes. Moat
terminates both: the WebRTC party's session decrypts its DTLS-SRTP, the
phone's leg its SDES-SRTP, and the transcoder carries Opus to PCMU and
back. Each side must hear the other's tone (aiortc 440 Hz, the phone
660 Hz); every SRTP packet Moat sends the phone must authenticate with the
key Moat offered or answered, and a stranger's forged SRTP at the phone's
leg before the phone speaks is dropped without latching it."""
import asyncio
import base64
import os
import re
import socket
import struct
import threading
import time

from aiortc import RTCSessionDescription

from test_voip_sdes import session
from test_voip_transcode import frequency, rtp, tone, udp, ulaw_decode, ulaw_encode, voip  # noqa: F401
from test_voip_webrtc import webrtc_offer
from test_voip_webrtc_callee import webrtc_answer

SECONDS = 6
SUITE = "AES_CM_128_HMAC_SHA1_80"


def phone_sdp(port, crypto=None):
    proto = "RTP/SAVP" if crypto else "RTP/AVP"
    return ("v=0\r\no=- 7 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {port} {proto} 0\r\na=rtpmap:0 PCMU/8000\r\na=sendrecv\r\n"
            + (f"a=crypto:{crypto}\r\n" if crypto else ""))


def crypto_lines(sdp):
    return [(int(t), s, base64.b64decode(k)) for t, s, k in
            re.findall(r"^a=crypto:(\d+) (\S+) inline:([A-Za-z0-9+/=]+)", sdp, re.M)]


def media_port(sdp):
    return int(re.search(r"^m=audio (\d+) ", sdp, re.M).group(1))


class SrtpPhone:
    """660 Hz PCMU every 20 ms, SRTP-protected; what comes back is
    unprotected (RTP or RTCP by its second octet) and counted."""

    def __init__(self, sock, send_key, receive_key):
        self.sock, self.received, self.failed = sock, [], 0
        self.tx, self.rx = session(SUITE, send_key, True), session(SUITE, receive_key, False)
        self.stop = threading.Event()

    def run(self, moat_port):
        n, start = 0, time.monotonic()
        self.sock.settimeout(0.005)
        while not self.stop.is_set():
            pcm = tone(660, 8000, n * 160, 160)
            packet = rtp(0, n, n * 160, 0x5EC0DE, bytes(ulaw_encode(s) for s in pcm))
            self.sock.sendto(self.tx.protect(packet), ("127.0.0.1", moat_port))
            n += 1
            while time.monotonic() < start + n * 0.02:
                try:
                    self.take(self.sock.recvfrom(2048)[0])
                except socket.timeout:
                    pass

    def take(self, data):
        try:
            if len(data) > 1 and 192 <= data[1] <= 223:
                self.rx.unprotect_rtcp(data)
            else:
                self.received.append(self.rx.unprotect(data))
        except Exception:  # noqa: BLE001 (pylibsrtp raises its own Error)
            self.failed += 1

    def heard(self):
        pcmu = [p for p in self.received if len(p) > 12 and p[1] & 0x7F == 0]
        samples = [ulaw_decode(b) for p in pcmu[25:] for b in p[12:]]
        return len(pcmu), frequency(samples, 8000) if samples else 0


def forge_at(port, count=200):
    """A stranger's SRTP-shaped datagrams (RTP header, random tail) at a leg."""
    stranger = udp()
    for seq in range(count):
        stranger.sendto(struct.pack("!BBHII", 0x80, 0, seq, seq * 160, 0x5EC0DE) +
                        os.urandom(170), ("127.0.0.1", port))
    stranger.close()


def srtp_drops(gw):
    return sum(gw.metric(f'moat_call_dropped_packets_total{{reason="{r}"}}') for r in
               ("srtp_auth", "srtp_index", "srtp_replay", "srtp_unknown_ssrc", "srtp_budget",
                "source"))


async def talk(phone, moat_port, pc, tracks):
    thread = threading.Thread(target=phone.run, args=(moat_port,))
    thread.start()
    try:
        await asyncio.sleep(SECONDS)
    finally:
        phone.stop.set()
        await asyncio.get_running_loop().run_in_executor(None, thread.join)
    heard = tracks[0].dominant_frequency(skip_seconds=1.0) if tracks and tracks[0].samples else 0
    await pc.close()
    return heard


async def stranger_then_phone(gw, phone, leg_port, pc, tracks):
    """A stranger's forgeries at the phone's leg first (they never latch
    it), then the call: (phone, what aiortc heard, SRTP drops meanwhile)."""
    before = srtp_drops(gw)
    forge_at(leg_port)
    heard = await talk(phone, leg_port, pc, tracks)
    return phone, heard, srtp_drops(gw) - before


def check_heard(gw, client, call_id, phone, heard_by_webrtc):
    packets, heard_by_phone = phone.heard()
    assert packets > 50, f"the phone decrypted {packets} PCMU packets ({phone.failed} failed)"
    assert phone.failed == 0, f"{phone.failed} packets from Moat did not authenticate"
    assert abs(heard_by_phone - 440) < 15, heard_by_phone
    assert abs(heard_by_webrtc - 660) < 15, heard_by_webrtc
    assert gw.metric('moat_call_dropped_packets_total{reason="srtp_protect"}') == 0
    assert client.command("delete", call_id=call_id, delete_delay=0)["result"] == "ok"
    assert gw.metric("moat_call_webrtc_legs") == 0


def test_webrtc_caller_to_sdes_phone(voip):
    """Kamailio offers the browser's call to the phone as RTP/SAVP: Moat
    offers the phone SDES keys and keys its leg from the line it picks."""
    gw, client = voip
    sock = udp()

    async def scenario():
        pc, tracks = await webrtc_offer(True)
        offer = client.command("offer", call_id="ws-1", from_tag="webrtc",
                               sdp=pc.localDescription.sdp, transport_protocol="RTP/SAVP",
                               ICE="remove", DTLS="off", codec={"transcode": ["PCMU"]})
        assert offer["result"] == "ok", offer
        sdp = offer["sdp"]
        assert re.search(r"^m=audio \d+ RTP/SAVP .*\b0\b", sdp, re.M), sdp
        for absent in ("a=fingerprint", "a=ice-ufrag", "a=candidate", "a=setup", "TLS"):
            assert absent not in sdp, sdp
        offered = {suite: (tag, key) for tag, suite, key in crypto_lines(sdp)}
        assert SUITE in offered, sdp
        tag, moat_key = offered[SUITE]
        my_key = os.urandom(30)
        line = f"{tag} {SUITE} inline:{base64.b64encode(my_key).decode()}"
        answer = client.command("answer", call_id="ws-1", from_tag="webrtc", to_tag="phone",
                                sdp=phone_sdp(sock.getsockname()[1], line), ICE="force",
                                DTLS="passive", transport_protocol="UDP/TLS/RTP/SAVPF")
        assert answer["result"] == "ok", answer
        assert "UDP/TLS/RTP/SAVPF" in answer["sdp"] and "a=crypto" not in answer["sdp"]
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type="answer"))
        return await stranger_then_phone(gw, SrtpPhone(sock, my_key, moat_key), media_port(sdp),
                                         pc, tracks)

    phone, heard, dropped = asyncio.run(scenario())
    assert dropped >= 200, dropped
    check_heard(gw, client, "ws-1", phone, heard)


def test_sdes_phone_calls_webrtc_client(voip):
    """The phone offers RTP/SAVP with its key; Kamailio asks for a WebRTC
    leg towards the client: Moat answers the phone's a=crypto with its own
    key and offers the client a session."""
    gw, client = voip
    sock = udp()
    my_key = os.urandom(30)
    line = f"1 {SUITE} inline:{base64.b64encode(my_key).decode()}"

    async def scenario():
        offer = client.command("offer", call_id="ws-2", from_tag="phone",
                               sdp=phone_sdp(sock.getsockname()[1], line), ICE="force",
                               DTLS="passive", transport_protocol="UDP/TLS/RTP/SAVPF",
                               codec={"transcode": ["opus"]})
        assert offer["result"] == "ok", offer
        sdp = offer["sdp"]
        assert "a=crypto" not in sdp and "a=fingerprint:sha-256" in sdp, sdp
        pc, tracks = await webrtc_answer(sdp)
        answer = client.command("answer", call_id="ws-2", from_tag="phone", to_tag="webrtc",
                                sdp=pc.localDescription.sdp, transport_protocol="RTP/AVP",
                                ICE="remove", DTLS="off")
        assert answer["result"] == "ok", answer
        back = answer["sdp"]
        assert re.search(r"^m=audio \d+ RTP/SAVP 0\b", back, re.M), back
        for absent in ("a=fingerprint", "a=ice-ufrag", "a=candidate", "a=setup", "TLS", "opus"):
            assert absent not in back, back
        lines = crypto_lines(back)
        assert [(t, s) for t, s, _ in lines] == [(1, SUITE)], back
        return await stranger_then_phone(gw, SrtpPhone(sock, my_key, lines[0][2]),
                                         media_port(back), pc, tracks)

    phone, heard, dropped = asyncio.run(scenario())
    assert dropped >= 200, dropped
    check_heard(gw, client, "ws-2", phone, heard)


def test_sdes_phone_without_a_usable_key_is_refused(voip):
    """RTP/SAVP with no a=crypto line Moat can use: a clear error, no call."""
    gw, client = voip
    sock = udp()
    bad = f"1 {SUITE} inline:{base64.b64encode(os.urandom(12)).decode()}"  # too short
    for sdp in (phone_sdp(sock.getsockname()[1], bad),
                phone_sdp(sock.getsockname()[1]).replace("RTP/AVP", "RTP/SAVP")):
        reply = client.command("offer", call_id="ws-bad", from_tag="phone", sdp=sdp, ICE="force",
                               DTLS="passive", transport_protocol="UDP/TLS/RTP/SAVPF")
        assert reply["result"] == "error", reply
        assert "SDES" in reply["error-reason"], reply
    assert client.command("ping")["result"] == "pong"
    assert gw.metric("moat_sessions") == 0
    assert gw.metric("moat_call_webrtc_legs") == 0
