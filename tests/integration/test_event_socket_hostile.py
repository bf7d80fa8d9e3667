"""An event listener that sends (gateway/session/event_socket.c): listeners
only receive, so what they send is read a bounded amount at a time, never
kept, and past a small budget ends the listener. Under libsoup's own
WebSocket connection each of these held or grew the control thread: a
flood of pings (a pong queued per ping, each insertion walking the queue:
/healthz took 26 s), one never-finished message in small fragments (RSS
2.7 GiB in 10 s), compressed frames (1,000x inflation). Each is cut off
here within a second, memory stays flat, the API answers meanwhile, and a
polite listener's ping and close are answered. Against the ASan build in
`make hostile`."""
import os
import socket
import struct
import threading
import time
import urllib.request

from test_surfaces_hostile import make_gateway, websocket, wait_for  # noqa: F401

MASK = b"\x11\x22\x33\x44"


def frame(opcode, payload=b"", fin=True, rsv1=False):
    """A masked client frame."""
    first = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode
    n = len(payload)
    if n < 126:
        head = bytes([first, 0x80 | n])
    elif n < 65536:
        head = bytes([first, 0x80 | 126]) + struct.pack(">H", n)
    else:
        head = bytes([first, 0x80 | 127]) + struct.pack(">Q", n)
    return head + MASK + bytes(b ^ MASK[i % 4] for i, b in enumerate(payload))


def rss_mib(gw):
    with open(f"/proc/{gw.process.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return 0


def healthz_seconds(gw):
    start = time.time()
    with urllib.request.urlopen(gw.base + "/healthz", timeout=30) as r:
        r.read()
    return time.time() - start


def flood(s, chunk, seconds=5.0):
    """Sends chunk again and again (a client that never reads) until the
    gateway ends the connection or `seconds` pass; returns (bytes sent,
    whether the gateway ended it)."""
    s.settimeout(1.0)
    sent, deadline = 0, time.time() + seconds
    try:
        while time.time() < deadline:
            s.sendall(chunk)
            sent += len(chunk)
    except socket.timeout:
        return sent, False
    except OSError:
        return sent, True
    return sent, False


def probe_healthz(gw, results, stop):
    """/healthz every 100 ms from another thread while an attack runs."""
    while not stop.is_set():
        results.append(healthz_seconds(gw))
        stop.wait(0.1)


def test_listeners_that_send_are_cut_off_and_the_api_stays_up(make_gateway):
    gw = make_gateway()
    attacks = {
        "ping flood": frame(0x9, b"P" * 125) * 200,
        "unfinished message in small fragments":
            frame(0x2, b"A" * 1000, fin=False) + frame(0x0, b"A" * 1000, fin=False) * 100,
        "compressed frames": frame(0x2, b"x" * 1000, rsv1=True) * 100,
        "one large message": frame(0x2, os.urandom(100_000)),
        "data frames within the limits": frame(0x1, b"{}" * 400) * 100,
    }
    before = rss_mib(gw)
    for name, chunk in attacks.items():
        status, head, s = websocket(gw, "/api/events?topic=rooms/attack")
        assert " 101 " in status, (name, head)
        times, stop = [], threading.Event()
        prober = threading.Thread(target=probe_healthz, args=(gw, times, stop))
        prober.start()
        sent, ended = flood(s, chunk)
        stop.set()
        prober.join()
        s.close()
        assert ended, f"{name}: still open after {sent} bytes"
        # Cut off after a small budget (16 KiB and 1 KiB/s), not megabytes
        # later (the kernel's buffers add to what the client could send).
        assert sent < 8 << 20, (name, sent)
        assert times and max(times) < 2.0, (name, times)
        assert rss_mib(gw) < before + 40, (name, before, rss_mib(gw))
    assert wait_for(lambda: gw.metric("moat_event_listeners") == 0)
    cut = (gw.metric('moat_event_listeners_closed_total{reason="sent_too_much"}') +
           gw.metric('moat_event_listeners_closed_total{reason="protocol"}'))
    assert cut == len(attacks), gw.metrics()
    assert healthz_seconds(gw) < 1.0


def read_frame(s):
    """One server frame: (opcode, payload); server frames are unmasked."""
    def exactly(n):
        data = b""
        while len(data) < n:
            chunk = s.recv(n - len(data))
            assert chunk, "connection ended"
            data += chunk
        return data
    first, second = exactly(2)
    n = second & 0x7f
    if n == 126:
        n = struct.unpack(">H", exactly(2))[0]
    elif n == 127:
        n = struct.unpack(">Q", exactly(8))[0]
    assert not second & 0x80, "a masked server frame"
    return first & 0x0f, exactly(n)


def test_a_polite_listener_gets_its_pong_and_close(make_gateway):
    gw = make_gateway()
    status, head, s = websocket(gw, "/api/events?topic=rooms/polite")
    assert " 101 " in status, head
    # No extension was accepted (no permessage-deflate).
    assert b"sec-websocket-extensions" not in head.lower(), head
    s.settimeout(5)
    s.sendall(frame(0x9, b"are you there"))
    assert read_frame(s) == (0xA, b"are you there")
    # Frames at the size limit (1 KiB) are skipped and the listener stays;
    # the ping after them is still answered.
    s.sendall(frame(0x2, b"x" * 1024) + frame(0x1, b"y" * 1024, fin=False) +
              frame(0x0, b"z" * 1024) + frame(0x9, b"still"))
    assert read_frame(s) == (0xA, b"still")
    # A message from the client (not expected, skipped), then a close.
    s.sendall(frame(0x1, b'{"hello":1}') + frame(0x8, struct.pack(">H", 1000) + b"bye"))
    assert read_frame(s) == (0x8, struct.pack(">H", 1000))
    assert s.recv(1) == b""
    s.close()
    assert wait_for(lambda: gw.metric("moat_event_listeners") == 0)
    # A plain GET of the events path: a JSON 426, not a WebSocket.
    try:
        urllib.request.urlopen(gw.base + "/api/events?topic=x", timeout=5)
        assert False, "no 426"
    except urllib.error.HTTPError as e:
        assert e.code == 426 and b"websocket_required" in e.read()


def test_a_frame_one_byte_over_the_limit_ends_the_listener(make_gateway):
    gw = make_gateway()
    status, head, s = websocket(gw, "/api/events?topic=rooms/limit")
    assert " 101 " in status, head
    s.settimeout(5)
    s.sendall(frame(0x2, b"x" * 1025))
    try:
        assert s.recv(1) == b""
    except ConnectionResetError:
        pass
    s.close()
    assert wait_for(lambda: gw.metric(
        'moat_event_listeners_closed_total{reason="protocol"}') == 1)
    # A control frame longer than 125 bytes too.
    status, head, s = websocket(gw, "/api/events?topic=rooms/limit")
    s.settimeout(5)
    s.sendall(frame(0x9, b"p" * 126))
    try:
        assert s.recv(1) == b""
    except ConnectionResetError:
        pass
    s.close()
    assert wait_for(lambda: gw.metric(
        'moat_event_listeners_closed_total{reason="protocol"}') == 2)
