"""Proxy mode for clients that reach only the node they posted to
(gateway/cluster/cluster_resources.c): a WHEP subscriber posted to node B
for a room node A owns gets a Location on B (/whip/resource/via/<A in
hex>/<id>); its PATCH (trickle, ICE restart with If-Match and ETag) and its
DELETE through B reach the session on A and come back with A's status,
ETag and body, and the DELETE ends the session on A. Forged, malformed and
unknown via/ paths through B get a 4xx JSON and touch no other session.
The owner counts a forwarded offer against the client B names, not against
B: one client's offers through B cannot use up the offer rate of every
other client behind B, and a client cannot choose whom it counts against
by sending X-Forwarded-For itself."""
import asyncio
import http.client
import json
import shutil
import uuid
from urllib.parse import urlsplit

import pytest

from cluster_helpers import (all_listed, close, media_arrives, nodes_factory, owner_and_other,  # noqa: F401
                             owner_of, publish, redis, room_name, subscribe, wait_for)

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="redis-server is not installed (scripts/install-deps.sh)")

FRAG = "application/trickle-ice-sdpfrag"
TRICKLE = b"a=candidate:1 1 udp 2130706431 192.0.2.1 9 typ host\r\n"
RESTART = b"a=ice-ufrag:efgh\r\na=ice-pwd:zyxwvutsrqponmlkjihgfedc\r\n"


def request(base, method, path, body=None, headers=None, source=None):
    """(status, headers, body bytes): the path sent as it is (no
    normalisation of dots), never raising for an HTTP error status; from
    the address `source` when given."""
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10,
                                            source_address=(source, 0) if source else None)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        reply = connection.getresponse()
        return reply.status, dict(reply.getheaders()), reply.read()
    finally:
        connection.close()


def subscribers(gw, room):
    return json.loads(gw.get(f"/api/rooms/{room}"))["subscriber_count"]


async def room_owned_elsewhere(redis, nodes_factory):
    """Two proxy-mode nodes, a publisher, and a subscriber posted to the
    node that does not own the room."""
    gws = [nodes_factory(redis, f"n{i}", "proxy") for i in range(2)]
    wait_for("both nodes listed", lambda: all_listed(gws))
    room = room_name()
    pub = await publish(f"{gws[0].base}/whip/room/{room}")
    owner = owner_of(gws, room)[0]
    other = gws[1] if owner is gws[0] else gws[0]
    sub = await subscribe(f"{other.base}/whep/room/{room}")
    return gws, room, pub, owner, other, sub


def test_patch_and_delete_through_the_proxying_node(redis, nodes_factory):
    async def run():
        gws, room, pub, owner, other, sub = await room_owned_elsewhere(redis, nodes_factory)
        owner_id = f"n{gws.index(owner)}"
        location = sub["location"]
        path = urlsplit(location).path
        # The Location is on the node posted to, naming the owner.
        assert location.startswith(other.base + "/whip/resource/via/"), location
        assert path.split("/")[4] == owner_id.encode().hex()
        await media_arrives(sub)
        assert subscribers(owner, room) == 1
        # Trickle through the proxying node: the owner's 204.
        status, _, body = request(other.base, "PATCH", path, TRICKLE, {"Content-Type": FRAG})
        assert status == 204, body
        # An ICE restart: the owner's 200, its fragment and its new ETag.
        status, _, body = request(other.base, "PATCH", path, RESTART, {"Content-Type": FRAG})
        assert status == 428 and json.loads(body)["error"] == "precondition_required"
        status, headers, body = request(other.base, "PATCH", path, RESTART,
                                        {"Content-Type": FRAG, "If-Match": "*"})
        assert status == 200, body
        assert headers["Content-Type"].startswith(FRAG)
        assert b"a=ice-ufrag:" in body and headers.get("ETag")
        # If-Match goes through: a stale tag is the owner's 412.
        status, _, body = request(other.base, "PATCH", path, RESTART,
                                  {"Content-Type": FRAG, "If-Match": '"stale"'})
        assert status == 412 and json.loads(body)["error"] == "etag_mismatch"
        assert other.metric('moat_cluster_resource_requests_total{outcome="forwarded"}') == 4
        # DELETE through the proxying node ends the session on the owner.
        status, _, body = request(other.base, "DELETE", path)
        assert status == 200, body
        wait_for("the owner's subscriber gone", lambda: subscribers(owner, room) == 0, timeout=5)
        status, _, body = request(other.base, "DELETE", path)
        assert status == 404 and json.loads(body)["error"] == "unknown_session"
        await sub["pc"].close()
        for recorder in sub["recorders"].values():
            recorder.task.cancel()
        await close(pub)

    asyncio.run(run())


@pytest.mark.hostile
def test_forged_via_paths_touch_no_other_session(redis, nodes_factory):
    async def run():
        gws, room, pub, owner, other, sub = await room_owned_elsewhere(redis, nodes_factory)
        owner_hex = f"n{gws.index(owner)}".encode().hex()
        await media_arrives(sub)
        forged = [
            # A real owner, an id it never made: the owner's own 404.
            ("PATCH", f"/whip/resource/via/{owner_hex}/{uuid.uuid4().hex}", "unknown_session"),
            ("DELETE", f"/whip/resource/via/{owner_hex}/{uuid.uuid4().hex}", "unknown_session"),
            # A node that is not in the cluster.
            ("DELETE", f"/whip/resource/via/{'n9'.encode().hex()}/{uuid.uuid4().hex}",
             "owner_gone"),
            # Malformed: odd or non-hex node, no id, a path in the id, a
            # node id with a NUL or a space, an oversized id.
            ("DELETE", f"/whip/resource/via/{owner_hex}0/{uuid.uuid4().hex}", "unknown_session"),
            ("PATCH", f"/whip/resource/via/zz/{uuid.uuid4().hex}", "unknown_session"),
            ("DELETE", f"/whip/resource/via/{owner_hex}/", "unknown_session"),
            ("DELETE", f"/whip/resource/via/{owner_hex}/../../api/rooms/{room}",
             "unknown_session"),
            ("DELETE", f"/whip/resource/via/6e3000/{uuid.uuid4().hex}", "unknown_session"),
            ("DELETE", f"/whip/resource/via/6e2030/{uuid.uuid4().hex}", "unknown_session"),
            ("DELETE", f"/whip/resource/via/{owner_hex}/{'a' * 40}", "unknown_session"),
            ("DELETE", "/whip/resource/via/", "unknown_session"),
            # At the limits: a node id of 127 bytes (the most a name holds)
            # is looked up and absent, one of 128 is malformed; an id of 39
            # characters reaches the owner, who never made it.
            ("DELETE", f"/whip/resource/via/{('a' * 127).encode().hex()}/{uuid.uuid4().hex}",
             "owner_gone"),
            ("DELETE", f"/whip/resource/via/{('a' * 128).encode().hex()}/{uuid.uuid4().hex}",
             "unknown_session"),
            ("DELETE", f"/whip/resource/via/{owner_hex}/{'a' * 39}", "unknown_session"),
            # Only PATCH and DELETE are forwarded.
            ("GET", f"/whip/resource/via/{owner_hex}/{uuid.uuid4().hex}", "method_not_allowed"),
        ]
        for method, path, error in forged:
            status, headers, body = request(other.base, method, path,
                                            b"a=end-of-candidates\r\n" if method == "PATCH"
                                            else None,
                                            {"Content-Type": FRAG} if method == "PATCH" else {})
            assert 400 <= status < 500, (method, path, status, body)
            assert headers["Content-Type"].startswith("application/json"), (path, headers)
            assert json.loads(body)["error"] == error, (path, body)
            if error == "method_not_allowed":
                assert headers["Allow"] == "PATCH, DELETE", (path, headers)
        assert other.metric('moat_cluster_resource_requests_total{outcome="forwarded"}') == 3
        assert other.metric('moat_cluster_resource_requests_total{outcome="refused"}') >= 9
        # The real subscriber and the publisher are untouched.
        assert subscribers(owner, room) == 1
        await media_arrives(sub)
        await close(sub, pub)

    asyncio.run(run())


def test_offer_rate_counts_the_client_behind_the_proxying_node(redis, nodes_factory):
    """Default limits (10 offers/s, a burst of 30 per source): a client
    sends 30 junk offers through the node that does not own the room; a
    second client behind that node is still heard by the owner (its junk
    gets the owner's 400, not 429). A client that names another address in
    X-Forwarded-For without the node credential is counted as itself."""
    gws = [nodes_factory(redis, f"n{i}", "proxy") for i in range(2)]
    wait_for("both nodes listed", lambda: all_listed(gws))
    room = room_name()

    async def run():
        pub = await publish(f"{gws[0].base}/whip/room/{room}")
        try:
            await asyncio.to_thread(offers, *owner_and_other(gws, room))
        finally:
            await close(pub)

    def offers(owner, other):
        sdp = {"Content-Type": "application/sdp"}
        path = f"/whep/room/{room}"
        statuses = [request(other.base, "POST", path, b"junk", sdp, source="127.0.0.2")[0]
                    for _ in range(30)]
        assert 429 not in statuses, statuses
        status, _, body = request(other.base, "POST", path, b"v=0\r\n", sdp, source="127.0.0.3")
        assert status == 400 and json.loads(body)["error"] == "bad_sdp", body
        # Straight to the owner, naming someone else: its own bucket empties.
        forged = dict(sdp, **{"X-Forwarded-For": "192.0.2.77", "X-Moat-Forwarded": "0" * 64})
        statuses = [request(owner.base, "POST", path, b"junk", forged, source="127.0.0.4")[0]
                    for _ in range(40)]
        assert statuses.count(429) >= 5, statuses
        status, _, body = request(owner.base, "POST", path, b"junk", sdp, source="127.0.0.4")
        assert status == 429 and json.loads(body)["error"] == "rate_limited", body
    asyncio.run(run())
