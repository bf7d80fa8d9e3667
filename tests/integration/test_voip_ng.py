"""Calls driven over the ng protocol without a SIP proxy: the test speaks
ng to Moat as Kamailio's rtpengine module would (offer, answer, query,
list, delete) with plain RTP/AVP SDPs, and two UDP sockets play caller and
callee. RTP crosses Moat both ways to the ports the rewritten SDPs name,
the first packet latches each leg (a third party is then dropped), query
counts what was relayed, delete with delete-delay 0 stops relaying and
frees the legs, and bad input gets error replies while the call lives on."""
import json
import socket
import struct
import time

import pytest

from ng_client import NgClient
from voip_peers import ng_relay, relay_gateway, sdp_port, udp_phone


def phone_sdp(port, session="1"):
    return ("v=0\r\n"
            f"o=- {session} 1 IN IP4 127.0.0.1\r\n"
            "s=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {port} RTP/AVP 8 0 101\r\n"
            "a=rtpmap:8 PCMA/8000\r\na=rtpmap:0 PCMU/8000\r\n"
            "a=rtpmap:101 telephone-event/8000\r\na=sendrecv\r\n")


def rtp(seq, ssrc=0x1234ABCD):
    return struct.pack("!BBHII", 0x80, 8, seq, seq * 160, ssrc) + bytes(160)


def udp():
    return udp_phone(2)


@pytest.fixture
def voip():
    with ng_relay() as (gw, client, ports):
        yield gw, client, ports


def establish(client, call_id, caller, callee):
    offer = client.command("offer", call_id=call_id, from_tag="caller-tag",
                           sdp=phone_sdp(caller.getsockname()[1]), flags=["trust-address"],
                           replace=["origin"])
    assert offer["result"] == "ok", offer
    answer = client.command("answer", call_id=call_id, from_tag="caller-tag",
                            to_tag="callee-tag", sdp=phone_sdp(callee.getsockname()[1], "2"))
    assert answer["result"] == "ok", answer
    return offer["sdp"], answer["sdp"]


def test_ng_call_relays_latches_and_deletes(voip):
    gw, client, (low, high) = voip
    caller, callee, intruder = udp(), udp(), udp()
    offer_sdp, answer_sdp = establish(client, "ng-call-1", caller, callee)
    to_callee, to_caller = sdp_port(offer_sdp), sdp_port(answer_sdp)
    # The SDPs now point at Moat: its address, ports from the range, no ICE.
    for sdp, port in ((offer_sdp, to_callee), (answer_sdp, to_caller)):
        assert "c=IN IP4 127.0.0.1" in sdp
        assert low <= port <= high and port % 2 == 0
        assert f"a=rtcp:{port + 1}" in sdp
        assert "o=- " in sdp and "IN IP4 127.0.0.1" in sdp
    assert to_callee != to_caller

    for seq in range(20):
        caller.sendto(rtp(seq), ("127.0.0.1", to_caller))
    got = [callee.recvfrom(2048) for _ in range(20)]
    assert all(len(data) == 172 for data, _ in got)
    assert {source[1] for _, source in got} == {to_callee}  # sent from Moat's callee-facing port
    for seq in range(5):
        callee.sendto(rtp(seq, 0x55667788), ("127.0.0.1", to_callee))
    back = [caller.recvfrom(2048) for _ in range(5)]
    assert {source[1] for _, source in back} == {to_caller}

    # RTCP: a receiver report to the RTCP port reaches the callee's RTP port + 1.
    callee_rtcp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    callee_rtcp.settimeout(2)
    try:
        callee_rtcp.bind(("127.0.0.1", callee.getsockname()[1] + 1))
        has_rtcp = True
    except OSError:
        has_rtcp = False
    if has_rtcp:
        caller.sendto(struct.pack("!BBHI", 0x80, 201, 1, 0x1234ABCD), ("127.0.0.1", to_caller + 1))
        data, _ = callee_rtcp.recvfrom(2048)
        assert data[1] == 201

    # Latched: a third party's packets are dropped, not relayed.
    for seq in range(10):
        intruder.sendto(rtp(seq, 0xBAD), ("127.0.0.1", to_caller))
    callee.settimeout(0.5)
    with pytest.raises(socket.timeout):
        callee.recvfrom(2048)

    query = client.command("query", call_id="ng-call-1")
    assert query["result"] == "ok", query
    assert query["totals"]["RTP"]["packets"] == 25
    assert query["totals"]["RTP"]["bytes"] == 25 * 172
    assert set(query["tags"]) == {"caller-tag", "callee-tag"}
    assert str(0x1234ABCD) in query["SSRC"] and str(0x55667788) in query["SSRC"]
    caller_media = query["tags"]["caller-tag"]["medias"][0]
    assert caller_media["streams"][0]["local port"] == to_caller
    assert caller_media["streams"][0]["stats"]["packets"] == 20
    assert "ng-call-1" in client.command("list")["calls"]
    api = json.loads(gw.get("/api/calls"))["calls"]
    assert [c["call_id"] for c in api] == ["ng-call-1"]
    assert api[0]["tags"][0]["media"][0]["rtp"]["packets"] == 20

    metrics = gw.metrics()
    assert metrics["moat_calls"] == 1 and metrics["moat_call_legs"] == 2
    assert metrics['moat_call_relayed_packets_total{kind="rtp"}'] == 25
    assert metrics['moat_call_dropped_packets_total{reason="source"}'] == 10

    deleted = client.command("delete", call_id="ng-call-1", from_tag="caller-tag",
                             delete_delay=0)
    assert deleted["result"] == "ok", deleted
    time.sleep(0.2)
    caller.sendto(rtp(99), ("127.0.0.1", to_caller))
    with pytest.raises(socket.timeout):
        callee.recvfrom(2048)
    metrics = gw.metrics()
    assert metrics["moat_calls"] == 0 and metrics["moat_call_legs"] == 0
    assert client.command("query", call_id="ng-call-1")["result"] == "error"
    unknown = client.command("delete", call_id="ng-call-1", from_tag="caller-tag")
    assert unknown["result"] == "ok" and "warning" in unknown
    fatal = client.command("delete", call_id="ng-call-1", from_tag="caller-tag",
                           flags=["fatal"])
    assert fatal["result"] == "error"
    for s in (caller, callee, intruder, callee_rtcp):
        s.close()


def test_ng_delete_delay_keeps_relaying(voip):
    gw, client, _ = voip
    caller, callee = udp(), udp()
    offer_sdp, answer_sdp = establish(client, "ng-call-2", caller, callee)
    deleted = client.command("delete", call_id="ng-call-2", from_tag="caller-tag",
                             delete_delay=30)
    assert deleted["result"] == "ok"
    caller.sendto(rtp(1), ("127.0.0.1", sdp_port(answer_sdp)))
    assert len(callee.recvfrom(2048)[0]) == 172
    assert gw.metric("moat_calls") == 1
    caller.close()
    callee.close()


def test_ng_reinvite_updates_and_bad_input(voip):
    gw, client, _ = voip
    caller, callee, moved = udp(), udp(), udp()
    offer_sdp, answer_sdp = establish(client, "ng-call-3", caller, callee)
    # re-INVITE from the callee moving its media: same Moat ports, new target.
    again = client.command("offer", call_id="ng-call-3", from_tag="callee-tag",
                           sdp=phone_sdp(moved.getsockname()[1], "3"))
    assert again["result"] == "ok", again
    assert sdp_port(again["sdp"]) == sdp_port(answer_sdp)
    reply = client.command("answer", call_id="ng-call-3", from_tag="callee-tag",
                           to_tag="caller-tag", sdp=phone_sdp(caller.getsockname()[1]))
    assert reply["result"] == "ok", reply
    assert sdp_port(reply["sdp"]) == sdp_port(offer_sdp)
    assert gw.metric("moat_call_legs") == 2
    caller.sendto(rtp(7), ("127.0.0.1", sdp_port(answer_sdp)))
    assert len(moved.recvfrom(2048)[0]) == 172

    bad = [
        dict(command="offer", from_tag="x", sdp=phone_sdp(4000)),          # no call-id
        dict(command="offer", call_id="c", from_tag="x", sdp="garbage"),   # bad SDP
        dict(command="offer", call_id="c", from_tag="x",
             sdp="v=0\r\nc=IN IP4 example.org\r\nm=audio 1 RTP/AVP 0\r\n"),
        dict(command="answer", call_id="nope", from_tag="x", to_tag="y", sdp=phone_sdp(4000)),
    ]
    for keys in bad:
        command = keys.pop("command")
        reply = client.command(command, **keys)
        assert reply["result"] == "error" and reply["error-reason"], reply
    assert client.raw(b"c1 not-bencode").startswith(b"c1 ")
    # The call survived all of it.
    caller.sendto(rtp(8), ("127.0.0.1", sdp_port(answer_sdp)))
    assert len(moved.recvfrom(2048)[0]) == 172
    assert client.command("list")["calls"] == ["ng-call-3"]
    for s in (caller, callee, moved):
        s.close()


def test_ng_runs_out_of_ports():
    gw, _ = relay_gateway(reserve=6, span=3)
    client = NgClient(gw.ng_port)
    try:
        first = client.command("offer", call_id="a", from_tag="t", sdp=phone_sdp(4000))
        assert first["result"] == "ok"
        second = client.command("offer", call_id="b", from_tag="t", sdp=phone_sdp(4002))
        assert second == {"result": "error", "error-reason": "Ran out of ports"}
        assert client.command("delete", call_id="a", from_tag="t",
                              delete_delay=0)["result"] == "ok"
        time.sleep(0.2)
        assert client.command("offer", call_id="b", from_tag="t",
                              sdp=phone_sdp(4002))["result"] == "ok"
    finally:
        client.close()
        assert gw.stop() == 0


def phone_at(ip):
    """A phone's RTP socket on its own loopback address (127.0.0.x)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((ip, 0))
    s.settimeout(0.02)
    return s


def sdp_at(phone):
    ip, port = phone.getsockname()
    return (f"v=0\r\no=- 1 1 IN IP4 {ip}\r\ns=-\r\nc=IN IP4 {ip}\r\nt=0 0\r\n"
            f"m=audio {port} RTP/AVP 8\r\na=rtpmap:8 PCMA/8000\r\na=sendrecv\r\n")


def heard(phone, seconds=0.4):
    """The SSRCs of the RTP that reached `phone` within `seconds`."""
    ssrcs, until = set(), time.monotonic() + seconds
    while time.monotonic() < until:
        try:
            data, _ = phone.recvfrom(2048)
        except OSError:
            continue
        ssrcs.add(struct.unpack("!I", data[8:12])[0])
    return ssrcs


def test_ng_forked_answer_then_reinvite_from_the_winning_branch(voip):
    """A forks to B1 and B2; B1's 200 OK is answered first, B2's last (the
    call is B2's). B2's re-INVITE (from-tag B2, to-tag A) is the callee's:
    A keeps its tag and its leg while it is pending and after A's 200 OK,
    and media goes A <-> B2 (before, B2's SDP went onto the caller's leg:
    B2 heard itself, and each party was told to move to the other's port)."""
    gw, client, _ = voip
    a, b1, b2 = phone_at("127.0.0.1"), phone_at("127.0.0.2"), phone_at("127.0.0.3")
    offer = client.command("offer", call_id="fork", from_tag="A", sdp=sdp_at(a))
    assert offer["result"] == "ok", offer
    leg_b = sdp_port(offer["sdp"])
    for branch, phone in (("B1", b1), ("B2", b2)):
        answer = client.command("answer", call_id="fork", from_tag="A", to_tag=branch,
                                sdp=sdp_at(phone))
        assert answer["result"] == "ok", answer
    leg_a = sdp_port(answer["sdp"])
    assert set(client.command("query", call_id="fork")["tags"]) == {"A", "B2"}

    def talk():
        for seq in range(10):
            a.sendto(rtp(seq, 0xA), ("127.0.0.1", leg_a))
            b2.sendto(rtp(seq, 0xB2), ("127.0.0.1", leg_b))
            time.sleep(0.01)
        assert heard(a) == {0xB2}
        assert heard(b2) == {0xA}
        assert heard(b1, 0.1) == set()

    talk()
    reinvite = client.command("offer", call_id="fork", from_tag="B2", to_tag="A",
                              sdp=sdp_at(b2))
    assert reinvite["result"] == "ok", reinvite
    assert sdp_port(reinvite["sdp"]) == leg_a  # A is told to keep its own leg
    assert set(client.command("query", call_id="fork")["tags"]) == {"A", "B2"}
    talk()  # while the re-INVITE is pending
    ok = client.command("answer", call_id="fork", from_tag="B2", to_tag="A", sdp=sdp_at(a))
    assert ok["result"] == "ok", ok
    assert sdp_port(ok["sdp"]) == leg_b
    talk()
    # A's own re-INVITE afterwards is still A's.
    again = client.command("offer", call_id="fork", from_tag="A", to_tag="B2", sdp=sdp_at(a))
    assert again["result"] == "ok" and sdp_port(again["sdp"]) == leg_b, again
    # Tags that name no party (or a stranger taking the caller's place): refused.
    for tags in (dict(from_tag="X"), dict(from_tag="X", to_tag="B2")):
        refused = client.command("offer", call_id="fork", sdp=sdp_at(b1), **tags)
        assert refused["result"] == "error" and refused["error-reason"], refused
    assert set(client.command("query", call_id="fork")["tags"]) == {"A", "B2"}
    talk()
    for s in (a, b1, b2):
        s.close()


def test_ng_delete_with_tags_of_nobody_keeps_the_call(voip):
    """A delete naming tags of no party (a stale BYE of another dialog on
    the call-id) is answered as rtpengine does, ok with a warning (an error
    with fatal), and the call relays on; the callee's BYE ends it (before,
    any delete ended the call whatever its tags)."""
    gw, client, _ = voip
    caller, callee = udp(), udp()
    _, answer_sdp = establish(client, "ng-del", caller, callee)
    for tags in (dict(from_tag="X", to_tag="Y"), dict(from_tag="caller-tag", to_tag="lost-fork")):
        stale = client.command("delete", call_id="ng-del", delete_delay=0, **tags)
        assert stale == {"result": "ok", "warning": "Call-ID not found or tags didn't match"}
        fatal = client.command("delete", call_id="ng-del", delete_delay=0, flags=["fatal"],
                               **tags)
        assert fatal == {"result": "error",
                         "error-reason": "Call-ID not found or tags didn't match"}
    assert client.command("query", call_id="ng-del")["result"] == "ok"
    caller.sendto(rtp(1), ("127.0.0.1", sdp_port(answer_sdp)))
    assert len(callee.recvfrom(2048)[0]) == 172
    bye = client.command("delete", call_id="ng-del", from_tag="callee-tag",
                         to_tag="caller-tag", delete_delay=0)
    assert bye == {"result": "ok"}, bye
    assert client.command("query", call_id="ng-del")["result"] == "error"
    assert gw.metric("moat_calls") == 0
    for s in (caller, callee):
        s.close()
