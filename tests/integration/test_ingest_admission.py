"""RTP ingest is admitted like a WHIP offer and bounded like one: the session
cap ([limits] max_sessions) refuses it with a JSON 503, one source may run
only [limits] ingest_per_source ingests, an ingest that stops receiving ends
after [limits] ingest_idle_timeout_s and frees its port (from [media]
port_min..port_max), and DELETE .../ingest/<id> ends only an ingest of that
room, never another session whose resource id it is given."""
import json
import socket
import time

import pytest

from conftest import Gateway, free_port
from hostile_http import post_offer, request

AUDIO = {"audio": {"codec": "opus", "pt": 111}}


def rtp(sequence, ssrc=0x1234, pt=111):
    return bytes([0x80, pt, sequence >> 8, sequence & 0xFF, 0, 0, 0, sequence & 0xFF, ssrc >> 24,
                  (ssrc >> 16) & 0xFF, (ssrc >> 8) & 0xFF, ssrc & 0xFF]) + b"\xfc\xff\xfe"


def sessions(gw):
    return json.loads(gw.get("/healthz"))["sessions"]


def wait_for(predicate, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline and not predicate():
        time.sleep(0.1)
    return predicate()


@pytest.fixture
def make_gateway():
    started = []

    def make(*args, **kwargs):
        gw = Gateway(extra_args=args, workers=1, **kwargs)
        started.append(gw)
        return gw

    yield make
    for gw in started:
        assert gw.stop() == 0, f"moat exited badly; log in {gw.log_path}"


def test_ingest_obeys_the_session_cap(make_gateway):
    gw = make_gateway("--max-sessions", "3")
    statuses, bodies = [], []
    for i in range(50):
        status, headers, body = request(gw, "POST", f"/api/rooms/cap{i}/ingest", AUDIO)
        statuses.append(status)
        bodies.append((status, headers, body))
    assert statuses[:3] == [201, 201, 201], bodies[:4]
    status, headers, body = bodies[3]
    assert status == 503 and body["error"] == "max_sessions", body
    assert int(headers["Retry-After"]) >= 1
    assert statuses.count(201) == 3, statuses
    # Beyond the burst the per-source offer rate answers first.
    assert set(statuses[3:]) <= {503, 429}, statuses
    assert sessions(gw) == 3
    # Ingest and WHIP share the cap (and the source's offer rate).
    status, _, body = post_offer(gw, source="127.0.0.9")
    assert status == 503 and body["error"] == "max_sessions", body


def test_ingest_quota_per_source(make_gateway):
    gw = make_gateway("--ingest-per-source", "2", "--whip-rate-per-ip", "0")
    created = []
    for _ in range(2):
        status, _, body = request(gw, "POST", "/api/rooms/quota/ingest", AUDIO)
        assert status == 201, body
        created.append(body)
    status, headers, body = request(gw, "POST", "/api/rooms/quota/ingest", AUDIO)
    assert status == 429 and body["error"] == "ingest_per_source", body
    assert int(headers["Retry-After"]) >= 1
    assert gw.metric('moat_http_refused_total{reason="ingest_per_source"}') == 1
    # Another source has its own quota.
    status, _, body = request(gw, "POST", "/api/rooms/quota/ingest", AUDIO, source="127.0.0.2")
    assert status == 201, body
    # Ending one gives the first source its slot back.
    assert request(gw, "DELETE", created[0]["resource"])[0] == 204
    status, _, body = request(gw, "POST", "/api/rooms/quota/ingest", AUDIO)
    assert status == 201, body


def test_idle_ingest_ends_and_frees_its_port(make_gateway):
    low = free_port(socket.SOCK_DGRAM, 16)
    gw = make_gateway("--ingest-idle-timeout", "2", "--media-port-min", str(low),
                      "--media-port-max", str(low + 15))
    status, _, idle = request(gw, "POST", "/api/rooms/idle/ingest", AUDIO)
    assert status == 201, idle
    status, _, fed = request(gw, "POST", "/api/rooms/fed/ingest", AUDIO)
    assert status == 201, fed
    for body in (idle, fed):
        assert low <= body["port"] <= low + 15, body  # from the configured range
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(5):
        sender.sendto(rtp(i), ("127.0.0.1", idle["port"]))
    # One sender goes quiet, the other keeps sending: only the quiet one ends.
    deadline = time.time() + 4.5
    sequence = 0
    while time.time() < deadline:
        sender.sendto(rtp(sequence), ("127.0.0.1", fed["port"]))
        sequence += 1
        time.sleep(0.05)
    status, _, room = request(gw, "GET", "/api/rooms/fed")
    assert status == 200 and room["publisher_count"] == 1, room
    assert wait_for(lambda: request(gw, "GET", "/api/rooms/idle")[0] == 404, 5)
    assert sessions(gw) == 1
    assert request(gw, "DELETE", idle["resource"])[0] == 404
    # Its port is free again.
    probe = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    probe.bind(("::", idle["port"]))
    probe.close()
    sender.close()
    # The fed one ends too once it stops.
    assert wait_for(lambda: sessions(gw) == 0, 6)


def test_ingest_delete_is_scoped_to_its_room_and_to_ingests(make_gateway):
    gw = make_gateway()
    status, headers, _ = post_offer(gw, "/whip/room/stage")
    assert status == 201
    whip_id = headers["Location"].rsplit("/", 1)[1]
    status, _, ingest = request(gw, "POST", "/api/rooms/live/ingest", AUDIO)
    assert status == 201, ingest
    ingest_id = ingest["resource"].rsplit("/", 1)[1]
    # A WHIP session's resource id through any room's ingest route: not found.
    for room in ("live", "stage"):
        status, _, body = request(gw, "DELETE", f"/api/rooms/{room}/ingest/{whip_id}")
        assert status == 404 and body["error"] == "unknown_ingest", body
    # An ingest through another room's route: not found either.
    status, _, body = request(gw, "DELETE", f"/api/rooms/stage/ingest/{ingest_id}")
    assert status == 404, body
    assert sessions(gw) == 2
    status, _, room = request(gw, "GET", "/api/rooms/stage")
    assert status == 200 and room["publisher_count"] == 1, room
    # The right route still works.
    assert request(gw, "DELETE", ingest["resource"])[0] == 204
    assert wait_for(lambda: sessions(gw) == 1, 5)
