"""A hostile WHIP server for the client tools' tests (moat-flood,
moat-tunnel), run as a program so it can live in a test's namespace:

  hostile_whip.py MODE [LOCATION]

listens on 127.0.0.1, an ephemeral port, prints "listening PORT", then one
line per request: "request METHOD PATH authorization=AUTH" (AUTH the
Authorization header, "-" without one). What it answers a POST:

  endless        201 + Location, then a chunked body that never ends, fast
  endless-error  400, then a chunked body that never ends, fast
  trickle        201 + Location, then a chunked body of one byte a second
  escapes        400 whose body is terminal escape sequences, quotes, a
                 fake summary field and bytes that are not UTF-8
  answer         201 with a small SDP answer whose candidate leads nowhere
                 and Location LOCATION (default /resource/N, N counting)
  hangup-trickle as answer, but a DELETE or PATCH is answered with the
                 trickle
  busy           429 Too Many Requests with Retry-After: 5 (admission
                 control that never admits)
  busy-slow      as busy, but each answer held 1.5 s first

Every other request (DELETE, PATCH) gets 200 with an empty body, except in
trickle mode (the same trickle) and endless modes (the same endless body).
"""
import itertools
import socket
import sys
import threading
import time

ESCAPES = (b"\x1b]0;PWNED\x07\x1b[2J\x1b[31mred\" packets_in=999 end=\"fake\xff\xfe\xc3 "
           b"caf\xc3\xa9")
ANSWER = (b"v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"
          b"m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\n"
          b"a=mid:0\r\na=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\n"
          b"a=fingerprint:sha-256 " + b":".join([b"AA"] * 32) + b"\r\n"
          b"a=setup:passive\r\na=sctp-port:5000\r\n"
          b"a=candidate:1 1 udp 1 127.0.0.1 9 typ host\r\n")
LOCK = threading.Lock()
RESOURCES = itertools.count(1)


def say(line):
    with LOCK:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def read_request(c):
    data = b""
    while b"\r\n\r\n" not in data:
        d = c.recv(65536)
        if not d:
            return None
        data += d
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    while len(rest) < n:
        d = c.recv(65536)
        if not d:
            break
        rest += d
    method, path = lines[0].split(" ")[:2]
    return method, path, headers.get("authorization", "-")


def endless(c, status):
    c.sendall(b"HTTP/1.1 " + status + b"\r\nLocation: /resource/1\r\n"
              b"Content-Type: application/sdp\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"a" * 65536
    piece = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
    while True:
        c.sendall(piece)


def trickle(c):
    c.sendall(b"HTTP/1.1 201 Created\r\nLocation: /resource/1\r\n"
              b"Content-Type: application/sdp\r\nTransfer-Encoding: chunked\r\n\r\n")
    while True:
        c.sendall(b"1\r\nv\r\n")
        time.sleep(1)


def answer(c, status, body, extra=b""):
    c.sendall(b"HTTP/1.1 " + status + b"\r\n" + extra +
              b"Content-Length: %d\r\n\r\n" % len(body) + body)


def handle(c, mode, location):
    try:
        while True:
            request = read_request(c)
            if request is None:
                return
            method, path, auth = request
            say(f"request {method} {path} authorization={auth.replace(' ', '_')}")
            if mode == "endless":
                endless(c, b"201 Created")
            elif mode == "endless-error":
                endless(c, b"400 Bad Request")
            elif mode == "trickle" or (mode == "hangup-trickle" and method != "POST"):
                trickle(c)
            elif method != "POST":
                answer(c, b"200 OK", b"")
            elif mode in ("busy", "busy-slow"):
                if mode == "busy-slow":
                    time.sleep(1.5)
                answer(c, b"429 Too Many Requests", b"", b"Retry-After: 5\r\n")
            elif mode == "escapes":
                answer(c, b"400 Bad Request", ESCAPES)
            else:
                where = location or f"/resource/{next(RESOURCES)}"
                answer(c, b"201 Created", ANSWER,
                       b"Content-Type: application/sdp\r\nLocation: " + where.encode() + b"\r\n")
    except OSError:
        pass
    finally:
        c.close()


def main():
    mode = sys.argv[1]
    location = sys.argv[2] if len(sys.argv) > 2 else None
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    say(f"listening {s.getsockname()[1]}")
    while True:
        c, _ = s.accept()
        threading.Thread(target=handle, args=(c, mode, location), daemon=True).start()


if __name__ == "__main__":
    main()
