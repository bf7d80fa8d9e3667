"""The room API across a Moat cluster (gateway/cluster/cluster_rpc.c,
cluster_rooms.c): node-to-node requests over Redis pub/sub. A room's API on
a node that does not own it is answered by the owner; GET /api/rooms on any
node lists every node's rooms, each marked with its node, and names the
nodes that did not answer (stopped: timeout; Redis away: unknown); a room
event on the owner reaches an events WebSocket on another node; forged
pub/sub messages (wrong shape, oversized, unknown node, a reply nobody
waits for) are dropped and counted, the node unharmed. redis-server and the
nodes are this test's own (loopback, free ports)."""
import asyncio
import json
import os
import shutil
import signal
import urllib.error
import urllib.request

import aiohttp
import pytest

from cluster_helpers import (PASSWORD, Redis, all_listed, nodes_factory, owner_of,  # noqa: F401
                             publish, redis, room_name, subscribe, wait_for, close)

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="redis-server is not installed")


def api(gw, method, path, body=None):
    """(status, headers, JSON body) of an API request."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {**gw.auth(), **({"Content-Type": "application/json"} if data else {})}
    request = urllib.request.Request(gw.base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            text = r.read()
            return r.status, r.headers, json.loads(text) if text else None
    except urllib.error.HTTPError as e:
        text = e.read()
        return e.code, e.headers, json.loads(text) if text else None


def two_nodes(redis, nodes_factory):
    gws = [nodes_factory(redis, "n0"), nodes_factory(redis, "n1")]
    wait_for("both nodes listed", lambda: all_listed(gws))
    return gws


def dropped(gw, reason):
    return gw.metric(f'moat_cluster_messages_dropped_total{{reason="{reason}"}}')


def test_room_api_on_a_non_owner_is_answered_by_the_owner(redis, nodes_factory):
    gws = two_nodes(redis, nodes_factory)
    room = room_name()

    async def run():
        pub = await publish(f"{gws[0].base}/whip/room/{room}")
        owner = owner_of(gws, room)[0]
        other = gws[1] if owner is gws[0] else gws[0]
        sub = await subscribe(f"{owner.base}/whep/room/{room}")
        # Info: the owner's answer, through the other node.
        status, headers, info = api(other, "GET", f"/api/rooms/{room}")
        assert status == 200, info
        assert headers["X-Moat-Node"] in ("n0", "n1") and headers["X-Moat-Node"] != (
            "n0" if other is gws[0] else "n1")
        assert info["name"] == room and info["publisher_count"] == 1
        assert info["subscriber_count"] == 1 and len(info["subscribers"]) == 1
        # Configure: a subscriber's layer, through the other node. The owner
        # finds the subscriber and says its publisher sends no layers (the
        # other node alone would not know the room: 404 unknown_room).
        subscriber = info["subscribers"][0]["id"]
        status, headers, answer = api(other, "POST",
                                      f"/api/rooms/{room}/subscribers/{subscriber}/layer",
                                      {"rid": "auto"})
        assert status == 409 and answer["error"] == "not_simulcast", answer
        assert headers["X-Moat-Node"] != ("n0" if other is gws[0] else "n1")
        status, _, answer = api(other, "POST", f"/api/rooms/{room}/subscribers/nobody/layer",
                                {"rid": "auto"})
        assert status == 404 and answer["error"] != "unknown_room", answer
        # Another method: the owner's 405, its Allow header kept on the way.
        status, headers, answer = api(other, "PUT", f"/api/rooms/{room}")
        assert status == 405 and answer["error"] == "method_not_allowed", answer
        assert headers["Allow"] == "GET, HEAD, DELETE", headers
        assert headers["X-Moat-Node"] != ("n0" if other is gws[0] else "n1")
        # An unknown room is the owner's 404 when nobody owns it: local.
        status, _, answer = api(other, "GET", f"/api/rooms/{room_name()}")
        assert status == 404 and answer["error"] == "unknown_room"
        # An owner that does not answer in time: Moat's own timeout, 504 JSON.
        os.kill(owner.process.pid, signal.SIGSTOP)
        try:
            status, _, answer = api(other, "GET", f"/api/rooms/{room}")
        finally:
            os.kill(owner.process.pid, signal.SIGCONT)
        assert status == 504 and answer["error"] == "node_timeout", answer
        assert other.metric('moat_cluster_requests_total{outcome="sent"}') >= 2
        assert owner.metric('moat_cluster_requests_total{outcome="served_for_others"}') >= 2
        await close(sub, pub)

    asyncio.run(run())


def test_room_list_covers_the_cluster_and_names_silent_nodes(redis, nodes_factory):
    gws = two_nodes(redis, nodes_factory)
    rooms = {gw: room_name() for gw in gws}
    for gw, room in rooms.items():  # one room made on each node
        status, _, answer = api(gw, "POST", "/api/rooms", {"name": room})
        assert status == 201, answer
    for gw in gws:
        status, _, listing = api(gw, "GET", "/api/rooms")
        assert status == 200, listing
        where = {r["name"]: r["node"] for r in listing["rooms"]}
        assert where == {rooms[gws[0]]: "n0", rooms[gws[1]]: "n1"}, listing
        assert listing["nodes"] == {"n0": "ok", "n1": "ok"} and listing["complete"] is True
        assert listing["unknown_nodes"] == []
    # A node that does not answer in time is named, not left out.
    os.kill(gws[1].process.pid, signal.SIGSTOP)
    try:
        status, _, listing = api(gws[0], "GET", "/api/rooms")
        assert status == 200
        assert [r["name"] for r in listing["rooms"]] == [rooms[gws[0]]]
        assert listing["nodes"]["n1"] == "timeout" and listing["unknown_nodes"] == ["n1"]
        assert listing["complete"] is False
        assert gws[0].metric('moat_cluster_requests_total{outcome="timeout"}') >= 1
    finally:
        os.kill(gws[1].process.pid, signal.SIGCONT)
    # Redis away: this node's rooms, the others unknown.
    redis.stop()
    wait_for("n0 sees Redis down", lambda: gws[0].metric("moat_cluster_redis_up") == 0)
    status, _, listing = api(gws[0], "GET", "/api/rooms")
    assert status == 200
    assert [(r["name"], r["node"]) for r in listing["rooms"]] == [(rooms[gws[0]], "n0")]
    assert listing["nodes"] == {"n0": "ok", "n1": "unknown"}, listing
    assert listing["unknown_nodes"] == ["n1"]
    redis.start()


def test_room_events_reach_listeners_on_another_node(redis, nodes_factory):
    gws = two_nodes(redis, nodes_factory)
    room = room_name()

    async def run():
        pub = await publish(f"{gws[0].base}/whip/room/{room}")
        owner = owner_of(gws, room)[0]
        other = gws[1] if owner is gws[0] else gws[0]
        async with aiohttp.ClientSession() as http:
            ws = await http.ws_connect(other.base.replace("http", "ws") +
                                       f"/api/rooms/{room}/events")
            sub = await subscribe(f"{owner.base}/whep/room/{room}")
            event = None
            try:
                while True:
                    message = await ws.receive(timeout=10)
                    assert message.type == aiohttp.WSMsgType.TEXT, message
                    event = json.loads(message.data)
                    if event["type"] == "joined" and event["role"] == "subscriber":
                        break
            except asyncio.TimeoutError:
                raise AssertionError(f"no joined event on the other node (last: {event})")
            assert event["room"] == room
            await ws.close()
            await close(sub, pub)
        assert other.metric('moat_cluster_events_relayed_total{direction="in"}') >= 1
        assert owner.metric('moat_cluster_events_relayed_total{direction="out"}') >= 1

    asyncio.run(run())


@pytest.mark.hostile
def test_forged_pubsub_messages_are_dropped_and_counted(redis, nodes_factory):
    gws = two_nodes(redis, nodes_factory)
    victim = gws[1]
    channel = "moat:rpc:n1"

    def publish_raw(where, payload):
        reply = redis.command("PUBLISH", where, payload)
        assert reply.startswith(b":") and int(reply[1:].split(b"\r\n")[0]) >= 1, reply

    def request(**fields):
        base = {"v": 1, "kind": "request", "from": "n0", "id": "x1",
                "reply_to": "moat:rpc:n0", "method": "GET", "path": "/api/rooms"}
        base.update(fields)
        return json.dumps({k: v for k, v in base.items() if v is not None})

    cases = [
        ("malformed", b"not json at all"),
        ("malformed", json.dumps([1, 2, 3])),
        ("malformed", request(v=2)),
        ("malformed", request(method="TRACE")),
        ("malformed", request(id=None)),
        ("malformed", request(**{"from": 7})),
        ("oversized", request(body="x" * 300_000)),
        ("unknown_node", request(**{"from": "ghost", "reply_to": "moat:rpc:ghost"})),
        ("reply_channel", request(reply_to="moat:rpc:elsewhere")),
        ("path", request(path="/api/sessions")),
        ("path", request(path="/api/rooms/../cluster")),
        ("unknown_request", json.dumps({"v": 1, "kind": "reply", "from": "n0",
                                        "id": "never-asked", "status": 200, "body": "{}"})),
    ]
    before = {reason: dropped(victim, reason) for reason, _ in cases}
    expected = dict(before)
    for reason, payload in cases:
        publish_raw(channel, payload)
        expected[reason] += 1
    # Events: from an unknown node, with a topic no room has, not an object.
    publish_raw("moat:events", json.dumps({"v": 1, "kind": "event", "from": "ghost",
                                           "topic": "rooms/a", "body": "{}"}))
    expected["unknown_node"] += 1
    publish_raw("moat:events", json.dumps({"v": 1, "kind": "event", "from": "n0",
                                           "topic": "sessions/a", "body": "{}"}))
    expected["malformed"] += 1
    publish_raw("moat:events", json.dumps({"v": 1, "kind": "event", "from": "n0",
                                           "topic": "rooms/a", "body": "[1]"}))
    expected["malformed"] += 1
    wait_for("every forged message counted",
             lambda: all(dropped(victim, r) == n for r, n in expected.items()))
    assert "hostile: dropped a message" in victim.log_text()
    # Nothing was served for the forger, and the node still answers.
    assert victim.metric('moat_cluster_requests_total{outcome="served_for_others"}') == 0
    status, _, listing = api(victim, "GET", "/api/rooms")
    assert status == 200 and listing["complete"] is True
