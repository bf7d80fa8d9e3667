"""SDES-SRTP termination on a call leg, driven over ng: a plain RTP/AVP
caller, and a callee reached as RTP/SAVP (transport-protocol, as Kamailio
asks for an SRTP phone). Moat offers its own a=crypto lines to the callee,
keys the callee's leg from the line the callee answers with, and answers
the caller as plain RTP. The callee side runs real libsrtp (pylibsrtp):
what the caller sends arrives protected with Moat's key, what the callee
protects with its key arrives at the caller in clear. Forged SRTP sent to
the callee's leg before the callee ever spoke is dropped at the HMAC and
does not latch the leg (rtpengine's 2025 advisory)."""
import base64
import os
import re
import socket
import struct

import pytest
from pylibsrtp import Policy, Session

from conftest import Gateway, free_port
from ng_client import NgClient

SUITE = "AES_CM_128_HMAC_SHA1_80"


def plain_sdp(port):
    return ("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n")


def srtp_sdp(port, key_salt):
    return ("v=0\r\no=- 2 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {port} RTP/SAVP 0\r\na=rtpmap:0 PCMU/8000\r\n"
            f"a=crypto:1 {SUITE} inline:{base64.b64encode(key_salt).decode()}\r\n")


def rtp(seq, ssrc=0x0A0B0C0D, payload=b"\x55" * 160):
    return struct.pack("!BBHII", 0x80, 0, seq, seq * 160, ssrc) + payload


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(2)
    return s


def port_of(sdp):
    return int(re.search(r"^m=audio (\d+) ", sdp, re.M).group(1))


def session(key_salt, outbound):
    kind = Policy.SSRC_ANY_OUTBOUND if outbound else Policy.SSRC_ANY_INBOUND
    return Session(policy=Policy(key=key_salt, ssrc_type=kind,
                                 srtp_profile=Policy.SRTP_PROFILE_AES128_CM_SHA1_80))


def test_sdes_leg_terminates_srtp_and_latches_only_on_authentic_packets():
    ng_port = free_port(socket.SOCK_DGRAM)
    low = free_port(socket.SOCK_DGRAM, 12)
    low += low & 1
    gw = Gateway(extra_args=["--ng-port", str(ng_port), "--media-port-min", str(low),
                             "--media-port-max", str(low + 11), "--announced-address",
                             "127.0.0.1"])
    client = NgClient(ng_port)
    caller, callee, forger = udp(), udp(), udp()
    try:
        offer = client.command("offer", call_id="sdes-1", from_tag="a",
                               sdp=plain_sdp(caller.getsockname()[1]),
                               transport_protocol="RTP/SAVP")
        assert offer["result"] == "ok", offer
        assert re.search(r"^m=audio \d+ RTP/SAVP 0\r$", offer["sdp"], re.M), offer["sdp"]
        line = re.search(rf"^a=crypto:(\d+) {SUITE} inline:(\S+)\r$", offer["sdp"], re.M)
        assert line, offer["sdp"]
        moat_key = base64.b64decode(line.group(2))
        assert len(moat_key) == 30
        callee_key = os.urandom(30)
        answer = client.command("answer", call_id="sdes-1", from_tag="a", to_tag="b",
                                sdp=srtp_sdp(callee.getsockname()[1], callee_key))
        assert answer["result"] == "ok", answer
        assert re.search(r"^m=audio \d+ RTP/AVP 0\r$", answer["sdp"], re.M), answer["sdp"]
        assert "a=crypto" not in answer["sdp"]
        to_callee_leg, to_caller_leg = port_of(offer["sdp"]), port_of(answer["sdp"])

        # Forgeries to the callee's leg before the callee spoke: dropped at the HMAC.
        forged = session(os.urandom(30), outbound=True)
        for seq in range(10):
            forger.sendto(forged.protect(rtp(seq, 0xBAD)), ("127.0.0.1", to_callee_leg))
        # Caller -> Moat in clear -> callee protected with Moat's key; the
        # callee leg was not latched to the forger, so the callee gets it.
        from_moat = session(moat_key, outbound=False)
        for seq in range(5):
            caller.sendto(rtp(seq), ("127.0.0.1", to_caller_leg))
            data, source = callee.recvfrom(2048)
            assert source[1] == to_callee_leg
            assert from_moat.unprotect(data) == rtp(seq)
        with pytest.raises(socket.timeout):
            forger.settimeout(0.3)
            forger.recvfrom(2048)
        # Callee protects with its own key -> the caller gets clear RTP.
        to_moat = session(callee_key, outbound=True)
        for seq in range(5):
            callee.sendto(to_moat.protect(rtp(seq, 0x77777777)), ("127.0.0.1", to_callee_leg))
            data, _ = caller.recvfrom(2048)
            assert data == rtp(seq, 0x77777777)
        metrics = gw.metrics()
        assert metrics['moat_call_dropped_packets_total{reason="auth"}'] == 10
        query = client.command("query", call_id="sdes-1")
        assert query["totals"]["RTP"]["packets"] == 10
        assert query["totals"]["RTP"]["errors"] == 10
    finally:
        for s in (caller, callee, forger):
            s.close()
        client.close()
        assert gw.stop() == 0


def test_sdes_offerer_is_answered_with_moat_key():
    """The other direction: an SRTP offerer (a=crypto) towards a plain callee."""
    ng_port = free_port(socket.SOCK_DGRAM)
    low = free_port(socket.SOCK_DGRAM, 12)
    low += low & 1
    gw = Gateway(extra_args=["--ng-port", str(ng_port), "--media-port-min", str(low),
                             "--media-port-max", str(low + 11), "--announced-address",
                             "127.0.0.1"])
    client = NgClient(ng_port)
    caller, callee = udp(), udp()
    try:
        caller_key = os.urandom(30)
        offer = client.command("offer", call_id="sdes-2", from_tag="a",
                               sdp=srtp_sdp(caller.getsockname()[1], caller_key),
                               transport_protocol="RTP/AVP")
        assert offer["result"] == "ok", offer
        assert "RTP/AVP" in offer["sdp"] and "a=crypto" not in offer["sdp"]
        answer = client.command("answer", call_id="sdes-2", from_tag="a", to_tag="b",
                                sdp=plain_sdp(callee.getsockname()[1]))
        assert answer["result"] == "ok", answer
        assert re.search(r"^m=audio \d+ RTP/SAVP 0\r$", answer["sdp"], re.M), answer["sdp"]
        line = re.search(rf"^a=crypto:1 {SUITE} inline:(\S+)\r$", answer["sdp"], re.M)
        assert line, answer["sdp"]
        moat_key = base64.b64decode(line.group(1))
        to_caller_leg, to_callee_leg = port_of(answer["sdp"]), port_of(offer["sdp"])
        to_moat = session(caller_key, outbound=True)
        caller.sendto(to_moat.protect(rtp(1)), ("127.0.0.1", to_caller_leg))
        assert callee.recvfrom(2048)[0] == rtp(1)
        callee.sendto(rtp(2, 0x99), ("127.0.0.1", to_callee_leg))
        assert session(moat_key, outbound=False).unprotect(caller.recvfrom(2048)[0]) == rtp(2, 0x99)
    finally:
        caller.close()
        callee.close()
        client.close()
        assert gw.stop() == 0
