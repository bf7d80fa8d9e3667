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
  * datagrams of 1, 12, 1500, 1501, 1984 and 1985 bytes to a plain leg and
    an SDES leg: the gateway lives, what exceeds the relay MTU is counted
    too_big.
Calls with a WebRTC party are attacked in test_voip_webrtc_hostile.py."""
import base64
import os
import re
import socket
import struct
import time

import pytest
from pylibsrtp import Policy, Session
from pylibsrtp._binding import ffi as srtp_ffi

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


def test_rtcp_of_a_leg_that_ends_up_not_muxed_cannot_aim_at_moat(relay):
    """a=rtcp-mux in an SDP only asks: an answer without it (or Moat's own
    offer without it) leaves the leg sending RTCP to the RTP port + 1. An
    offer whose port + 1 is Moat's ng socket, answered without rtcp-mux,
    would have the callee's RTCP (an ng command after a cookie) reach ng as
    Moat itself, and ng's reply come back: refused, on either side."""
    gw, client, low = relay
    victim = client.command("offer", call_id="victim", from_tag="v",
                            sdp=sdp(udp().getsockname()[1]))
    assert victim["result"] == "ok", victim
    callee = udp()
    # Offer side: m= port ng - 1 with a=rtcp-mux.
    offer = client.command("offer", call_id="mux-flip", from_tag="a",
                           sdp=sdp(gw.ng_port - 1, extra="a=rtcp-mux\r\n"))
    assert offer["result"] == "error", offer
    assert "own sockets" in offer["error-reason"], offer
    # Answer side: a plain offer (Moat offers the callee no rtcp-mux), the
    # answer names port ng - 1 with a=rtcp-mux.
    caller = udp()
    offer = client.command("offer", call_id="mux-answer", from_tag="a",
                           sdp=sdp(caller.getsockname()[1]))
    assert offer["result"] == "ok", offer
    assert "a=rtcp-mux" not in offer["sdp"], offer["sdp"]
    answer = client.command("answer", call_id="mux-answer", from_tag="a", to_tag="b",
                            sdp=sdp(gw.ng_port - 1, extra="a=rtcp-mux\r\n"))
    assert answer["result"] == "error", answer
    assert "own sockets" in answer["error-reason"], answer
    # A mux'd phone elsewhere is still fine.
    fine = client.command("offer", call_id="mux-fine", from_tag="a",
                          sdp=sdp(callee.getsockname()[1], extra="a=rtcp-mux\r\n"))
    assert fine["result"] == "ok", fine
    # The attack's packet: an RTCP-looking ng delete to every RTCP port Moat
    # gave out, from the callee. The victim call survives.
    from ng_client import bencode
    packet = b"\x80\xc9\x00\x01AAAA " + bencode({"command": "delete", "call-id": "victim"})
    for reply in (offer, fine):
        callee.sendto(packet, ("127.0.0.1", port_of(reply["sdp"]) + 1))
    time.sleep(0.5)
    assert gw.metric('moat_ng_requests_total{command="delete"}') == 0
    assert "victim" in client.command("list").get("calls", [])


def spoofed_udp(source_port, dest_port, payload, address="127.0.0.1"):
    """One IPv4/UDP datagram from address:source_port (a raw socket: the
    tests run as root), UDP checksum 0 (none, RFC 768)."""
    udp_header = struct.pack("!HHHH", source_port, dest_port, 8 + len(payload), 0)
    total = 20 + len(udp_header) + len(payload)
    source = socket.inet_aton(address)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0, 64, socket.IPPROTO_UDP, 0,
                     source, source)
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW) as raw:
        raw.sendto(ip + udp_header + payload, (address, 0))


def test_ng_requests_from_moats_own_sockets_are_dropped(relay):
    """Defence in depth behind the destination checks: whatever path could
    ever relay a datagram to the ng socket, it would come from one of
    Moat's own sockets on this host, and the ng socket drops those
    unanswered (counted as own_source). Forged here with a raw socket from
    a call leg's port, the HTTP port and a worker port; the same request
    from an ordinary port runs."""
    gw, client, low = relay
    victim = client.command("offer", call_id="victim", from_tag="v",
                            sdp=sdp(udp().getsockname()[1]))
    assert victim["result"] == "ok", victim
    leg = port_of(victim["sdp"])
    from ng_client import bencode
    request = b"own1 " + bencode({"command": "delete", "call-id": "victim"})
    for port in (leg, leg + 1, gw.http_port, gw.media_port):
        spoofed_udp(port, gw.ng_port, request)
    assert wait_metric(lambda: gw.metric('moat_ng_errors_total{reason="own_source"}'),
                       lambda v: v >= 4) == 4
    assert gw.metric('moat_ng_requests_total{command="delete"}') == 0
    assert "victim" in client.command("list").get("calls", [])
    # From a port that is not Moat's: the delete runs.
    free = udp()
    spoofed_udp(free.getsockname()[1], gw.ng_port, request)
    assert wait_metric(lambda: gw.metric('moat_ng_requests_total{command="delete"}'),
                       lambda v: v >= 1) == 1
    assert free.recv(4096).startswith(b"own1 d")


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
