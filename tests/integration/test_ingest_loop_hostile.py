"""A call leg steered at an RTP ingest's port before the ingest bound it
(ASan/UBSan gateway). A SIP party's SDP is checked against Moat's own
sockets when it arrives; a party that names a port of the media range
nobody holds yet passes. Once POST /api/rooms/<room>/ingest binds that port,
the leg relays the other party's RTP into the ingest from Moat's own
address: the ingest latched on it, published the party's media into the
room and refused its real sender as unknown_tuple. Now no socket of Moat
takes a datagram that one of its own sockets sent (a port Moat holds, on
this host): the ingest drops it as "loop", before and after its real
sender latched (the latch is by address, and the leg shares loopback with
it), and the real sender's media flows."""
import socket
import time

from test_ingest_admission import AUDIO, rtp, wait_for
from test_room import api
from test_voip_hostile import finish, port_of, sdp, start, udp, wait_metric


def room_packets(gw, room):
    """Packets the room's publishers received, all together."""
    status, body = api(gw, "GET", f"/api/rooms/{room}")
    assert status == 200, body
    return sum(p["packets"] for p in body["publishers"])


def send(sock, port, first, count):
    for seq in range(first, first + count):
        sock.sendto(rtp(seq), ("127.0.0.1", port))
        time.sleep(0.005)


def ingest_on(gw, room, port, tries=8):
    """Opens ingests of `room` until one has `port` (each other one holds a
    port of the narrow range, so the free ones run out), then ends the
    others. The ingest's reply."""
    spares, found = [], None
    for _ in range(tries):
        status, body = api(gw, "POST", f"/api/rooms/{room}/ingest", AUDIO)
        assert status == 201, body
        if body["port"] == port:
            found = body
            break
        spares.append(body)
    for spare in spares:
        assert api(gw, "DELETE", spare["resource"])[0] == 204
    assert found, f"no ingest got port {port}: {[s['port'] for s in spares]}"
    return found


def test_call_leg_aimed_at_a_later_ingest_port_is_a_loop():
    # Four pairs: the call holds two, the party names one of the other two.
    gw, client, low = start(["--call-allow-loopback-destinations", "--whip-rate-per-ip", "0",
                             "--ingest-per-source", "0"], span=7, reserve=10)
    caller, callee, sender = udp(), udp(), udp()
    try:
        offer = client.command("offer", call_id="c", from_tag="a",
                               sdp=sdp(caller.getsockname()[1]))
        assert offer["result"] == "ok", offer
        answer = client.command("answer", call_id="c", from_tag="a", to_tag="b",
                                sdp=sdp(callee.getsockname()[1]))
        assert answer["result"] == "ok", answer
        to_callee, to_caller = port_of(offer["sdp"]), port_of(answer["sdp"])
        free = [p for p in range(low, low + 8, 2) if p not in (to_callee, to_caller)]
        assert len(free) == 2, (low, to_callee, to_caller)
        target = free[0]
        # The caller's re-offer names a port nobody holds yet: accepted.
        reoffer = client.command("offer", call_id="c", from_tag="a", sdp=sdp(target))
        assert reoffer["result"] == "ok", reoffer
        reanswer = client.command("answer", call_id="c", from_tag="a", to_tag="b",
                                  sdp=sdp(callee.getsockname()[1]))
        assert reanswer["result"] == "ok", reanswer
        assert port_of(reoffer["sdp"]) == to_callee

        ingest = ingest_on(gw, "victim", target)
        # Now named afresh, that port is refused (one of Moat's sockets).
        fresh = client.command("offer", call_id="fresh", from_tag="x", sdp=sdp(target))
        assert fresh["result"] == "error" and "own sockets" in fresh["error-reason"], fresh

        # The callee speaks: its leg towards the caller relays to the ingest
        # from Moat's own address and port. Nothing of it is taken.
        loops = gw.drops("loop")
        send(callee, to_callee, 1, 30)
        wait_for(lambda: gw.drops("loop") >= loops + 30 or room_packets(gw, "victim"), 5)
        assert room_packets(gw, "victim") == 0, "the callee's RTP was published in the room"
        assert gw.drops("loop") == loops + 30

        # The ingest's real sender (on loopback too) is latched and published.
        refused = gw.drops("unknown_tuple")
        send(sender, ingest["port"], 100, 20)
        assert wait_for(lambda: room_packets(gw, "victim") == 20, 5), room_packets(gw, "victim")
        assert gw.drops("unknown_tuple") == refused

        # The leg shares the latched address; its relay is still a loop.
        send(callee, to_callee, 31, 20)
        assert wait_metric(lambda: gw.drops("loop"), lambda v: v >= loops + 50) == loops + 50
        send(sender, ingest["port"], 120, 5)
        assert wait_for(lambda: room_packets(gw, "victim") == 25, 5), room_packets(gw, "victim")
    finally:
        for s in (caller, callee, sender):
            s.close()
        finish(gw, client)


def test_loop_guard_leaves_a_sender_on_a_port_moat_no_longer_holds():
    """A leg's port is Moat's only while the leg holds it: once the call is
    deleted, a program on this host sending from that port to an ingest is
    an ordinary sender."""
    gw, client, low = start(["--call-allow-loopback-destinations"], span=7, reserve=10)
    try:
        caller = udp()
        offer = client.command("offer", call_id="gone", from_tag="a",
                               sdp=sdp(caller.getsockname()[1]))
        assert offer["result"] == "ok", offer
        leg = port_of(offer["sdp"])
        assert client.command("delete", call_id="gone")["result"] == "ok"
        program = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        deadline = time.time() + 5
        while True:  # the leg's socket closes on its worker, soon after
            try:
                program.bind(("127.0.0.1", leg))
                break
            except OSError:
                assert time.time() < deadline, f"port {leg} still bound"
                time.sleep(0.1)
        try:
            status, ingest = api(gw, "POST", "/api/rooms/after/ingest", AUDIO)
            assert status == 201, ingest
            loops = gw.drops("loop")
            send(program, ingest["port"], 1, 10)
            assert wait_for(lambda: room_packets(gw, "after") == 10, 5), room_packets(gw, "after")
            assert gw.drops("loop") == loops
        finally:
            program.close()
        caller.close()
    finally:
        finish(gw, client)
