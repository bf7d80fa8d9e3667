"""Hostile clients against the API's secondary surfaces (issue 20): event
WebSockets (Origin, per-source caps, a listener that never reads), the Host
check of /api/ (DNS rebinding), room creation (rate, cap, expiry of empty
rooms), recordings (unique names, relative names, a folder that cannot be
written) and REMB from one subscriber of 1 bit/s."""
import asyncio
import base64
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from conftest import Gateway
from test_http_hardening import offer


@pytest.fixture
def make_gateway():
    gateways = []

    def make(*args):
        gw = Gateway(extra_args=list(args))
        gateways.append(gw)
        return gw

    yield make
    for gw in gateways:
        assert gw.stop() == 0, f"moat exited badly; log in {gw.log_path}"


def http(gw, method, path, body=None, headers=None):
    """(status, headers, parsed JSON body or None)."""
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    request = urllib.request.Request(gw.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            text = r.read()
            status, reply_headers = r.status, r.headers
    except urllib.error.HTTPError as e:
        text, status, reply_headers = e.read(), e.code, e.headers
    if text and "json" in (reply_headers.get("Content-Type") or ""):
        return status, reply_headers, json.loads(text)
    return status, reply_headers, None


def wait_for(predicate, timeout=10.0, interval=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


def websocket(gw, path, host=None, origin=None, rcvbuf=None):
    """A raw WebSocket handshake: (status line, headers and body bytes, the socket)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(10)
    s.connect(("127.0.0.1", gw.http_port))
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{gw.http_port}'}",
             "Upgrade: websocket", "Connection: Upgrade", f"Sec-WebSocket-Key: {key}",
             "Sec-WebSocket-Version: 13"]
    if origin:
        lines.append(f"Origin: {origin}")
    s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk:
            break
        head += chunk
    return head.split(b"\r\n", 1)[0].decode(), head, s


def post_offer(gw, path):
    status, headers, _ = http(gw, "POST", path, offer(), {"Content-Type": "application/sdp"})
    return status, headers.get("Location")


# ---- event WebSockets -----------------------------------------------------------

def test_event_upgrade_from_a_foreign_origin_is_refused(make_gateway):
    gw = make_gateway()
    status, head, s = websocket(gw, "/api/events?topic=rooms/a", origin="http://evil.example")
    s.close()
    assert " 403 " in status, head
    assert gw.metric('moat_event_listeners_refused_total{reason="origin_not_allowed"}') == 1
    # Paths under /api/events went to the same handler without the check
    # (101 to any origin); now the check runs, and only the path itself is
    # a socket.
    for path in ("/api/events/x?topic=rooms/a", "/api/events/?topic=rooms/a"):
        status, head, s = websocket(gw, path, origin="http://evil.example")
        s.close()
        assert " 403 " in status, (path, head)
        status, head, s = websocket(gw, path)
        s.close()
        assert " 404 " in status, (path, head)
    # The gateway's own origin is fine, and so is no Origin (a native client).
    for origin in (f"http://127.0.0.1:{gw.http_port}", None):
        status, head, s = websocket(gw, "/api/rooms/a/events", origin=origin)
        s.close()
        assert " 101 " in status, head


def test_event_listeners_are_capped_per_source(make_gateway):
    """The default: 16 listeners from one source (the global cap is 256)."""
    gw = make_gateway()
    sockets = []
    for i in range(16):
        status, head, s = websocket(gw, f"/api/events?topic=rooms/{i % 3}")
        assert " 101 " in status, (i, head)
        sockets.append(s)
    wait_for(lambda: gw.metric("moat_event_listeners") == 16, timeout=3)
    status, head, s = websocket(gw, "/api/rooms/a/events")
    s.close()
    assert " 429 " in status, head
    assert gw.metric('moat_event_listeners_refused_total{reason="max_event_listeners_per_source"}') == 1
    # One leaves: its slot is free again.
    sockets.pop().close()
    assert wait_for(lambda: gw.metric("moat_event_listeners") == 15)
    status, head, s = websocket(gw, "/api/events?topic=rooms/a")
    assert " 101 " in status, head
    sockets.append(s)
    for s in sockets:
        s.close()


def test_a_listener_that_never_reads_is_closed_at_the_bound(make_gateway):
    """Events pile up for a client that stopped reading (a small receive
    buffer, nothing read): past [http] event_queue_bytes it is closed and
    counted, while a listener that reads keeps everything."""
    gw = make_gateway("--event-queue-bytes", "4096", "--whip-rate-per-ip", "0",
                      "--max-pending-sessions", "0")
    status, head, stalled = websocket(gw, "/api/rooms/churn/events", rcvbuf=1024)
    assert " 101 " in status, head
    status, head, reader = websocket(gw, "/api/rooms/churn/events")
    assert " 101 " in status, head
    reader.setblocking(False)
    received = bytearray()

    def read_some():
        try:
            while True:
                chunk = reader.recv(65536)
                if not chunk:
                    return
                received.extend(chunk)
        except BlockingIOError:
            pass

    pairs = 0
    closed = 'moat_event_listeners_closed_total{reason="queue_full"}'
    # Each publisher that joins and leaves is two events (~100 bytes each).
    while pairs < 400 and gw.metric(closed) == 0:
        status, location = post_offer(gw, "/whip/room/churn")
        assert status == 201, status
        assert http(gw, "DELETE", location.replace(gw.base, ""))[0] in (200, 204)
        pairs += 1
        read_some()
    assert gw.metric(closed) == 1, f"still open after {pairs} join/leave pairs"
    assert wait_for(lambda: gw.metric("moat_event_listeners") == 1)
    # The stalled client finds its connection gone once it reads.
    stalled.settimeout(10)
    try:
        while stalled.recv(65536):
            pass
    except ConnectionResetError:
        pass
    stalled.close()
    # The reader got every event (two per pair) as text frames.
    assert wait_for(lambda: (read_some(), received.count(b'"type":"left"') >= pairs)[1]), pairs
    reader.close()


# ---- the Host check (DNS rebinding) --------------------------------------------

def test_api_refuses_a_host_that_does_not_name_the_gateway(make_gateway):
    gw = make_gateway("--server-names", "moat.test")
    port = gw.http_port
    # A rebound name: Origin and Host agree, so the same-origin check alone passed it.
    evil = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
    status, _, body = http(gw, "GET", "/api/sessions", headers=evil)
    assert status == 421 and body["error"] == "wrong_host", (status, body)
    status, _, body = http(gw, "POST", "/api/rooms", {"name": "r"}, headers=evil)
    assert status == 421, (status, body)
    assert gw.metric('moat_http_refused_total{reason="wrong_host"}') == 2
    status, head, s = websocket(gw, "/api/events?topic=rooms/r", host=evil["Host"],
                                origin=evil["Origin"])
    s.close()
    assert " 421 " in status, head
    # Its own names: the address, localhost, [http] server_names.
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"moat.test:{port}", "MOAT.test"):
        status, _, body = http(gw, "GET", "/api/sessions", headers={"Host": host})
        assert status == 200, (host, status, body)
    # WHIP, /healthz and /metrics answer any Host (see README).
    status, headers, _ = http(gw, "POST", "/whip/echo", offer(),
                              {"Content-Type": "application/sdp", "Host": "evil.example"})
    assert status == 201, status
    assert http(gw, "GET", "/healthz", headers={"Host": "evil.example"})[0] == 200
    assert http(gw, "GET", "/metrics", headers={"Host": "evil.example"})[0] == 200


# ---- rooms --------------------------------------------------------------------------

def test_room_creation_is_capped_and_rate_limited(make_gateway):
    gw = make_gateway("--room-max-rooms", "3", "--room-create-rate-per-ip", "1",
                      "--room-create-burst-per-ip", "5")
    statuses = []
    for i in range(6):
        status, headers, body = http(gw, "POST", "/api/rooms", {"name": f"r{i}"})
        statuses.append(status)
        if status >= 400:
            assert body["error"] and body["status"] == status, body
        if status == 429:
            assert int(headers["Retry-After"]) >= 1
    assert statuses == [201, 201, 201, 503, 503, 429], statuses
    # Implicit rooms (a publisher's) count against the same cap.
    assert post_offer(gw, "/whip/room/implicit")[0] in (404, 503)
    assert gw.metric('moat_http_refused_total{reason="create_rate_limited"}') == 1


def test_an_empty_explicit_room_expires(make_gateway):
    gw = make_gateway("--room-empty-ttl", "1")
    assert http(gw, "POST", "/api/rooms", {"name": "idle"})[0] == 201
    assert http(gw, "POST", "/api/rooms", {"name": "busy"})[0] == 201
    status, location = post_offer(gw, "/whip/room/busy")  # a publisher stays (pending)
    assert status == 201

    def names():
        return {r["name"] for r in http(gw, "GET", "/api/rooms")[2]["rooms"]}

    assert wait_for(lambda: "idle" not in names(), timeout=6), names()
    time.sleep(1.5)  # past the TTL: the occupied room stays
    assert "busy" in names()
    # Emptied, it goes too.
    assert http(gw, "DELETE", location.replace(gw.base, ""))[0] in (200, 204)
    assert wait_for(lambda: "busy" not in names(), timeout=6), names()


# ---- recordings ---------------------------------------------------------------------

def test_two_recordings_in_one_second_get_two_complete_files(tmp_path):
    """Two recordings of one session started within a second get two files.
    Deterministic whatever the load: files already carrying every name the
    next seconds could produce (with and without a counter) are never
    truncated; the recordings find names of their own."""
    from aiortc_peer import echo_call
    from test_record import discover, wait_recordings_closed
    folder = tmp_path / "rec"
    folder.mkdir()
    seeded = {}
    now = time.time()
    for offset in range(-2, 40):
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now + offset))
        for suffix in ("", "-1", "-2"):
            path = folder / f"session-1-{stamp}{suffix}.mkv"
            path.write_bytes(b"someone else's recording")
            seeded[path.name] = path
    # Recording acts on a session: the API token (or its resource id) is
    # needed, never its public label alone.
    gw = Gateway(extra_args=["--record-dir", str(folder), "--token", "recording-test-token"])
    files = []

    async def record_twice(pc):
        import aiohttp
        session_id = json.loads(gw.get("/api/sessions"))["sessions"][0]["id"]
        assert session_id == "1"
        url = f"{gw.base}/api/sessions/{session_id}/recording"
        await asyncio.sleep(1.0)
        async with aiohttp.ClientSession(headers=gw.auth()) as client:
            async with client.post(url) as r:
                assert r.status == 201
                files.append((await r.json())["file"])
            await asyncio.sleep(0.3)
            async with client.delete(url) as r:
                assert r.status == 200
            async with client.post(url) as r:
                assert r.status == 201
                files.append((await r.json())["file"])
            await asyncio.sleep(2.0)
            async with client.delete(url) as r:
                assert r.status == 200

    try:
        asyncio.run(echo_call(gw.base, seconds=5, on_running=record_twice))
        wait_recordings_closed(gw)
    finally:
        assert gw.stop() == 0
    for path in seeded.values():
        assert path.read_bytes() == b"someone else's recording", path.name
    assert len(files) == 2 and files[0] != files[1], files
    # Names relative to the folder, never the server's path.
    assert all("/" not in f and str(tmp_path) not in f for f in files), files
    assert not set(files) & set(seeded), files
    assert sorted(p.name for p in folder.glob("*.mkv") if p.name not in seeded) == sorted(files)
    for name in files:
        duration, out = discover(folder / name)
        assert duration > 0 and "Opus" in out, (name, out)


def test_a_recording_that_cannot_be_written_is_an_error(make_gateway):
    # /proc exists and is a folder, but nobody (root included) creates files in it.
    gw = make_gateway("--record-dir", "/proc", "--token", "recording-test-token")
    assert post_offer(gw, "/whip/echo")[0] == 201
    session_id = json.loads(gw.get("/api/sessions"))["sessions"][0]["id"]
    status, _, body = http(gw, "POST", f"/api/sessions/{session_id}/recording",
                           headers=gw.auth())
    assert status == 500 and body["error"] == "recording_failed", (status, body)
    assert "/proc" not in json.dumps(body), body
    assert gw.metric('moat_record_failures_total{reason="create"}') == 1
    assert gw.metric("moat_recordings_active") == 0


# ---- REMB ---------------------------------------------------------------------------

def test_one_subscribers_remb_of_one_bit_does_not_throttle_the_publisher(make_gateway):
    """Three viewers: two report 1.5 Mbit/s, one 1 bit/s. The publisher is
    told the others' level, not 1 bit/s; alone, the 1 bit/s viewer gets the
    publisher no lower than the floor (100 kbit/s)."""
    from aiortc.rtp import RTCP_PSFB_APP, RtcpPsfbPacket, pack_remb_fci
    from test_room import close, subscribe
    from test_room_feedback import encoder_target, publish_noise, publisher_of
    gw = make_gateway()

    async def remb(viewer, bitrate):
        receiver = next(t.receiver for t in viewer["pc"].getTransceivers() if t.kind == "video")
        await receiver._send_rtcp(RtcpPsfbPacket(fmt=RTCP_PSFB_APP, ssrc=1234, media_ssrc=0,
                                                 fci=pack_remb_fci(bitrate, [5678])))

    async def run():
        publisher = await publish_noise(gw.base, "remb")
        viewers = [await subscribe(gw.base, "remb") for _ in range(3)]
        await asyncio.sleep(2.0)
        for _ in range(8):
            await remb(viewers[0], 1500000)
            await remb(viewers[1], 1500000)
            await remb(viewers[2], 1)
            await asyncio.sleep(0.3)
        pub = publisher_of(gw, "remb")
        assert pub["remb_bitrate"] == 1500000, pub
        assert encoder_target(publisher["pc"]) == 1500000
        for viewer in viewers[:2]:
            await close(viewer)
        for _ in range(8):
            await remb(viewers[2], 1)
            await asyncio.sleep(0.3)
        assert publisher_of(gw, "remb")["remb_bitrate"] == 100000
        # (aiortc's VP8 encoder goes no lower than 250 kbit/s of its own.)
        assert encoder_target(publisher["pc"]) >= 100000
        await close(viewers[2])
        await close(publisher)

    asyncio.run(run())


def test_invalid_json_bodies_say_what_is_wrong(make_gateway):
    """/api/rooms, /ingest, /layer and /message answered "the body must be a
    JSON object" whatever was wrong; a 400 now carries jansson's words
    (invalid UTF-8, trailing junk, a duplicate key: what and at which byte),
    as printable ASCII. {"request": 5} to /message was answered as info."""
    gw = make_gateway()
    status, _, ingest = http(gw, "POST", "/api/rooms/r0/ingest",
                             {"audio": {"codec": "opus", "pt": 111}})
    assert status == 201, ingest
    session = ingest["resource"].rsplit("/", 1)[1]
    paths = ["/api/rooms", "/api/rooms/r0/ingest", "/api/rooms/r0/subscribers/x/layer",
             f"/api/sessions/{session}/message"]
    bodies = [(b'{"name":"\xff\xfe"}', "unable to decode byte 0xff"),
              (b'{"name":"ab"} x', "end of file expected"),
              (b'{"name":"ab"}\x00junk', "at byte"),
              (b'{"name":"a","name":"b"}', "duplicate object key"),
              (b'{"name":', "at byte"),
              # jansson quotes the bytes near the error: never a format string
              (b'{"a":"%n%n%s%s', '"%n%n%s%s')]
    for path in paths:
        for body, expect in bodies:
            status, _, reply = http(gw, "POST", path, body)
            assert status == 400 and reply["error"] == "bad_json", (path, body, status, reply)
            detail = reply["detail"]
            assert detail.startswith("the body is not valid JSON: ") and expect in detail, \
                (path, body, detail)
            assert all(" " <= c <= "~" for c in detail), detail
        # Valid JSON of another type keeps the old words.
        status, _, reply = http(gw, "POST", path, b"[1]")
        assert status == 400 and reply["detail"] == "the body must be a JSON object", (path, reply)
    for request in (5, None, True, ["info"], {"a": 1}):
        status, _, reply = http(gw, "POST", f"/api/sessions/{session}/message",
                                {"request": request})
        assert status == 400 and reply["error"] == "unknown_request", (request, status, reply)
    status, _, reply = http(gw, "POST", f"/api/sessions/{session}/message", {"request": "info"})
    assert status == 200, reply
    assert http(gw, "DELETE", ingest["resource"])[0] == 204
