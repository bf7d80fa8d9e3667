"""The API's capability model against clients without the token: an API that
listens beyond loopback generates a token (file 0600, named on stderr) and
every /api/ route but a session's own needs it; WHIP and WHEP stay open
unless [http] whip_token is set; a session's public label acts on nothing,
its resource id does; TURN credentials are per session and reach only the
session's WHIP 201 or token holders; log lines never carry a resource id;
a few sources at the allowed offer rate cannot hold the pending pool."""
import asyncio
import json
import os
import re
import socket
import stat
import subprocess
import time

import pytest

from aiortc_peer import echo_call
from conftest import MOAT, Gateway, free_port
from hostile_http import post_offer, request
from stun_check import binding_request


@pytest.fixture
def make_gateway():
    started = []

    def make(*args, **kwargs):
        gw = Gateway(extra_args=args, workers=kwargs.pop("workers", 1), **kwargs)
        started.append(gw)
        return gw

    yield make
    for gw in started:
        assert gw.stop() == 0, f"moat exited badly; log in {gw.log_path}"


def test_token_generated_when_the_api_binds_every_address(make_gateway):
    gw = make_gateway("--http-bind", "0.0.0.0")
    token_file = gw.token_file
    assert token_file.exists(), gw.log_text()
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    token = token_file.read_text().strip()
    assert re.fullmatch(r"[0-9a-f]{64}", token), token
    log = gw.log_text()
    assert str(token_file) in log and token not in log
    auth = {"Authorization": "Bearer " + token}
    wrong = {"Authorization": "Bearer " + "0" * 64}
    guarded = [("GET", "/api/sessions", None), ("GET", "/api/calls", None),
               ("GET", "/api/ice-servers", None), ("POST", "/api/rooms", {"name": "made"}),
               ("DELETE", "/api/rooms/made", None),
               ("POST", "/api/rooms/made/ingest", {"audio": {"codec": "opus", "pt": 111}})]
    for method, path, body in guarded:
        for headers in ({}, wrong):
            status, reply_headers, reply = request(gw, method, path, body, headers)
            assert status == 401 and reply["error"] == "unauthorized", (method, path, reply)
            assert reply_headers["WWW-Authenticate"] == "Bearer"
    # WHIP stays open (RFC 9725); the token opens the API.
    assert post_offer(gw)[0] == 201
    assert request(gw, "GET", "/api/calls", headers=auth)[0] == 200
    assert request(gw, "POST", "/api/rooms", {"name": "made"}, auth)[0] in (200, 201)
    assert request(gw, "DELETE", "/api/rooms/made", headers=auth)[0] in (200, 204)
    status, _, ingest = request(gw, "POST", "/api/rooms/made/ingest",
                                {"audio": {"codec": "opus", "pt": 111}}, auth)
    assert status == 201, ingest
    assert request(gw, "DELETE", ingest["resource"], headers=auth)[0] == 204


def test_failed_second_start_leaves_the_token_file(make_gateway):
    """A second Moat started by mistake on the same HTTP port fails ("in
    use"); it wrote its own token over the running one's file first, which
    then answered 401 to whoever read it. The file is written once every
    port is bound."""
    gw = make_gateway("--http-bind", "0.0.0.0")
    token = gw.token_file.read_text().strip()
    env = {**os.environ, "MOAT_HTTP_TOKEN_FILE": str(gw.token_file)}
    second = subprocess.run(
        [str(MOAT), "--http-bind", "0.0.0.0", "--http-port", str(gw.http_port), "--media-port",
         str(free_port(socket.SOCK_DGRAM)), "--workers", "1", "--ng-port", "0"],
        capture_output=True, text=True, timeout=30, env=env)
    assert second.returncode != 0 and "HTTP port" in second.stderr, second.stderr
    assert gw.token_file.read_text().strip() == token
    assert [p.name for p in gw.token_file.parent.glob(gw.token_file.name + ".*")] == []
    auth = {"Authorization": "Bearer " + token}
    assert request(gw, "GET", "/api/sessions", headers=auth)[0] == 200


def test_loopback_api_without_token_stays_open(make_gateway):
    gw = make_gateway()
    assert not gw.token_file.exists()
    assert request(gw, "GET", "/api/calls")[0] == 200
    assert request(gw, "GET", "/api/sessions")[0] == 200


def test_whip_token_guards_offers_not_resources(make_gateway):
    gw = make_gateway("--whip-token", "publish-secret", "--token", "api-secret")
    status, _, reply = post_offer(gw)
    assert status == 401 and reply["error"] == "unauthorized", reply
    assert post_offer(gw, "/whep/room/r")[0] == 401
    assert post_offer(gw, headers={"Authorization": "Bearer wrong"})[0] == 401
    status, headers, _ = post_offer(gw, headers={"Authorization": "Bearer publish-secret"})
    assert status == 201
    # The API token holder may publish too; the resource URL is its own capability.
    assert post_offer(gw, headers={"Authorization": "Bearer api-secret"})[0] == 201
    assert request(gw, "DELETE", headers["Location"])[0] == 200


def test_label_cannot_act_on_a_session_its_resource_id_can(make_gateway, tmp_path):
    gw = make_gateway("--record-dir", str(tmp_path / "rec"))
    status, headers, _ = post_offer(gw, "/whip/room/victim")
    assert status == 201
    resource_id = headers["Location"].rsplit("/", 1)[1]
    label = json.loads(gw.get("/api/sessions"))["sessions"][0]["id"]
    assert label != resource_id
    configure = {"request": "configure", "audio": False}
    for name in (label, "1", "nosuch"):
        status, _, reply = request(gw, "POST", f"/api/sessions/{name}/message", configure)
        assert status in (403, 404) and reply["error"], reply
        status, _, reply = request(gw, "POST", f"/api/sessions/{name}/recording")
        assert status in (403, 404) and reply["error"], reply
    status, _, reply = request(gw, "POST", f"/api/sessions/{label}/message", configure)
    assert status == 403 and reply["error"] == "label_not_capability", reply
    assert gw.metric("moat_recordings_active") == 0
    # The capability works: a message reaches the plugin, a recording starts.
    status, _, reply = request(gw, "POST", f"/api/sessions/{resource_id}/message",
                               {"request": "info"})
    assert status == 200 and reply["role"] == "publisher", reply
    status, _, reply = request(gw, "POST", f"/api/sessions/{resource_id}/recording")
    assert status == 201, reply
    # The reply names the file relative to the recording folder.
    assert not reply["file"].startswith("/") and str(tmp_path) not in reply["file"], reply
    assert (tmp_path / "rec" / reply["file"]).parent == tmp_path / "rec"
    status, _, reply = request(gw, "DELETE", f"/api/sessions/{resource_id}/recording")
    assert status == 200 and not reply["file"].startswith("/"), reply


def link_usernames(headers):
    return re.findall(r'rel="ice-server"; username="([^"]+)"', ", ".join(headers.get_all("Link")))


def test_turn_credentials_per_session_only_in_link_or_with_token(make_gateway):
    gw = make_gateway("--turn-uris", "turn:127.0.0.1:3478?transport=udp", "--turn-secret", "north",
                      "--token", "api-secret")
    users = []
    for _ in range(2):
        # (The token on the offer is not needed, WHIP is open; older gateways wanted it.)
        status, headers, _ = post_offer(gw, headers={"Authorization": "Bearer api-secret"})
        assert status == 201
        users += link_usernames(headers)
    assert len(users) == 2 and users[0] != users[1], users
    for username in users:
        expiry, user = username.split(":")
        assert time.time() + 60 < int(expiry) <= time.time() + 3600 + 5, username
        assert re.fullmatch(r"[0-9a-f]{32}", user), username
    status, _, reply = request(gw, "GET", "/api/ice-servers")
    assert status == 401, reply
    status, _, reply = request(gw, "GET", "/api/ice-servers",
                               headers={"Authorization": "Bearer api-secret"})
    assert status == 200 and reply["iceServers"][0]["username"] not in users, reply


def test_log_lines_carry_no_resource_id(make_gateway):
    gw = make_gateway(workers=2)
    status, headers, _ = post_offer(gw)
    assert status == 201
    resource_id = headers["Location"].rsplit("/", 1)[1]
    restart = b"a=ice-ufrag:efgh\r\na=ice-pwd:zyxwvutsrqponmlkjihgfedc\r\n"
    assert request(gw, "PATCH", headers["Location"], restart,
                   {"Content-Type": "application/trickle-ice-sdpfrag", "If-Match": "*"})[0] == 200
    assert request(gw, "POST", f"/api/sessions/{resource_id}/message", {"request": "x"})[0] < 300
    assert request(gw, "DELETE", headers["Location"])[0] == 200
    result = asyncio.run(echo_call(gw.base, seconds=2))
    assert result["recorders"]["audio"].frames > 0
    resources = [resource_id, result["resource"].rsplit("/", 1)[1]]
    deadline = time.time() + 5
    while time.time() < deadline and "ended" not in gw.log_text().split("DTLS connected")[-1]:
        time.sleep(0.1)
    log = gw.log_text()
    assert "DTLS connected" in log and "created on worker" in log, log[-2000:]
    for resource in resources:
        assert resource not in log, [line for line in log.splitlines() if resource in line][:3]


def test_six_sources_at_the_allowed_rate_cannot_starve_a_client(make_gateway):
    """Built-in limits: 10 offers/s per source with a burst of 30, 100
    pending sessions, 10 s to connect. Six sources sending their whole burst
    of offers that never connect hold at most 5 pending sessions each."""
    gw = make_gateway()
    refused = {}
    for source in range(2, 8):
        for _ in range(30):
            status, _, reply = post_offer(gw, source=f"127.0.0.{source}")
            if status != 201:
                refused[reply["error"]] = refused.get(reply["error"], 0) + 1
    statuses = []
    for _ in range(20):
        status, headers, reply = post_offer(gw)
        statuses.append(status)
        if status == 201:
            assert request(gw, "DELETE", headers["Location"])[0] == 200
    assert statuses.count(503) == 0 and statuses.count(201) >= 18, (statuses, refused)
    assert refused == {"max_pending_per_source": 6 * 25}, refused
    assert gw.metric("moat_pending_sessions") <= 6 * 5 + 5


def test_a_source_answering_one_check_and_no_dtls_stays_capped(make_gateway):
    """Built-in limits again. Each offer from one source gets one nominated
    ICE check and then silence (no DTLS). Such a session stays counted
    against its source until DTLS is up: before, it left the count at the
    first check and held a session for the 30 s setup timeout, so at 10
    offers/s one address held some 330 sessions and three filled
    max_sessions (1000) for everyone."""
    gw = make_gateway()
    answered, refused = 0, {}
    for _ in range(30):  # the source's whole burst
        status, _, reply = post_offer(gw, source="127.0.0.2")
        if status != 201:
            refused[reply["error"]] = refused.get(reply["error"], 0) + 1
            continue
        sdp = reply if isinstance(reply, str) else reply.decode()
        ufrag = re.search(r"a=ice-ufrag:(\S+)", sdp).group(1)
        pwd = re.search(r"a=ice-pwd:(\S+)", sdp).group(1)
        port = int(re.search(r"a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 (\d+) typ host",
                             sdp).group(1))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as peer:
            peer.bind(("127.0.0.2", 0))
            peer.settimeout(1.0)
            peer.sendto(binding_request(ufrag, "abcd", pwd, nominate=True), ("127.0.0.1", port))
            peer.recv(2048)  # the check is answered: ICE is up
            answered += 1
    assert answered == 5, (answered, refused)
    assert refused == {"max_pending_per_source": 25}, refused
    assert gw.metric("moat_sessions") == 5
    assert gw.metric("moat_pending_sessions") == 5


def test_recording_errors_name_no_server_path(make_gateway, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    gw = make_gateway("--record-dir", str(blocker / "rec"))
    status, headers, _ = post_offer(gw)
    assert status == 201
    resource_id = headers["Location"].rsplit("/", 1)[1]
    status, _, reply = request(gw, "POST", f"/api/sessions/{resource_id}/recording")
    # An error reply (and moat_record_failures_total), never the server's path.
    assert status == 500 and reply["error"] == "recording_failed", reply
    assert str(tmp_path) not in json.dumps(reply), reply
