"""SDES-SRTP termination in the real daemon, driven over ng as Kamailio's
rtpengine module would (transport-protocol RTP/SAVP or RTP/AVP, SDES flags):
one party speaks plain RTP from a UDP socket, the other SDES-SRTP with its
own libsrtp binding (pylibsrtp, aiortc's), keyed only from the a=crypto
lines in the SDPs Moat writes. Media crosses both ways; a flood of forged
SRTP at the SDES leg never latches the leg and never reaches the plain
party, most of it dropped before the HMAC by the leg's prefilter (detector
and stream guard, as on WebRTC transports)."""
import base64
import os
import re
import socket
import struct

import pytest
from pylibsrtp import Policy, Session

from conftest import Gateway, free_port
from ng_client import NgClient

SUITES = {
    "AES_CM_128_HMAC_SHA1_80": (Policy.SRTP_PROFILE_AES128_CM_SHA1_80, 30),
    "AES_CM_128_HMAC_SHA1_32": (Policy.SRTP_PROFILE_AES128_CM_SHA1_32, 30),
    "AEAD_AES_128_GCM": (Policy.SRTP_PROFILE_AEAD_AES_128_GCM, 28),
}


def phone_sdp(port, crypto_lines=()):
    proto = "RTP/SAVP" if crypto_lines else "RTP/AVP"
    return ("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {port} {proto} 8\r\na=rtpmap:8 PCMA/8000\r\na=sendrecv\r\n"
            + "".join(f"a=crypto:{line}\r\n" for line in crypto_lines))


def crypto_lines(sdp):
    """[(tag, suite, key)] of an SDP's a=crypto lines."""
    out = []
    for tag, suite, key in re.findall(r"^a=crypto:(\d+) (\S+) inline:([A-Za-z0-9+/=]+)", sdp,
                                      re.M):
        out.append((int(tag), suite, base64.b64decode(key)))
    return out


def session(suite, key, outbound):
    profile, length = SUITES[suite]
    assert len(key) == length
    return Session(Policy(key=key, srtp_profile=profile,
                          ssrc_type=Policy.SSRC_ANY_OUTBOUND if outbound
                          else Policy.SSRC_ANY_INBOUND))


def rtp(seq, ssrc=0x5EC0DE5):
    return struct.pack("!BBHII", 0x80, 8, seq, seq * 160, ssrc) + bytes([seq & 0xFF]) * 160


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(2)
    return s


def port_of(sdp):
    return int(re.search(r"^m=audio (\d+) ", sdp, re.M).group(1))


@pytest.fixture
def voip():
    media_min = free_port(socket.SOCK_DGRAM, 40)
    media_min += media_min & 1
    gw = Gateway(extra_args=["--call-allow-loopback-destinations", "--media-port-min", str(media_min),
                             "--media-port-max", str(media_min + 37)])
    client = NgClient(gw.ng_port)
    yield gw, client
    client.close()
    assert gw.stop() == 0, f"log in {gw.log_path}"


PREFILTER_REASONS = ("srtp_index", "srtp_replay", "srtp_unknown_ssrc", "srtp_budget")


def drops(gw, reason):
    return gw.metric(f'moat_call_dropped_packets_total{{reason="{reason}"}}')


def test_plain_caller_to_sdes_callee(voip):
    gw, client = voip
    caller, callee, intruder = udp(), udp(), udp()
    offer = client.command("offer", call_id="sdes-a", from_tag="plain",
                           sdp=phone_sdp(caller.getsockname()[1]),
                           transport_protocol="RTP/SAVP", flags=["trust-address"])
    assert offer["result"] == "ok", offer
    assert " RTP/SAVP 8" in offer["sdp"]
    offered = crypto_lines(offer["sdp"])
    assert [suite for _, suite, _ in offered] == [
        "AES_CM_128_HMAC_SHA1_80", "AEAD_AES_128_GCM", "AES_CM_128_HMAC_SHA1_32"]
    tag, suite, moat_key = offered[0]
    my_key = os.urandom(30)
    answer_line = f"{tag} {suite} inline:{base64.b64encode(my_key).decode()}"
    answer = client.command("answer", call_id="sdes-a", from_tag="plain", to_tag="sdes",
                            sdp=phone_sdp(callee.getsockname()[1], [answer_line]))
    assert answer["result"] == "ok", answer
    assert " RTP/AVP 8" in answer["sdp"] and "a=crypto" not in answer["sdp"]
    to_callee, to_caller = port_of(offer["sdp"]), port_of(answer["sdp"])
    receive_srtp, send_srtp = session(suite, moat_key, False), session(suite, my_key, True)

    # Plain in, SRTP out, decrypted by the SDES party's own libsrtp.
    for seq in range(1, 6):
        caller.sendto(rtp(seq), ("127.0.0.1", to_caller))
        data = callee.recv(2048)
        assert len(data) == len(rtp(seq)) + 10
        assert receive_srtp.unprotect(data) == rtp(seq)

    # Forged SRTP flood at the SDES leg before its party ever sent: dropped
    # by authentication, the leg does not latch, nothing reaches the caller.
    for seq in range(100, 300):
        intruder.sendto(rtp(seq) + os.urandom(10), ("127.0.0.1", to_callee))
    caller.settimeout(0.5)
    with pytest.raises(socket.timeout):
        caller.recv(2048)
    rejected = sum(drops(gw, r) for r in PREFILTER_REASONS + ("srtp_auth",))
    assert rejected == 200
    assert drops(gw, "srtp_auth") < 200  # the prefilter took the rest before the HMAC
    query = client.command("query", call_id="sdes-a")
    assert query["result"] == "ok", query

    # The SDES party's real packets: authenticated, latched, decrypted.
    caller.settimeout(2)
    for seq in range(1, 6):
        callee.sendto(send_srtp.protect(rtp(seq)), ("127.0.0.1", to_callee))
        assert caller.recv(2048) == rtp(seq)
    # After latching, forgeries from elsewhere are dropped before the HMAC.
    for seq in range(300, 310):
        intruder.sendto(rtp(seq) + os.urandom(10), ("127.0.0.1", to_callee))
    caller.settimeout(0.5)
    with pytest.raises(socket.timeout):
        caller.recv(2048)
    assert sum(drops(gw, r) for r in PREFILTER_REASONS + ("srtp_auth",)) == 200
    assert drops(gw, "source") >= 10


def test_sdes_caller_to_plain_callee_honours_sdes_only(voip):
    gw, client = voip
    caller, callee = udp(), udp()
    key80, key_gcm = os.urandom(30), os.urandom(28)
    lines = [f"1 AES_CM_128_HMAC_SHA1_80 inline:{base64.b64encode(key80).decode()}",
             f"2 AEAD_AES_128_GCM inline:{base64.b64encode(key_gcm).decode()}"]
    offer = client.command("offer", call_id="sdes-b", from_tag="sdes",
                           sdp=phone_sdp(caller.getsockname()[1], lines),
                           transport_protocol="RTP/AVP", flags=["SDES-only-AEAD_AES_128_GCM"])
    assert offer["result"] == "ok", offer
    assert " RTP/AVP 8" in offer["sdp"] and "a=crypto" not in offer["sdp"]
    answer = client.command("answer", call_id="sdes-b", from_tag="sdes", to_tag="plain",
                            sdp=phone_sdp(callee.getsockname()[1]))
    assert answer["result"] == "ok", answer
    assert " RTP/SAVP 8" in answer["sdp"]
    [(tag, suite, moat_key)] = crypto_lines(answer["sdp"])
    assert (tag, suite) == (2, "AEAD_AES_128_GCM")
    to_callee, to_caller = port_of(offer["sdp"]), port_of(answer["sdp"])
    send_srtp, receive_srtp = session(suite, key_gcm, True), session(suite, moat_key, False)
    for seq in range(1, 6):
        caller.sendto(send_srtp.protect(rtp(seq)), ("127.0.0.1", to_caller))
        assert callee.recv(2048) == rtp(seq)
        callee.sendto(rtp(seq), ("127.0.0.1", to_callee))
        assert receive_srtp.unprotect(caller.recv(2048)) == rtp(seq)


def test_sdes_requests_moat_cannot_key_are_errors(voip):
    gw, client = voip
    plain = phone_sdp(4000)
    reply = client.command("offer", call_id="sdes-c", from_tag="x", sdp=plain,
                           transport_protocol="RTP/SAVP", SDES=["off"])
    assert reply["result"] == "error" and "SDES" in reply["error-reason"]
    mki = phone_sdp(4000, ["1 AES_CM_128_HMAC_SHA1_80 "
                           "inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^20|1:4"])
    reply = client.command("offer", call_id="sdes-d", from_tag="x", sdp=mki,
                           transport_protocol="RTP/AVP")
    assert reply["result"] == "error" and "a=crypto" in reply["error-reason"]
    assert client.command("ping")["result"] == "pong"


def test_forged_flood_from_the_phone_address_dropped_before_hmac(voip):
    """An attacker who spoofs the SDES phone's own address passes the
    source check; the leg's prefilter (detector + stream guard, as on WebRTC
    transports) then drops forgeries with implausible indexes before the
    HMAC, and the phone's media keeps flowing."""
    gw, client = voip
    caller, callee = udp(), udp()
    offer = client.command("offer", call_id="sdes-f", from_tag="plain",
                           sdp=phone_sdp(caller.getsockname()[1]), transport_protocol="RTP/SAVP")
    tag, suite, moat_key = crypto_lines(offer["sdp"])[0]
    my_key = os.urandom(30)
    answer = client.command("answer", call_id="sdes-f", from_tag="plain", to_tag="sdes",
                            sdp=phone_sdp(callee.getsockname()[1], [
                                f"{tag} {suite} inline:{base64.b64encode(my_key).decode()}"]))
    assert answer["result"] == "ok", answer
    to_callee = port_of(offer["sdp"])
    send_srtp = session(suite, my_key, True)
    for seq in range(1, 21):
        callee.sendto(send_srtp.protect(rtp(seq)), ("127.0.0.1", to_callee))
        assert caller.recv(2048) == rtp(seq)
    forged = 3000
    for i in range(forged):
        seq = (1000 + i * 7919) % 65536  # spread over the whole sequence space
        callee.sendto(rtp(seq) + os.urandom(10), ("127.0.0.1", to_callee))
    caller.settimeout(0.5)
    while True:  # nothing forged reaches the caller
        try:
            data = caller.recv(2048)
        except socket.timeout:
            break
        raise AssertionError(f"a forged packet was relayed: {data[:12].hex()}")
    before_hmac = sum(drops(gw, r) for r in PREFILTER_REASONS)
    authenticated_and_failed = drops(gw, "srtp_auth")
    # On a busy host the kernel drops some at the leg's full socket queue:
    # those never reach the HMAC either (and are counted).
    in_kernel = drops(gw, "socket_queue")
    assert before_hmac + authenticated_and_failed + in_kernel <= forged
    assert before_hmac + in_kernel >= forged // 2, (before_hmac, in_kernel,
                                                    authenticated_and_failed)
    caller.settimeout(2)
    for seq in range(21, 26):
        callee.sendto(send_srtp.protect(rtp(seq)), ("127.0.0.1", to_callee))
        assert caller.recv(2048) == rtp(seq)
