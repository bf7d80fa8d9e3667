"""What the kernel drops at a worker's media socket is counted.

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
import time

from conftest import Gateway

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
