"""Hostile call legs (issue 20) against the ASan/UBSan gateway, driven over
ng as Kamailio's rtpengine module would, with UDP sockets playing phones
on 127.0.0.1 and a third party on 127.0.0.2:

  * a third party's datagram to the callee-facing port before the callee
    speaks neither latches the leg nor gets the caller's audio, and cannot
    inject; the callee's packets flow ([call] learning = sdp, the default);
    a stranger on the callee's own IP who speaks first loses the leg to the
    callee's exact SDP address;
  * SDPs aiming a leg at Moat's own sockets (ng, HTTP, worker, another
    leg), at multicast, link-local or the unspecified network get an ng
    error with an error-reason, with and without
    allow_loopback_destinations, and create or change nothing;
  * an answer naming Moat's own leg port plus one datagram does not loop,
    and a leg whose destination later became another leg's port drops what
    that leg sends (counted "loop");
  * datagrams of 1, 12, 1500, 1501, 1984 and 1985 bytes to a plain leg, an
    SDES leg and the phone-facing port of a WebRTC-to-SIP call: the gateway
    lives, what exceeds the relay MTU is counted too_big;
  * a WebRTC call deleted or re-offered before its answer, with the phone's
    packets arriving all along: nothing is relayed to the session that is
    not started yet, and the ASan gateway exits cleanly."""
import asyncio
import base64
import os
import re
import socket
import struct
import threading
import time

import pytest
from aiortc import RTCPeerConnection, RTCRtpSender, RTCSessionDescription
from pylibsrtp import Policy, Session
from pylibsrtp._binding import ffi as srtp_ffi

from aiortc_peer import ToneTrack
from conftest import MOAT_ASAN, Gateway, free_port
from ng_client import NgClient
from test_room import api

LOW_SPAN = 37


def start(extra=(), span=LOW_SPAN, reserve=40):
    low = free_port(socket.SOCK_DGRAM, reserve)
    low += low & 1
    gw = Gateway(binary=MOAT_ASAN,
                 extra_args=["--media-port-min", str(low), "--media-port-max", str(low + span),
                             "--announced-address", "127.0.0.1", "--ng-delete-delay", "0",
                             *extra])
    return gw, NgClient(gw.ng_port, timeout=20.0), low  # ASan: slow first WebRTC offer


def finish(gw, client):
    client.close()
    code = gw.stop()
    assert code == 0, f"moat exited with {code}; log in {gw.log_path}"


@pytest.fixture
def relay():
    gw, client, low = start(["--call-allow-loopback-destinations"])
    yield gw, client, low
    finish(gw, client)


def sdp(port, address="127.0.0.1", extra=""):
    family = "IP6" if ":" in address else "IP4"
    return ("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\n"
            f"c=IN {family} {address}\r\nt=0 0\r\n"
            f"m=audio {port} RTP/AVP 8\r\na=rtpmap:8 PCMA/8000\r\na=sendrecv\r\n{extra}")


def rtp(seq, ssrc, size=172):
    header = struct.pack("!BBHII", 0x80, 8, seq & 0xFFFF, seq * 160, ssrc)
    return header + bytes([seq & 0xFF]) * (size - 12)


def udp(address="127.0.0.1", timeout=2.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((address, 0))
    s.settimeout(timeout)
    return s


def port_of(text):
    return int(re.search(r"^m=audio (\d+) ", text, re.M).group(1))


def silent(sock, seconds=0.4):
    sock.settimeout(seconds)
    try:
        data = sock.recv(4096)
    except socket.timeout:
        return True
    return not data


def host_address():
    """This host's address on its default route (no packet is sent), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.200", 9))
        except OSError:
            return None
        address = s.getsockname()[0]
    return None if address.startswith("127.") else address


def call_drops(gw, reason):
    return gw.metric(f'moat_call_dropped_packets_total{{reason="{reason}"}}')


def relayed(gw):
    return gw.metric('moat_call_relayed_packets_total{kind="rtp"}')


def wait_metric(read, predicate, seconds=3.0):
    deadline = time.time() + seconds
    value = read()
    while not predicate(value) and time.time() < deadline:
        time.sleep(0.05)
        value = read()
    return value


def offer_answer(client, call_id, caller, callee):
    offer = client.command("offer", call_id=call_id, from_tag="caller",
                           sdp=sdp(caller.getsockname()[1]))
    assert offer["result"] == "ok", offer
    answer = client.command("answer", call_id=call_id, from_tag="caller", to_tag="callee",
                            sdp=sdp(callee.getsockname()[1]))
    assert answer["result"] == "ok", answer
    return port_of(offer["sdp"]), port_of(answer["sdp"])  # to_callee, to_caller


def test_third_party_cannot_latch_before_the_callee(relay):
    gw, client, _ = relay
    caller, callee, intruder = udp(), udp(), udp("127.0.0.2")
    to_callee, to_caller = offer_answer(client, "bleed", caller, callee)
    # One datagram from a third party before the callee ever spoke.
    intruder.sendto(rtp(1, 0xBAD), ("127.0.0.1", to_callee))
    assert wait_metric(lambda: call_drops(gw, "source"), lambda v: v >= 1) >= 1
    # The caller's audio goes to the callee's SDP address, not to the intruder.
    for seq in range(1, 6):
        caller.sendto(rtp(seq, 0xCA11), ("127.0.0.1", to_caller))
        assert callee.recv(4096) == rtp(seq, 0xCA11)
    assert silent(intruder)
    # The callee speaks (from its SDP address) and reaches the caller.
    for seq in range(1, 6):
        callee.sendto(rtp(seq, 0xCA11EE), ("127.0.0.1", to_callee))
        assert caller.recv(4096) == rtp(seq, 0xCA11EE)
    # The intruder cannot inject, before or after the callee latched.
    for seq in range(10, 20):
        intruder.sendto(rtp(seq, 0xBAD), ("127.0.0.1", to_callee))
    assert silent(caller)
    query = client.command("query", call_id="bleed")
    assert query["result"] == "ok", query
    assert query["tags"]["callee"]["medias"][0]["streams"][0]["stats"]["packets"] == 5, query


def test_same_host_stranger_first_loses_the_leg_to_the_callee(relay):
    """A stranger on the callee's own IP (another port: its host, or its
    NAT) speaks first and latches the callee-facing port; the callee's
    exact SDP address then takes the leg over: the caller's audio goes to
    the callee, the stranger can no longer inject. (Before: the callee's
    packets were dropped as "source" for the whole call.)"""
    gw, client, _ = relay
    caller, callee, stranger = udp(), udp(), udp()
    to_callee, to_caller = offer_answer(client, "same-host", caller, callee)
    stranger.sendto(rtp(1, 0xBAD), ("127.0.0.1", to_callee))
    assert caller.recv(4096) == rtp(1, 0xBAD)  # sdp mode: its IP, any port (NAT)
    for seq in range(1, 6):
        callee.sendto(rtp(seq, 0xCA11EE), ("127.0.0.1", to_callee))
        assert caller.recv(4096) == rtp(seq, 0xCA11EE)
    for seq in range(1, 6):
        caller.sendto(rtp(seq, 0xCA11), ("127.0.0.1", to_caller))
        assert callee.recv(4096) == rtp(seq, 0xCA11)
    for seq in range(10, 20):
        stranger.sendto(rtp(seq, 0xBAD), ("127.0.0.1", to_callee))
    assert silent(caller)
    assert wait_metric(lambda: call_drops(gw, "source"), lambda v: v >= 10) >= 10
    assert gw.metric("moat_call_legs_moved_to_sdp_address_total") == 1
    query = client.command("query", call_id="same-host")
    assert query["result"] == "ok", query
    assert query["tags"]["callee"]["medias"][0]["streams"][0]["stats"]["packets"] == 6, query


def test_heuristic_learning_is_opt_in():
    """[call] learning = heuristic latches the first sender as before, but
    never re-latches to another address without signalling."""
    gw, client, _ = start(["--call-allow-loopback-destinations", "--call-learning", "heuristic"])
    try:
        caller, callee, other = udp(), udp(), udp("127.0.0.2")
        to_callee, to_caller = offer_answer(client, "heur", caller, callee)
        other.sendto(rtp(1, 0x0123), ("127.0.0.1", to_callee))  # latches (opt-in)
        assert caller.recv(4096) == rtp(1, 0x0123)  # relayed: the latch is done
        caller.sendto(rtp(2, 0xCA11), ("127.0.0.1", to_caller))
        assert other.recv(4096) == rtp(2, 0xCA11)
        callee.sendto(rtp(3, 0xCA11EE), ("127.0.0.1", to_callee))  # no re-latch
        caller.sendto(rtp(4, 0xCA11), ("127.0.0.1", to_caller))
        assert other.recv(4096) == rtp(4, 0xCA11)
        assert silent(callee)
        # New signalling (a re-answer) moves it back to the SDP address.
        answer = client.command("answer", call_id="heur", from_tag="caller", to_tag="callee",
                                sdp=sdp(callee.getsockname()[1], extra="a=ptime:20\r\n"))
        assert answer["result"] == "ok", answer
    finally:
        finish(gw, client)


@pytest.mark.parametrize("allow_loopback", [False, True], ids=["default", "allow-loopback"])
def test_destinations_aiming_at_moat_are_refused(allow_loopback):
    gw, client, low = start(["--call-allow-loopback-destinations"] if allow_loopback else [])
    try:
        phone = udp()
        # A live call, so that its legs' ports are Moat's.
        offer = client.command("offer", call_id="live", from_tag="a",
                               sdp=sdp(40000, "192.0.2.10"))
        assert offer["result"] == "ok", offer
        leg = port_of(offer["sdp"])
        # An RTP ingest's port is one of Moat's sockets too.
        status, body = api(gw, "POST", "/api/rooms/hostile/ingest",
                           {"audio": {"codec": "opus", "pt": 111}})
        assert status == 201, body
        targets = {"ng": gw.ng_port, "http": gw.http_port, "worker": gw.media_port,
                   "worker-2": gw.media_port + 1, "leg": leg, "ingest": body["port"]}
        cases = [(f"127.0.0.1:{name}", "127.0.0.1", port, "own sockets")
                 for name, port in targets.items()]
        cases.append(("[::1]:ng", "::1", gw.ng_port, "own sockets"))
        # IPv6 forms a translator or tunnel takes to 127.0.0.1 (IPv4-compatible,
        # NAT64, 6to4).
        cases += [(f"[{v6}]:ng", v6, gw.ng_port, "own sockets")
                  for v6 in ("::127.0.0.1", "64:ff9b::127.0.0.1", "2002:7f00:1::1")]
        host = host_address()
        if host:  # this host's own (non-loopback) address with Moat's ports
            cases += [(f"{host}:ng", host, gw.ng_port, "own sockets"),
                      (f"{host}:worker", host, gw.media_port, "own sockets"),
                      (f"[64:ff9b::{host}]:ng", f"64:ff9b::{host}", gw.ng_port, "own sockets")]
        cases += [("0.0.0.1", "0.0.0.1", 4000, "unspecified"),
                  ("multicast", "224.0.0.1", 4000, "multicast"),
                  ("link-local", "169.254.10.20", 4000, "link-local"),
                  ("broadcast", "255.255.255.255", 4000, "broadcast"),
                  ("nat64-multicast", "64:ff9b::224.0.0.1", 4000, "multicast")]
        if not allow_loopback:
            cases.append(("loopback", "127.0.0.1", phone.getsockname()[1], "loopback"))
        ng_before = gw.metric('moat_ng_requests_total{command="offer"}')
        for label, address, port, reason in cases:
            reply = client.command("offer", call_id=f"evil-{label}", from_tag="a",
                                   sdp=sdp(port, address))
            assert reply["result"] == "error", (label, reply)
            assert reason in reply["error-reason"], (label, reply)
            assert "sdp" not in reply
            # The answer to the live call: refused, the call unchanged.
            reply = client.command("answer", call_id="live", from_tag="a", to_tag="b",
                                   sdp=sdp(port, address))
            assert reply["result"] == "error", (label, reply)
            assert reason in reply["error-reason"], (label, reply)
        # a=rtcp naming the ng port on an otherwise fine address of this host.
        reply = client.command("offer", call_id="evil-rtcp", from_tag="a",
                               sdp=sdp(6000, "127.0.0.1", f"a=rtcp:{gw.ng_port}\r\n"))
        assert reply["result"] == "error", reply
        assert ("own sockets" if allow_loopback else "loopback") in reply["error-reason"], reply
        calls = client.command("list").get("calls", [])
        assert calls == ["live"], calls
        query = client.command("query", call_id="live")
        assert query["result"] == "ok" and "b" not in query.get("tags", {}), query
        # c=0.0.0.0 is hold (RFC 2543): accepted, and Moat sends nothing anywhere.
        hold = client.command("offer", call_id="hold", from_tag="h",
                              sdp=sdp(gw.ng_port, "0.0.0.0"))
        assert hold["result"] == "ok", hold
        answer = client.command("answer", call_id="hold", from_tag="h", to_tag="p",
                                sdp=sdp(phone.getsockname()[1], "127.0.0.1"))
        if allow_loopback:
            assert answer["result"] == "ok", answer
            phone.sendto(rtp(1, 0x40), ("127.0.0.1", port_of(hold["sdp"])))
            assert wait_metric(lambda: call_drops(gw, "no_destination"), lambda v: v >= 1) >= 1
        # No ng request reached the ng socket through a call.
        assert gw.metric('moat_ng_requests_total{command="offer"}') == ng_before + len(cases) + 2
    finally:
        finish(gw, client)


def webrtc_looking(text):
    """A plain SDP dressed as WebRTC: DTLS transport, ICE credentials and a
    fingerprint (what makes Moat hand an SDP to a WebRTC session)."""
    return text.replace("RTP/AVP", "UDP/TLS/RTP/SAVPF") + (
        "a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\n"
        "a=fingerprint:sha-256 " + ":".join(["AB"] * 32) + "\r\na=setup:active\r\n")


@pytest.mark.parametrize("allow_loopback", [False, True], ids=["default", "allow-loopback"])
def test_webrtc_looking_answer_cannot_aim_a_leg_at_moat(allow_loopback):
    """The callee answers a plain offer with an SDP that looks like WebRTC
    and names Moat's ng socket. Such an answer once skipped the destination
    check (WebRTC media goes through a session, not to the SDP's address)
    and became the leg's destination: the caller's RTP, crafted as an ng
    command, then deleted another call through Moat's own ng socket. Now it
    is refused, the call is unchanged, and the caller's packet goes nowhere."""
    gw, client, _ = start(["--call-allow-loopback-destinations"] if allow_loopback else [])
    try:
        caller, other = udp(), udp()
        phones = "127.0.0.1" if allow_loopback else "192.0.2.10"  # TEST-NET: never answers
        victim = client.command("offer", call_id="victim", from_tag="v",
                                sdp=sdp(other.getsockname()[1], phones))
        assert victim["result"] == "ok", victim
        offer = client.command("offer", call_id="x", from_tag="a",
                               sdp=sdp(caller.getsockname()[1], phones))
        assert offer["result"] == "ok", offer
        for address in ("127.0.0.1", host_address() or "127.0.0.1"):
            reply = client.command("answer", call_id="x", from_tag="a", to_tag="b",
                                   sdp=webrtc_looking(sdp(gw.ng_port, address)))
            assert reply["result"] == "error", reply
            assert "WebRTC answer" in reply["error-reason"], reply
        # A genuine answer still works; the caller's ng-shaped RTP reaches
        # the callee, not the ng socket.
        callee = udp()
        reply = client.command("answer", call_id="x", from_tag="a", to_tag="b",
                               sdp=sdp(callee.getsockname()[1], phones))
        assert reply["result"] == "ok", reply
        body = b"d7:command6:delete7:call-id6:victime"
        packet = struct.pack("!BBHII", 0x80, 8, 0x4142, 0x41424344, 0x45464748) + b"x " + body
        deletes = gw.metric('moat_ng_requests_total{command="delete"}')
        if allow_loopback:
            caller.sendto(packet, ("127.0.0.1", port_of(reply["sdp"])))
            assert callee.recv(2048) == packet
        assert gw.metric('moat_ng_requests_total{command="delete"}') == deletes
        assert sorted(client.command("list")["calls"]) == ["victim", "x"]
    finally:
        finish(gw, client)


def test_answer_naming_own_leg_does_not_loop(relay):
    gw, client, _ = relay
    caller = udp()
    offer = client.command("offer", call_id="loop", from_tag="a", sdp=sdp(caller.getsockname()[1]))
    assert offer["result"] == "ok", offer
    to_callee = port_of(offer["sdp"])
    reply = client.command("answer", call_id="loop", from_tag="a", to_tag="b",
                           sdp=sdp(to_callee, "127.0.0.1"))
    assert reply["result"] == "error" and "own sockets" in reply["error-reason"], reply
    before = relayed(gw)
    # One datagram to the leg the answer named: nothing circulates.
    caller.sendto(rtp(1, 0x1), ("127.0.0.1", to_callee))
    time.sleep(0.5)  # a loop relays ~100,000 times in half a second
    assert relayed(gw) - before <= 1


def test_loop_guard_drops_packets_from_own_legs():
    """A destination that was free at the answer and then became another
    call's leg: what Moat's leg sends there is dropped as 'loop' by the
    receiving leg, not relayed on."""
    gw, client, low = start(["--call-allow-loopback-destinations"], span=7, reserve=10)
    try:
        a, b, c, d = udp(), udp(), udp(), udp()
        offer = client.command("offer", call_id="one", from_tag="a", sdp=sdp(a.getsockname()[1]))
        assert offer["result"] == "ok", offer
        # Four pairs; call one holds two. Its answer may name a free one only.
        target = to_caller = None
        for port in (low, low + 2, low + 4, low + 6):
            reply = client.command("answer", call_id="one", from_tag="a", to_tag="b",
                                   sdp=sdp(port, "127.0.0.1"))
            if reply["result"] == "ok":
                target, to_caller = port, port_of(reply["sdp"])
                break
            assert "own sockets" in reply["error-reason"], reply
        assert target is not None
        # Call two takes the two pairs left, the answer's target among them.
        two = client.command("offer", call_id="two", from_tag="c", sdp=sdp(c.getsockname()[1]))
        assert two["result"] == "ok", two
        answer = client.command("answer", call_id="two", from_tag="c", to_tag="d",
                                sdp=sdp(d.getsockname()[1]))
        assert answer["result"] == "ok", answer
        assert target in (port_of(two["sdp"]), port_of(answer["sdp"]))
        before = call_drops(gw, "loop")
        a.sendto(rtp(1, 0xA), ("127.0.0.1", to_caller))
        assert wait_metric(lambda: call_drops(gw, "loop"), lambda v: v > before) == before + 1
        assert silent(c) and silent(d)
    finally:
        finish(gw, client)


SIZES = (1, 12, 1500, 1501, 1984, 1985)


def send_sizes(sock, port, make):
    for size in SIZES:
        sock.sendto(make(size), ("127.0.0.1", port))


def test_datagram_sizes_plain_and_sdes_legs(relay):
    gw, client, _ = relay
    caller, callee = udp(), udp()
    to_callee, to_caller = offer_answer(client, "sizes", caller, callee)
    before = call_drops(gw, "too_big")
    send_sizes(caller, to_caller, lambda n: rtp(n, 0x51, n) if n >= 12 else b"\x80" * n)
    got = []
    callee.settimeout(1)
    try:
        while True:
            got.append(len(callee.recv(4096)))
    except socket.timeout:
        pass
    assert sorted(got) == [12, 1500], got
    assert wait_metric(lambda: call_drops(gw, "too_big"), lambda v: v >= before + 2) == before + 2
    assert call_drops(gw, "truncated") >= 1  # 1985: over the receive capacity
    assert call_drops(gw, "malformed") >= 1

    # SDES: the callee speaks SRTP (AES_CM_128_HMAC_SHA1_80, 10-byte tag).
    sdes, plain = udp(), udp()
    offer = client.command("offer", call_id="sizes-sdes", from_tag="p",
                           sdp=sdp(plain.getsockname()[1]), transport_protocol="RTP/SAVP")
    assert offer["result"] == "ok", offer
    tag, suite, key = re.search(r"^a=crypto:(\d+) (AES_CM_128_HMAC_SHA1_80) inline:(\S+)",
                                offer["sdp"], re.M).groups()
    mine = os.urandom(30)
    answer = client.command("answer", call_id="sizes-sdes", from_tag="p", to_tag="s",
                            sdp=sdp(sdes.getsockname()[1]).replace("RTP/AVP", "RTP/SAVP")
                            + f"a=crypto:{tag} {suite} inline:{base64.b64encode(mine).decode()}\r\n")
    assert answer["result"] == "ok", answer
    to_sdes = port_of(offer["sdp"])
    to_plain = port_of(answer["sdp"])
    send = Session(Policy(key=mine, srtp_profile=Policy.SRTP_PROFILE_AES128_CM_SHA1_80,
                          ssrc_type=Policy.SSRC_ANY_OUTBOUND))
    # pylibsrtp's work buffer is 1500 bytes; these packets are larger.
    send._cdata = srtp_ffi.new("char[]", 4096)
    send._buffer = srtp_ffi.buffer(send._cdata)
    seq = [100]

    def srtp(n):
        if n < 22:
            return b"\x80" * n
        seq[0] += 1
        return send.protect(rtp(seq[0], 0x5D35, n - 10))

    before = call_drops(gw, "too_big")
    send_sizes(sdes, to_sdes, srtp)
    got = []
    plain.settimeout(1)
    try:
        while True:
            got.append(len(plain.recv(4096)))
    except socket.timeout:
        pass
    # decrypted: 1500 -> 1490, 1501 -> 1491 relayed; 1984 -> 1974 too big
    assert sorted(got) == [1490, 1491], got
    assert wait_metric(lambda: call_drops(gw, "too_big"), lambda v: v >= before + 1) == before + 1
    # And plain towards the SDES leg: protect must fit the buffer.
    send_sizes(plain, to_plain, lambda n: rtp(n, 0x77, n) if n >= 12 else b"\x80" * n)
    assert client.command("ping")["result"] == "pong"
    assert gw.get("/healthz")


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
