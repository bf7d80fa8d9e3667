"""Parallel TCP flows inside the tunnel for bench/tunnel (run with `ip netns
exec`): `sink PORT FLOWS SECONDS CC` prints "ready", accepts FLOWS
connections and prints the payload bytes received per second over SECONDS
from the first byte; `source ADDRESS PORT FLOWS SECONDS CC` keeps FLOWS
connections full for SECONDS. CC: the sockets' TCP congestion control."""
import selectors
import socket
import sys
import time


def set_cc(sock, cc):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())


def sink(port, flows, seconds, cc):
    listener = socket.socket()
    set_cc(listener, cc)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(flows)
    print("ready", flush=True)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    received, start, end = 0, None, None
    deadline = time.monotonic() + seconds + 60
    while time.monotonic() < deadline:
        now = time.monotonic()
        if end and now >= end:
            break
        for key, _ in sel.select(timeout=0.2):
            if key.fileobj is listener:
                conn, _ = listener.accept()
                conn.setblocking(False)
                sel.register(conn, selectors.EVENT_READ)
                continue
            try:
                data = key.fileobj.recv(1 << 18)
            except BlockingIOError:
                continue
            if not data:
                sel.unregister(key.fileobj)
                continue
            if start is None:
                start = time.monotonic()
                end = start + seconds
            received += len(data)
    elapsed = (min(time.monotonic(), end) - start) if start else 0
    print(f"bytes_per_s {received / elapsed if elapsed > 0 else 0:.0f}", flush=True)


def source(address, port, flows, seconds, cc):
    conns = []
    for _ in range(flows):
        c = socket.socket()
        set_cc(c, cc)
        c.settimeout(30)
        c.connect((address, port))
        conns.append(c)
    for c in conns:
        c.setblocking(False)
    sel = selectors.DefaultSelector()
    for c in conns:
        sel.register(c, selectors.EVENT_WRITE)
    chunk = bytes(65536)
    end = time.monotonic() + seconds + 2
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.2):
            try:
                key.fileobj.send(chunk)
            except (BlockingIOError, ConnectionError):
                pass
    for c in conns:
        c.close()


if __name__ == "__main__":
    if sys.argv[1] == "sink":
        sink(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    else:
        source(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
