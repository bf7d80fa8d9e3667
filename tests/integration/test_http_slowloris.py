"""Slow and idle HTTP clients (slowloris) against the API: a connection must
deliver its request within [http] request_timeout_s or it is answered 408 and
closed; connections beyond [http] max_connections_per_source (one IPv4
address or IPv6 /64) or [http] max_connections are closed at accept; other
clients keep being served throughout, the daemon's descriptors come back to
their baseline, and an upgraded WebSocket event subscription is not cut.

The limits are set through the environment (MOAT_HTTP_*), so that a daemon
without them starts all the same and each test fails on what it does."""
import base64
import http.client
import json
import os
import select
import socket
import struct
import time

import pytest

from conftest import Gateway
from hostile_http import post_offer, request

TIMEOUT_S = 2
SLACK_S = 3


@pytest.fixture
def make_gateway():
    started = []

    def make(env=None, **limits):
        env = {**(env or {}),
               **{f"MOAT_HTTP_{key.upper()}": str(value) for key, value in limits.items()}}
        gw = Gateway(workers=1, env=env)
        started.append(gw)
        return gw

    yield make
    for gw in started:
        code = gw.stop()
        assert code == 0, f"moat exited with {code}; log in {gw.log_path}"


def fd_count(gw):
    return len(os.listdir(f"/proc/{gw.process.pid}/fd"))


def settled_fd_count(gw, seconds=3.0):
    """The descriptor count once it has not moved for half a second."""
    deadline = time.monotonic() + seconds
    last = fd_count(gw)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = fd_count(gw)
        if now == last:
            return now
        last = now
    return last


def connect(gw, source="127.0.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.settimeout(5)  # a listener that stopped accepting fills its backlog
    s.connect(("127.0.0.1", gw.http_port))
    s.settimeout(None)
    return s


def get(gw, path, source="127.0.0.1"):
    """(status, body) of a GET sent from `source` (a loopback address)."""
    c = http.client.HTTPConnection("127.0.0.1", gw.http_port, timeout=5,
                                   source_address=(source, 0))
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def metric(gw, name, source="127.0.0.3"):
    """A value from /metrics, fetched from a source of its own (so the fetch
    is not refused by, nor counted against, the source under test)."""
    status, body = get(gw, "/metrics", source)
    assert status == 200
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


def read_until_closed(s, limit_s):
    """Everything the server sends until it closes, and the time that took;
    None when it is still open after `limit_s`."""
    start = time.monotonic()
    data = b""
    while True:
        left = limit_s - (time.monotonic() - start)
        if left <= 0:
            return None, data
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return None, data
        except ConnectionResetError:
            return time.monotonic() - start, data
        if not chunk:
            return time.monotonic() - start, data
        data += chunk


def is_closed_now(s, received=None):
    """Whether the server has closed `s` (reading, without waiting, whatever
    it sent before: appended to `received`)."""
    while select.select([s], [], [], 0)[0]:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return True
        if not chunk:
            return True
        if received is not None:
            received += chunk
    return False


def refused(gw, reason):
    return metric(gw, f'moat_http_refused_total{{reason="{reason}"}}')


# ---- 1. silent half requests ---------------------------------------------------

def test_silent_half_requests_are_closed_at_the_deadline(make_gateway):
    gw = make_gateway(request_timeout_s=TIMEOUT_S)
    baseline = settled_fd_count(gw)
    attackers = []
    for _ in range(40):
        s = connect(gw)
        s.sendall(b"GET /healthz HT")
        attackers.append(s)
    opened = time.monotonic()
    # The daemon holds them (the attack is real) and serves others meanwhile.
    assert get(gw, "/healthz", "127.0.0.2")[0] == 200
    assert fd_count(gw) >= baseline + 40
    assert get(gw, "/healthz")[0] == 200

    replies = []
    for s in attackers:
        left = TIMEOUT_S + SLACK_S - (time.monotonic() - opened)
        elapsed, data = read_until_closed(s, max(left, 0.1))
        assert elapsed is not None, "a silent connection outlived the deadline"
        replies.append(data)
        s.close()
    # Each got a 408 with a JSON reason (they had nothing unread to reset it).
    for data in replies:
        assert data.startswith(b"HTTP/1.1 408"), data[:80]
        assert b'"request_timeout"' in data
    assert refused(gw, "request_timeout") >= 40

    deadline = time.monotonic() + SLACK_S
    while fd_count(gw) > baseline and time.monotonic() < deadline:
        time.sleep(0.1)
    assert fd_count(gw) <= baseline, (fd_count(gw), baseline)
    assert metric(gw, "moat_http_connections") <= 1  # the /metrics request itself
    assert get(gw, "/healthz")[0] == 200


# ---- 2. trickled headers -------------------------------------------------------

def test_headers_trickled_one_byte_at_a_time_are_cut_at_the_deadline(make_gateway):
    gw = make_gateway(request_timeout_s=TIMEOUT_S)
    s = connect(gw)
    start = time.monotonic()
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    cut = None
    received = bytearray()
    for _ in range(int((TIMEOUT_S + SLACK_S) / 0.2) + 1):  # bounded: deadline + slack
        if is_closed_now(s, received):
            cut = time.monotonic() - start
            break
        try:
            s.sendall(b"a")
        except (BrokenPipeError, ConnectionResetError):
            cut = time.monotonic() - start
            break
        time.sleep(0.2)
    s.close()
    assert cut is not None, "a trickling client outlived the deadline"
    assert TIMEOUT_S - 0.5 <= cut <= TIMEOUT_S + SLACK_S, cut
    # The 408 arrives unless the trickle resets the connection first.
    assert not received or received.startswith(b"HTTP/1.1 408"), bytes(received[:80])
    assert refused(gw, "request_timeout") >= 1
    assert get(gw, "/healthz")[0] == 200


def test_a_trickled_body_is_cut_too(make_gateway):
    gw = make_gateway(request_timeout_s=TIMEOUT_S)
    s = connect(gw)
    s.sendall(b"POST /api/sessions/x/message HTTP/1.1\r\nHost: x\r\n"
              b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
    elapsed, data = read_until_closed(s, TIMEOUT_S + SLACK_S)
    s.close()
    assert elapsed is not None, "a connection that never sends its body outlived the deadline"
    assert data.startswith(b"HTTP/1.1 408"), data[:80]


# ---- 2b. a request answered 408 never runs ------------------------------------

def test_a_request_answered_408_never_runs(make_gateway):
    """At the deadline the 408 goes out and the socket is shut down; libsoup
    then reads end of file, which after part of a header block it takes for
    the end of the headers, and hands the request on. It must be refused,
    not run: before, a DELETE whose blank line never came hung its session
    up after the client had its 408, and a slowloris POST /whip/echo was
    routed as an offer, spending its source's offer bucket."""
    gw = make_gateway(request_timeout_s=TIMEOUT_S,
                      env={"MOAT_LIMITS_WHIP_RATE_PER_IP": "1", "MOAT_LIMITS_WHIP_BURST_PER_IP": "1"})
    status, headers, _ = post_offer(gw)
    assert status == 201
    resource = headers["Location"]
    half_delete = connect(gw, "127.0.0.4")
    half_delete.sendall(f"DELETE {resource} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode())
    half_offer = connect(gw, "127.0.0.5")  # its source's one offer token is unspent
    half_offer.sendall(b"POST /whip/echo HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       b"Content-Type: application/sdp\r\n")
    for s in (half_delete, half_offer):
        elapsed, data = read_until_closed(s, TIMEOUT_S + SLACK_S)
        s.close()
        assert elapsed is not None, "a half request outlived the deadline"
        assert data.startswith(b"HTTP/1.1 408"), data[:80]
    time.sleep(0.3)  # what libsoup still makes of them has run by now
    # The DELETE did not run: the session is there and takes a trickle.
    status, _, body = request(gw, "PATCH", resource, b"",
                              {"Content-Type": "application/trickle-ice-sdpfrag"})
    assert status == 204, (status, body)
    assert len(json.loads(get(gw, "/api/sessions")[1])["sessions"]) == 1
    # Nor did the offer: its source still has its token.
    status, _, body = post_offer(gw, source="127.0.0.5")
    assert status == 201, (status, body)
    assert refused(gw, "rate_limited") == 0
    assert refused(gw, "request_timeout") == 2
    assert get(gw, "/healthz")[0] == 200


# ---- 3. connection caps --------------------------------------------------------

def test_connections_over_the_per_source_cap_are_closed(make_gateway):
    cap = 8
    gw = make_gateway(max_connections_per_source=cap, request_timeout_s=30)
    baseline = settled_fd_count(gw)
    idle = [connect(gw) for _ in range(cap)]
    deadline = time.monotonic() + 5
    while metric(gw, "moat_http_connections") < cap + 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    extras = [connect(gw) for _ in range(4)]
    for s in extras:
        elapsed, data = read_until_closed(s, SLACK_S)
        assert elapsed is not None, "a connection over the per-source cap was kept"
        assert data == b""
        s.close()
    # This source is refused while it holds its cap; another one is served.
    with pytest.raises((ConnectionError, http.client.HTTPException, socket.timeout)):
        get(gw, "/healthz")
    assert get(gw, "/healthz", "127.0.0.2")[0] == 200
    assert refused(gw, "max_connections_per_source") >= 5
    assert fd_count(gw) >= baseline + cap

    for s in idle:
        s.close()
    deadline = time.monotonic() + SLACK_S
    while metric(gw, "moat_http_connections") > 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert get(gw, "/healthz")[0] == 200
    deadline = time.monotonic() + SLACK_S
    while fd_count(gw) > baseline and time.monotonic() < deadline:
        time.sleep(0.1)
    assert fd_count(gw) <= baseline


def test_connections_over_the_total_cap_are_closed(make_gateway):
    cap = 6
    gw = make_gateway(max_connections=cap, max_connections_per_source=0, request_timeout_s=30)
    idle = [connect(gw, f"127.0.1.{i + 1}") for i in range(cap)]
    time.sleep(0.5)
    extra = connect(gw, "127.0.2.1")
    elapsed, data = read_until_closed(extra, SLACK_S)
    extra.close()
    assert elapsed is not None and data == b"", "a connection over the total cap was kept"
    for s in idle:
        s.close()
    deadline = time.monotonic() + SLACK_S
    while time.monotonic() < deadline:
        try:
            if refused(gw, "max_connections") >= 1:
                break
        except (ConnectionError, http.client.HTTPException, socket.timeout):
            pass
        time.sleep(0.1)
    assert refused(gw, "max_connections") >= 1
    assert get(gw, "/healthz")[0] == 200


def test_running_out_of_descriptors_does_not_stop_the_listener(make_gateway):
    """With the caps off and the process's open-file limit just above what it
    uses, idle connections exhaust it: accept() fails (EMFILE). The API must
    come back once they are gone (accepting pauses, it does not stop)."""
    import resource
    gw = make_gateway(max_connections=0, max_connections_per_source=0, request_timeout_s=30)
    pid = gw.process.pid
    original = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    limit = settled_fd_count(gw) + 10
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, original[1]))
    try:
        idle = []
        for i in range(30):
            try:
                idle.append(connect(gw, f"127.0.3.{i + 1}"))
            except socket.timeout:
                break
        deadline = time.monotonic() + 5
        while fd_count(gw) < limit and time.monotonic() < deadline:
            time.sleep(0.1)
        assert fd_count(gw) >= limit - 1, "the descriptors were not exhausted"
        time.sleep(0.5)  # accept() keeps failing meanwhile
        for s in idle:
            s.close()
        served = False
        deadline = time.monotonic() + 5
        while not served and time.monotonic() < deadline:
            try:
                served = get(gw, "/healthz", "127.0.0.2")[0] == 200
            except (ConnectionError, http.client.HTTPException, socket.timeout):
                time.sleep(0.2)
        assert served, "the API stopped accepting connections after EMFILE"
    finally:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, original)


# ---- 4. WebSocket events outlive the deadline ----------------------------------

def websocket_open(gw, path):
    s = connect(gw)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
               f"Sec-WebSocket-Version: 13\r\n\r\n").encode())
    s.settimeout(5)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        assert chunk, head
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head
    return s


def websocket_ping(s, payload=b"still there?"):
    """Sends a (masked) ping, returns the payload of the pong."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    s.sendall(bytes([0x89, 0x80 | len(payload)]) + mask + masked)
    s.settimeout(5)
    header = s.recv(2)
    assert len(header) == 2, "the WebSocket was closed"
    opcode, length = header[0] & 0x0F, header[1] & 0x7F
    body = b""
    while len(body) < length:
        body += s.recv(length - len(body))
    assert opcode == 0xA, (opcode, body)
    return body


def test_websocket_events_outlive_the_request_deadline(make_gateway):
    gw = make_gateway(request_timeout_s=TIMEOUT_S)
    ws = websocket_open(gw, "/api/events?topic=rooms/slowloris")
    idle = connect(gw)  # opened with it: the deadline is live
    time.sleep(TIMEOUT_S + SLACK_S)
    assert is_closed_now(idle), "an idle connection outlived the deadline"
    idle.close()
    assert websocket_ping(ws) == b"still there?"
    assert metric(gw, "moat_http_connections") >= 2  # the subscription and /metrics
    ws.close()
    deadline = time.monotonic() + SLACK_S
    while metric(gw, "moat_http_connections") > 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert metric(gw, "moat_http_connections") <= 1


# ---- configuration -------------------------------------------------------------

def test_the_limits_are_options_and_config_keys(tmp_path):
    import subprocess
    from conftest import MOAT, ROOT
    out = subprocess.run([str(MOAT), "--help"], capture_output=True, text=True, timeout=20).stdout
    for option in ("--request-timeout", "--max-connections", "--max-connections-per-source"):
        assert option in out, option
    documented = (ROOT / "config" / "moat.conf").read_text()
    for key in ("request_timeout_s = 10", "max_connections = 1024",
                "max_connections_per_source = 64"):
        assert key in documented, key
    conf = tmp_path / "moat.conf"
    conf.write_text("[http]\nrequest_timeout_s = 1\nmax_connections_per_source = 2\n")
    gw = Gateway(extra_args=("--config", str(conf)), workers=1)
    try:
        idle = [connect(gw), connect(gw)]
        extra = connect(gw)
        assert read_until_closed(extra, SLACK_S)[0] is not None
        for s in idle:
            elapsed, data = read_until_closed(s, 1 + SLACK_S)
            assert elapsed is not None and data.startswith(b"HTTP/1.1 408"), data[:80]
            s.close()
        extra.close()
    finally:
        assert gw.stop() == 0
