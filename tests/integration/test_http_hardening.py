"""The HTTP API against unauthenticated clients: nothing a request contains
crashes the gateway, fills its memory or lets another page drive it; offers
are admitted within limits; resource URLs (capabilities) are never published;
a request flood is not a log flood."""
import json
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest

from conftest import Gateway, rss_kib


def offer(mid=True, m_lines=1):
    """A minimal WebRTC audio offer; without `mid` it has no a=mid (and so no
    BUNDLE group), which the parser accepts."""
    fingerprint = ":".join("%02X" % b for b in os.urandom(32))
    lines = ["v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "t=0 0"]
    if mid:
        lines.append("a=group:BUNDLE " + " ".join(str(i) for i in range(m_lines)))
    for i in range(m_lines):
        lines += ["m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=ice-ufrag:abcd",
                  "a=ice-pwd:abcdefghijklmnopqrstuvwx", "a=fingerprint:sha-256 " + fingerprint,
                  "a=setup:actpass"]
        if mid:
            lines.append(f"a=mid:{i}")
        lines += ["a=sendrecv", "a=rtcp-mux", "a=rtpmap:111 opus/48000/2"]
    return ("\r\n".join(lines) + "\r\n").encode()


RESTART = b"a=ice-ufrag:efgh\r\na=ice-pwd:zyxwvutsrqponmlkjihgfedc\r\n"
TRICKLE = b"a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\n"


def http(method, url, body=None, headers=None):
    """(status, headers, body bytes); never raises for an HTTP error status."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def post_offer(gw, body=None, headers=None):
    return http("POST", gw.base + "/whip/echo", body if body is not None else offer(),
                {"Content-Type": "application/sdp", **(headers or {})})


def raw(gw, data, timeout=10):
    """Sends raw bytes, returns the whole reply (until the server closes or
    the reply's Content-Length is in)."""
    with socket.create_connection(("127.0.0.1", gw.http_port), timeout=timeout) as s:
        s.sendall(data)
        reply = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
            head, sep, body = reply.partition(b"\r\n\r\n")
            m = re.search(rb"Content-Length: (\d+)", head, re.I)
            if sep and m and len(body) >= int(m.group(1)):
                break
        return reply


def json_body(reply):
    """The JSON body of a raw reply; it must be strict UTF-8."""
    head, _, body = reply.partition(b"\r\n\r\n")
    assert b"application/json" in head, reply[:200]
    return json.loads(body.decode("utf-8", errors="strict"))


@pytest.fixture
def make_gateway():
    started = []

    def make(*args, **kwargs):
        gw = Gateway(extra_args=args, workers=1, **kwargs)
        started.append(gw)
        return gw

    yield make
    for gw in started:
        code = gw.stop()
        assert code == 0, f"moat exited with {code}; log in {gw.log_path}"


def test_help_lists_the_http_limits():
    import subprocess
    from conftest import MOAT
    out = subprocess.run([str(MOAT), "--help"], capture_output=True, text=True, timeout=20).stdout
    for option in ("--max-body-bytes", "--metrics-token", "--api-origins", "--max-sessions",
                   "--max-pending-sessions", "--pending-timeout", "--whip-rate-per-ip",
                   "--whip-burst-per-ip"):
        assert option in out, option


# ---- 1. crashes ---------------------------------------------------------------

def test_error_bodies_are_utf8_json_whatever_the_path(make_gateway):
    gw = make_gateway()
    paths = [b"/\xff\xfe", b"/api/sessions/\xe2\x82", b"/whip/resource/\xc3", b"/api/\x80\x80",
             # a detail just over the buffer, with multi-byte characters at the cut
             b"/" + "\u00e9".encode() * 300, b"/x" + "\u20ac".encode() * 200]
    for path in paths:
        reply = raw(gw, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        assert reply.startswith(b"HTTP/1.1 4"), (path[:30], reply[:100])
        detail = json_body(reply)
        assert detail["error"] and detail["status"] >= 400
    assert json.loads(gw.get("/healthz"))["status"] == "ok"


def test_statuses_libsoup_has_no_phrase_for_get_theirs(make_gateway):
    """421, 426 (and 428, 429) go out with their RFC phrases: libsoup 3.2
    has none for them and wrote "Unknown Error"."""
    gw = make_gateway()
    wrong_host = raw(gw, b"GET /api/sessions HTTP/1.1\r\nHost: evil.example\r\n\r\n")
    assert wrong_host.startswith(b"HTTP/1.1 421 Misdirected Request\r\n"), wrong_host[:60]
    no_upgrade = raw(gw, b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert no_upgrade.startswith(b"HTTP/1.1 426 Upgrade Required\r\n"), no_upgrade[:60]


@pytest.mark.parametrize("m_lines", [1, 2])
def test_ice_restart_of_an_offer_without_mid(make_gateway, m_lines):
    gw = make_gateway()
    status, headers, _ = post_offer(gw, offer(mid=False, m_lines=m_lines))
    assert status == 201
    status, reply_headers, body = http(
        "PATCH", gw.base + headers["Location"], RESTART,
        {"Content-Type": "application/trickle-ice-sdpfrag", "If-Match": "*"})
    assert status == 200, body
    text = body.decode()
    assert "a=ice-ufrag:" in text and "a=candidate:" in text
    assert reply_headers["ETag"] and reply_headers["ETag"] != headers["ETag"]
    assert json.loads(gw.get("/healthz"))["status"] == "ok"


def test_ice_restart_requires_if_match(make_gateway):
    gw = make_gateway()
    status, headers, _ = post_offer(gw)
    assert status == 201
    resource, etag = gw.base + headers["Location"], headers["ETag"]
    frag = {"Content-Type": "application/trickle-ice-sdpfrag"}
    # Trickle needs no precondition.
    assert http("PATCH", resource, TRICKLE, frag)[0] == 204
    status, _, body = http("PATCH", resource, RESTART, frag)
    assert status == 428 and json.loads(body)["error"] == "precondition_required"
    status, _, body = http("PATCH", resource, RESTART, {**frag, "If-Match": '"not-the-etag"'})
    assert status == 412 and json.loads(body)["error"] == "etag_mismatch"
    status, reply_headers, _ = http("PATCH", resource, RESTART, {**frag, "If-Match": etag})
    assert status == 200 and reply_headers["ETag"] != etag
    # The old ETag is stale now.
    assert http("PATCH", resource, TRICKLE, {**frag, "If-Match": etag})[0] == 412


def test_half_an_ice_restart_is_refused(make_gateway):
    """A new ufrag without a password (or a new password without a ufrag) is
    neither a trickle of the current generation nor a restart (RFC 8839
    section 4.4.1.1 changes both): 400, and the session keeps its
    credentials (a full restart with If-Match still works)."""
    gw = make_gateway()
    status, headers, _ = post_offer(gw)
    assert status == 201
    resource = gw.base + headers["Location"]
    frag = {"Content-Type": "application/trickle-ice-sdpfrag", "If-Match": "*"}
    for half in (b"a=ice-ufrag:efgh\r\n", b"a=ice-pwd:zyxwvutsrqponmlkjihgfedc\r\n"):
        status, _, body = http("PATCH", resource, half, frag)
        assert status == 400, (half, status, body)
        assert json.loads(body)["error"] == "incomplete_restart"
    # The current generation's ufrag alone is a trickle.
    assert http("PATCH", resource, b"a=ice-ufrag:abcd\r\n", frag)[0] == 204
    assert http("PATCH", resource, RESTART, frag)[0] == 200

# ---- 2. body limit ------------------------------------------------------------

def send_in_background(sock, data_iter):
    def run():
        try:
            for data in data_iter:
                sock.sendall(data)
        except OSError:
            pass  # the gateway closed the connection: expected
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def read_reply(sock, timeout=5):
    sock.settimeout(timeout)
    reply = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not chunk:
            break
        reply += chunk
        if reply.endswith(b"}"):
            break
    return reply


@pytest.mark.parametrize("path", [b"/whip/echo", b"/api/sessions", b"/nothing"])
def test_declared_body_over_the_limit_is_refused_unread(make_gateway, path):
    gw = make_gateway()
    before = rss_kib(gw.process.pid)
    with socket.create_connection(("127.0.0.1", gw.http_port)) as s:
        s.sendall(b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\n"
                  b"Content-Length: 104857600\r\n\r\n")
        sender = send_in_background(s, (b"v" * 65536 for _ in range(256)))  # 16 MiB
        reply = read_reply(s)
        sender.join(timeout=15)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert json_body(reply)["error"] == "body_too_large"
    assert rss_kib(gw.process.pid) - before < 4096, (before, rss_kib(gw.process.pid))
    assert gw.metric('moat_http_refused_total{reason="body_too_large"}') == 1


def test_chunked_body_is_capped_while_it_streams(make_gateway):
    gw = make_gateway()
    before = rss_kib(gw.process.pid)
    chunk = b"4000\r\n" + b"c" * 0x4000 + b"\r\n"
    with socket.create_connection(("127.0.0.1", gw.http_port)) as s:
        s.sendall(b"POST /whip/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n")
        sender = send_in_background(s, (chunk for _ in range(1024)))  # 16 MiB
        reply = read_reply(s)
        sender.join(timeout=15)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert json_body(reply)["error"] == "body_too_large"
    assert rss_kib(gw.process.pid) - before < 4096, (before, rss_kib(gw.process.pid))
    # A body within the limit still works, chunked or not.
    assert post_offer(gw)[0] == 201


@pytest.mark.parametrize("value", [b"-1", b"99999999999999999999999", b"18446744073709551615",
                                   b"9223372036854775808", b"+5", b""])
def test_a_content_length_that_is_no_number_is_refused_at_once(make_gateway, value):
    """libsoup reads "-1" and an overflow as a length of -1 and waited for a
    body until the request deadline (then 408); "+5" as 5, "" as 0.
    Anything but one decimal number (RFC 9110 §8.6) is a 400 JSON
    `bad_content_length` as soon as the headers are in, and the request does
    not run. (Other characters, "0x10", "5, 7", libsoup refuses itself.)"""
    gw = make_gateway("--request-timeout", "4")
    started = time.monotonic()
    reply = raw(gw, b"POST /whip/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\n"
                b"Content-Length: " + value + b"\r\n\r\n" + offer()[:5], timeout=8)
    elapsed = time.monotonic() - started
    assert reply.startswith(b"HTTP/1.1 400"), (value, reply[:200])
    assert elapsed < 2, elapsed
    assert json_body(reply)["error"] == "bad_content_length"
    metrics = gw.metrics()
    assert metrics['moat_http_refused_total{reason="bad_content_length"}'] == 1
    assert metrics['moat_http_refused_total{reason="request_timeout"}'] == 0
    assert json.loads(gw.get("/api/sessions"))["sessions"] == []
    # One number, repeated or not, is still a length.
    status, _, _ = post_offer(gw, headers={"Content-Length": str(len(offer()))})
    assert status == 201


def test_a_repeated_content_length_of_one_value_is_served(make_gateway):
    gw = make_gateway()
    body = offer()
    reply = raw(gw, b"POST /whip/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\n"
                b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(body), len(body))
                + body)
    assert reply.startswith(b"HTTP/1.1 201"), reply[:200]


def test_body_limit_is_configurable(make_gateway):
    gw = make_gateway("--max-body-bytes", "2048")
    status, _, body = post_offer(gw, offer() + b"a=x-padding:" + b"p" * 4096 + b"\r\n")
    assert status == 413 and json.loads(body)["error"] == "body_too_large"
    assert post_offer(gw)[0] == 201


# ---- 3. admission control -----------------------------------------------------

def test_session_cap(make_gateway):
    gw = make_gateway("--max-sessions", "2", "--whip-rate-per-ip", "0")
    assert post_offer(gw)[0] == 201
    assert post_offer(gw)[0] == 201
    status, headers, body = post_offer(gw)
    assert status == 503
    assert int(headers["Retry-After"]) >= 1
    assert json.loads(body)["error"] == "max_sessions"
    assert gw.metric('moat_http_refused_total{reason="max_sessions"}') == 1


def test_pending_session_cap(make_gateway):
    gw = make_gateway("--max-pending-sessions", "1", "--whip-rate-per-ip", "0")
    assert post_offer(gw)[0] == 201
    status, headers, body = post_offer(gw)
    assert status == 503
    assert int(headers["Retry-After"]) >= 1
    assert json.loads(body)["error"] == "max_pending_sessions"
    assert gw.metric("moat_pending_sessions") == 1


def test_offer_rate_per_source(make_gateway):
    gw = make_gateway("--whip-rate-per-ip", "1", "--whip-burst-per-ip", "2")
    statuses = [post_offer(gw)[0] for _ in range(2)]
    assert statuses == [201, 201]
    status, headers, body = post_offer(gw)
    assert status == 429
    assert int(headers["Retry-After"]) >= 1
    assert headers["Access-Control-Allow-Origin"] == "*"
    assert json.loads(body)["error"] == "rate_limited"
    # Bad offers count too: the limit is on requests, before any parsing.
    assert post_offer(gw, b"garbage")[0] == 429


def test_pending_sessions_are_reaped(make_gateway):
    gw = make_gateway("--pending-timeout", "2")
    assert post_offer(gw)[0] == 201
    assert json.loads(gw.get("/healthz"))["sessions"] == 1
    deadline = time.time() + 10
    while time.time() < deadline and json.loads(gw.get("/healthz"))["sessions"]:
        time.sleep(0.2)
    assert json.loads(gw.get("/healthz"))["sessions"] == 0
    assert gw.metric("moat_pending_sessions") == 0


# ---- 4. resource URLs are capabilities -----------------------------------------

def test_resource_ids_are_never_published(make_gateway):
    gw = make_gateway()
    status, headers, _ = post_offer(gw)
    assert status == 201
    resource_id = headers["Location"].rsplit("/", 1)[1]
    deadline = time.time() + 15  # the workers' stats snapshot comes twice a second
    while time.time() < deadline:
        metrics, stats = gw.get("/metrics"), json.loads(gw.get("/api/stats"))
        if "moat_detector_state{transport=" in metrics and stats["transports"]:
            break
        time.sleep(0.2)
    assert "moat_detector_state{transport=" in metrics
    assert stats["transports"], stats
    for text in (metrics, json.dumps(stats), gw.get("/api/sessions"), gw.get("/healthz")):
        assert resource_id not in text
    label = json.loads(gw.get("/api/sessions"))["sessions"][0]["id"]
    assert f'transport="{label}"' in metrics
    assert json.loads(gw.get(f"/api/sessions/{label}"))["plugin"] == "echo"


def test_metrics_token(make_gateway):
    gw = make_gateway("--metrics-token", "scrape-secret", "--token", "api-secret")
    status, headers, _ = http("GET", gw.base + "/metrics")
    assert status == 401 and headers["WWW-Authenticate"] == "Bearer"
    assert http("GET", gw.base + "/metrics", headers={"Authorization": "Bearer wrong"})[0] == 401
    status, _, body = http("GET", gw.base + "/metrics",
                           headers={"Authorization": "Bearer scrape-secret"})
    assert status == 200 and b"moat_up 1" in body
    # The API token holder sees resources; nobody else sees the API at all.
    auth = {"Authorization": "Bearer api-secret"}
    status, headers, _ = post_offer(gw, headers=auth)
    assert status == 201
    assert http("GET", gw.base + "/api/sessions")[0] == 401
    sessions = json.loads(http("GET", gw.base + "/api/sessions", headers=auth)[2])["sessions"]
    assert sessions[0]["resource"] == headers["Location"]


def test_405_names_the_allowed_methods(make_gateway):
    """Every 405 carries Allow with the methods its path takes (RFC 9110
    §15.5.6), and a GET-only API path answers other methods with 405, not
    404; the body is the usual JSON error. /healthz and /metrics too
    (before, they answered every method, FOO included, with 200)."""
    gw = make_gateway()
    status, headers, _ = post_offer(gw)
    assert status == 201
    resource = headers["Location"]
    resource_id = resource.rsplit("/", 1)[1]
    label = json.loads(gw.get("/api/sessions"))["sessions"][0]["id"]
    cases = [
        ("PUT", "/index.html", "GET, HEAD"),
        ("GET", "/whip/echo", "POST"),
        ("GET", resource, "PATCH, DELETE"),
        ("POST", "/api/sessions", "GET, HEAD"),
        ("FOO", "/api/plugins", "GET, HEAD"),
        ("DELETE", "/api/stats", "GET, HEAD"),
        ("PUT", "/api/ice-servers", "GET, HEAD"),
        ("POST", "/api/calls", "GET, HEAD"),
        ("POST", f"/api/sessions/{label}", "GET, HEAD"),
        ("GET", f"/api/sessions/{resource_id}/message", "POST"),
        ("GET", f"/api/sessions/{resource_id}/recording", "POST, DELETE"),
        ("GET", "/api/rooms/live/ingest", "POST"),
        ("GET", "/api/rooms/live/ingest/abc", "DELETE"),
        ("PUT", "/api/rooms", "GET, HEAD, POST"),
        ("PUT", "/api/rooms/live", "GET, HEAD, DELETE"),
        ("POST", "/api/rooms/live/capacity", "GET, HEAD"),
        ("GET", "/api/rooms/live/subscribers/a/layer", "POST"),
        ("DELETE", "/healthz", "GET, HEAD"),
        ("POST", "/healthz", "GET, HEAD"),
        ("FOO", "/healthz", "GET, HEAD"),
        ("PUT", "/metrics", "GET, HEAD"),
        ("DELETE", "/metrics", "GET, HEAD"),
    ]
    for method, path, allow in cases:
        status, headers, body = http(method, gw.base + path)
        assert status == 405, (method, path, status, body)
        assert headers["Allow"] == allow, (method, path, headers.get("Allow"))
        assert json.loads(body)["error"] == "method_not_allowed", (method, path, body)
    # What Allow names is served: HEAD of GET routes included.
    for path in ("/api/sessions", "/api/plugins", "/api/stats", "/api/calls", "/healthz",
                 "/metrics"):
        assert http("HEAD", gw.base + path)[0] == 200, path
    assert json.loads(gw.get("/healthz"))["status"] == "ok"


# ---- 5. CORS ---------------------------------------------------------------------

def test_api_refuses_other_origins(make_gateway):
    gw = make_gateway()
    evil = {"Origin": "http://evil.example"}
    for method in ("GET", "OPTIONS"):
        status, headers, body = http(method, gw.base + "/api/sessions", headers=evil)
        assert status == 403, method
        assert "Access-Control-Allow-Origin" not in headers
        assert json.loads(body)["error"] == "origin_not_allowed"
    # The dashboard's own origin, and clients without Origin, are served.
    own = {"Origin": f"http://127.0.0.1:{gw.http_port}"}
    assert http("GET", gw.base + "/api/stats", headers=own)[0] == 200
    assert http("GET", gw.base + "/api/stats")[0] == 200
    assert http("GET", gw.base + "/dashboard.html")[0] == 200
    # WHIP stays open to every origin (RFC 9725).
    status, headers, _ = http("OPTIONS", gw.base + "/whip/echo", headers=evil)
    assert status == 204 and headers["Access-Control-Allow-Origin"] == "*"
    status, headers, _ = post_offer(gw, headers=evil)
    assert status == 201 and headers["Access-Control-Allow-Origin"] == "*"


def test_api_origins_are_configurable(make_gateway):
    gw = make_gateway("--api-origins", "https://ops.example, https://noc.example")
    for origin in ("https://ops.example", "https://noc.example"):
        status, headers, _ = http("GET", gw.base + "/api/sessions", headers={"Origin": origin})
        assert status == 200 and headers["Access-Control-Allow-Origin"] == origin
        assert "Origin" in headers["Vary"]
    assert http("GET", gw.base + "/api/sessions", headers={"Origin": "https://evil.example"})[0] == 403


def test_a_listed_origin_may_use_every_api_method(make_gateway):
    """A listed origin's pages may call /api/ (config/moat.conf): the
    preflight names every method an /api/ route takes, so a browser lets
    such a page create and delete rooms (before, only GET: a DELETE of a
    room or a recording never left the browser)."""
    gw = make_gateway("--api-origins", "https://ops.example")
    origin = {"Origin": "https://ops.example"}
    for method in ("GET", "HEAD", "POST", "DELETE"):
        status, headers, _ = http("OPTIONS", gw.base + "/api/rooms/x", headers={
            **origin, "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "authorization, content-type"})
        assert status == 204 and headers["Access-Control-Allow-Origin"] == "https://ops.example"
        allowed = [m.strip() for m in headers["Access-Control-Allow-Methods"].split(",")]
        assert method in allowed, (method, allowed)
        assert "authorization" in headers["Access-Control-Allow-Headers"].lower()
    body = json.dumps({"name": "cors"}).encode()
    status, headers, _ = http("POST", gw.base + "/api/rooms", body,
                              {**origin, "Content-Type": "application/json"})
    assert status == 201 and headers["Access-Control-Allow-Origin"] == "https://ops.example"
    status, headers, _ = http("DELETE", gw.base + "/api/rooms/cors", headers=origin)
    assert status in (200, 204) and headers["Access-Control-Allow-Origin"] == "https://ops.example"
    assert http("GET", gw.base + "/api/rooms/cors", headers=origin)[0] == 404
    # Other origins still get nothing.
    status, headers, _ = http("OPTIONS", gw.base + "/api/rooms", headers={
        "Origin": "https://evil.example", "Access-Control-Request-Method": "DELETE"})
    assert status == 403 and "Access-Control-Allow-Methods" not in headers


# ---- 6. no log flood ---------------------------------------------------------------

def test_offer_flood_is_not_a_log_flood(make_gateway):
    gw = make_gateway("--max-sessions", "1", "--whip-rate-per-ip", "0")
    statuses = [post_offer(gw)[0] for _ in range(300)]
    assert statuses[0] == 201 and set(statuses[1:]) == {503}
    time.sleep(0.2)
    http_lines = [l for l in gw.log_text().splitlines() if "component=http" in l]
    assert len(http_lines) <= 25, len(http_lines)
