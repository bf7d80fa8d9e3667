"""Who may be first at a plain RTP ingest without "source": the first
sender of a valid RTP packet. A datagram that only looks like RTP (version
2, but a CSRC count or extension its length cannot hold) is dropped as
malformed; it latched the ingest all the same, so a scan across the media
ports with one such 12-byte packet took every open ingest (the real sender
refused as unknown_tuple) and one a timeout kept it from ever ending. Now
such a packet neither latches the ingest nor keeps it alive."""
import socket
import time

from test_ingest_admission import AUDIO, make_gateway, request, rtp, sessions, wait_for  # noqa: F401

# V=2, CC=15 in a 12-byte packet: no room for the CSRCs.
NOT_RTP = bytes([0x8F, 111, 0, 1, 0, 0, 0, 0, 0, 0, 0x12, 0x34])


def test_a_packet_that_is_not_rtp_neither_latches_nor_keeps_an_ingest(make_gateway):
    gw = make_gateway("--ingest-idle-timeout", "2")
    status, _, ingest = request(gw, "POST", "/api/rooms/first/ingest", AUDIO)
    assert status == 201, ingest
    attacker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    attacker.bind(("127.0.0.2", 0))
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender.bind(("127.0.0.1", 0))
    try:
        malformed = gw.drops("malformed")
        attacker.sendto(NOT_RTP, ("127.0.0.1", ingest["port"]))
        assert wait_for(lambda: gw.drops("malformed") > malformed, 5)
        # The real sender comes second and is the one taken.
        refused = gw.drops("unknown_tuple")
        for i in range(20):
            sender.sendto(rtp(i), ("127.0.0.1", ingest["port"]))
            time.sleep(0.02)
        assert wait_for(lambda: request(gw, "GET", "/api/rooms/first")[2]["publishers"][0]
                        ["packets"] == 20, 5), request(gw, "GET", "/api/rooms/first")
        assert gw.drops("unknown_tuple") == refused
        # Only packets that are not RTP from now on: the ingest ends at its
        # idle timeout.
        deadline = time.time() + 5
        while time.time() < deadline and sessions(gw) > 0:
            sender.sendto(NOT_RTP, ("127.0.0.1", ingest["port"]))
            time.sleep(0.3)
        assert sessions(gw) == 0
    finally:
        attacker.close()
        sender.close()


def test_rtcp_from_the_sender_is_counted_and_keeps_nothing_alive(make_gateway):
    """RTCP (rtcp-mux) from an ingest's sender is not needed (nothing goes
    back to it): each is counted as rtcp_ignored (before, dropped with no
    count anywhere), it neither latches an ingest nor keeps one alive."""
    gw = make_gateway("--ingest-idle-timeout", "2")
    status, _, ingest = request(gw, "POST", "/api/rooms/rtcp/ingest", AUDIO)
    assert status == 201, ingest
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender.bind(("127.0.0.1", 0))
    report = bytes([0x80, 200, 0, 6, 0x12, 0x34, 0x56, 0x78]) + bytes(20)  # an SR
    to = ("127.0.0.1", ingest["port"])
    try:
        ignored = gw.drops("rtcp_ignored")
        for _ in range(10):
            sender.sendto(report, to)
        assert wait_for(lambda: gw.drops("rtcp_ignored") == ignored + 10, 5), \
            gw.drops("rtcp_ignored")
        sender.sendto(rtp(0), to)
        assert wait_for(lambda: request(gw, "GET", "/api/rooms/rtcp")[2]["publishers"][0]
                        ["packets"] == 1, 5)
        deadline = time.time() + 5
        while time.time() < deadline and sessions(gw) > 0:
            sender.sendto(report, to)
            time.sleep(0.3)
        assert sessions(gw) == 0
        assert gw.drops("rtcp_ignored") >= ignored + 15
    finally:
        sender.close()
