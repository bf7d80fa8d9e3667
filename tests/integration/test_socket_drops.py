"""What the kernel drops at a worker's media socket, and at a call leg's,
is counted.

A worker that falls behind (CPU saturated, or stopped) lets its socket's
receive queue fill; the kernel then drops datagrams before Moat ever sees
them. Without SO_RXQ_OVFL those drops showed on no Moat counter: a
saturated gateway's subscribers lost the tail of a run and /metrics said
nothing (only the host-wide /proc/net/snmp could). The gateway is stopped
(SIGSTOP) while datagrams arrive, so its queue overflows for certain; after
SIGCONT every datagram sent is either received or counted as dropped at
the socket, exactly (loopback loses nothing else)."""
import os
import signal
import socket
import struct
import time

from conftest import Gateway
from voip_peers import ng_relay, sdp_port, udp_phone

DROPPED = "moat_socket_dropped_datagrams_total"
RECEIVED = "moat_datagrams_received_total"
# 20,000 x 1200 bytes: several times any receive buffer the worker gets
# (4 MiB asked, doubled by the kernel for its bookkeeping).
COUNT, SIZE = 20000, 1200


def wait_for_quiet(gw, deadline_s=10.0):
    """Metrics once the received count stops moving (the backlog is read)."""
    last, end = None, time.monotonic() + deadline_s
    while time.monotonic() < end:
        metrics = gw.metrics()
        now = (metrics.get(RECEIVED, 0.0), metrics.get(DROPPED, 0.0))
        if now == last:
            return metrics
        last = now
        time.sleep(0.3)
    return gw.metrics()


def test_a_stalled_worker_counts_what_the_kernel_dropped():
    # The kernel prefilter would drop this unknown source's datagrams in the
    # kernel (they would count as socket drops too); off, every datagram
    # reaches the queue, and the queue alone decides.
    gw = Gateway(["--prefilter-kernel", "off"], workers=1)
    try:
        before = gw.metrics()
        assert before.get(DROPPED, 0.0) == 0
        sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        payload = bytes([0x80, 0x60]) + bytes(SIZE - 2)
        os.kill(gw.process.pid, signal.SIGSTOP)
        try:
            for _ in range(COUNT):
                sender.sendto(payload, ("127.0.0.1", gw.media_port))
        finally:
            os.kill(gw.process.pid, signal.SIGCONT)
        sender.close()
        after = wait_for_quiet(gw)
        received = after[RECEIVED] - before.get(RECEIVED, 0.0)
        dropped = after[DROPPED] - before.get(DROPPED, 0.0)
        assert dropped > 0, f"the queue overflowed but nothing counts it (received {received})"
        assert received > 0
        assert received + dropped == COUNT, (received, dropped)
        # What was read is junk from an unknown source, counted as such.
        assert gw.drops("unknown_tuple") + gw.drops("malformed") >= received
    finally:
        assert gw.stop() == 0


def sdp(port):
    return ("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {port} RTP/AVP 8\r\na=rtpmap:8 PCMA/8000\r\na=sendrecv\r\n")


def rtp(seq, pt=8):
    return struct.pack("!BBHII", 0x80, pt, seq & 0xFFFF, seq * 160, 0xCA11) + bytes(160)


def call_totals(gw):
    """(RTP the call legs relayed, every datagram they dropped, by reason)."""
    metrics = gw.metrics()
    relayed = metrics.get('moat_call_relayed_packets_total{kind="rtp"}', 0.0)
    drops = {k.split('reason="')[1].rstrip('"}'): v for k, v in metrics.items()
             if k.startswith("moat_call_dropped_packets_total{")}
    return relayed, drops


def test_a_stalled_call_leg_counts_what_the_kernel_dropped():
    """A plain call leg's own socket: the same accounting, through
    SO_RXQ_OVFL (each datagram carries its socket's running drop count), so
    the drops show with the first datagram read after them: one more is
    sent once the backlog is read. Before, a leg's queue overflowing showed
    on no counter."""
    with ng_relay() as (gw, client, _):
        caller, callee = udp_phone(2.0), udp_phone(2.0)
        offer = client.command("offer", call_id="stall", from_tag="caller",
                               sdp=sdp(caller.getsockname()[1]))
        assert offer["result"] == "ok", offer
        answer = client.command("answer", call_id="stall", from_tag="caller",
                                to_tag="callee", sdp=sdp(callee.getsockname()[1]))
        assert answer["result"] == "ok", answer
        to_caller = sdp_port(answer["sdp"])  # the port the caller sends to
        # Before the first packet: the worker counts a relayed packet after
        # its send returns, so a reading taken once the callee has it may
        # not count it yet (the sum came out one over).
        relayed0, drops0 = call_totals(gw)
        caller.sendto(rtp(0), ("127.0.0.1", to_caller))
        assert callee.recv(4096) == rtp(0)
        # The callee reads no more: its own queue overflows, Moat's sends succeed.
        os.kill(gw.process.pid, signal.SIGSTOP)
        try:
            for seq in range(1, COUNT + 1):
                caller.sendto(rtp(seq), ("127.0.0.1", to_caller))
        finally:
            os.kill(gw.process.pid, signal.SIGCONT)
        last, deadline = None, time.monotonic() + 10
        while time.monotonic() < deadline:
            now = call_totals(gw)
            if now == last:
                break
            last = now
            time.sleep(0.3)
        caller.sendto(rtp(COUNT + 1), ("127.0.0.1", to_caller))
        deadline, sent = time.monotonic() + 5, COUNT + 2
        while time.monotonic() < deadline:
            relayed, drops = call_totals(gw)
            handled = relayed - relayed0 + sum(drops.values()) - sum(drops0.values())
            if handled >= sent:
                break
            time.sleep(0.1)
        queue = drops.get("socket_queue", 0.0) - drops0.get("socket_queue", 0.0)
        assert queue > 0, f"the leg's queue overflowed but nothing counts it: {drops}"
        assert relayed - relayed0 > 0
        assert handled == sent, (relayed - relayed0, drops)
        caller.close()
        callee.close()
        assert client.command("delete", call_id="stall")["result"] == "ok"


def test_a_stalled_ingest_counts_what_the_kernel_dropped():
    """A plain RTP ingest's own socket, the same way (SO_RXQ_OVFL): its
    drops join the worker socket's count once a datagram after them is
    read. Before, an ingest's full queue showed on no counter."""
    from test_room import api
    gw = Gateway(["--prefilter-kernel", "off"], workers=1)
    try:
        status, body = api(gw, "POST", "/api/rooms/stall/ingest",
                           {"audio": {"codec": "opus", "pt": 111}, "source": "127.0.0.1"})
        assert status == 201, body
        port = body["port"]
        sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

        def received():
            status, room = api(gw, "GET", "/api/rooms/stall")
            return room["publishers"][0]["packets"] if status == 200 and room["publishers"] else 0

        sender.sendto(rtp(0, 111), ("127.0.0.1", port))
        deadline = time.monotonic() + 5
        while received() < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        base_received, base_dropped = received(), gw.metric(DROPPED)
        os.kill(gw.process.pid, signal.SIGSTOP)
        try:
            for seq in range(1, COUNT + 1):
                sender.sendto(rtp(seq, 111), ("127.0.0.1", port))
        finally:
            os.kill(gw.process.pid, signal.SIGCONT)
        last, deadline = None, time.monotonic() + 10
        while time.monotonic() < deadline:
            now = received()
            if now == last:
                break
            last = now
            time.sleep(0.3)
        sender.sendto(rtp(COUNT + 1, 111), ("127.0.0.1", port))
        sent, deadline = COUNT + 1, time.monotonic() + 5
        while time.monotonic() < deadline:
            got = received() - base_received
            dropped = gw.metric(DROPPED) - base_dropped
            if got + dropped >= sent:
                break
            time.sleep(0.1)
        sender.close()
        assert dropped > 0, f"the ingest's queue overflowed but nothing counts it (got {got})"
        assert got + dropped == sent, (got, dropped)
    finally:
        assert gw.stop() == 0
