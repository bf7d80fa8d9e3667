"""Rooms that span nodes (gateway/cluster/cascade_*.c): three Moat nodes on
one redis-server (cluster_helpers.py), a publisher on the owner and aiortc
subscribers on the owner and on two edge nodes (WHEP ?edge=), each edge fed
by a cascade link (SRTP with SRTP+ prn tags, keys sent over the owner's
HTTP API). Every subscriber hears the 440 Hz tone and decodes video; a
forged flood spoofing the owner's address at an edge's cascade port dies in
the prefilter before the HMAC while the subscribers keep their media; the
link closes after the last edge subscriber; a SIGKILLed edge's leg ends on
the owner, and a SIGKILLed owner's edge ends its subscribers, each within
seconds; with [cluster] cascade = always no ?edge= is needed, nor when the
owner is at its session limit; a link from a node that lost the room gives
way to a link from the new owner at the next edge offer."""
import asyncio
import base64
import hashlib
import json
import shutil
import signal
import threading
import time
import urllib.error
import urllib.request

import aiohttp
import pytest

from cluster_helpers import (PASSWORD, all_listed, close, media_arrives, nodes_factory, owner_and_other,  # noqa: F401
                             owner_of, publish, redis, room_name, subscribe, wait_for)
from spoof import flood

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="redis-server is not installed (scripts/install-deps.sh)")


def three_nodes(redis, nodes_factory):
    gws = [nodes_factory(redis, f"n{i}") for i in range(3)]
    wait_for("three nodes listed", lambda: all_listed(gws))
    return gws


async def room_with_edges(gws, room):
    """Publishes on n0 (followed to wherever the room is placed); one
    subscriber on the owner, one on each other node through a cascade: the
    first asks the owner to send it to that node (307 to the edge), the
    second asks its own node."""
    pub = await publish(f"{gws[0].base}/whip/room/{room}")
    owners = owner_of(gws, room)
    assert len(owners) == 1
    owner = owners[0]
    edges = [gw for gw in gws if gw is not owner]
    ids = {gw: f"n{gws.index(gw)}" for gw in gws}
    local = await subscribe(f"{owner.base}/whep/room/{room}")
    first = await subscribe(f"{owner.base}/whep/room/{room}?edge={ids[edges[0]]}")
    second = await subscribe(f"{edges[1].base}/whep/room/{room}?edge=")
    assert [s for s, _ in first["history"]] == [307]
    assert first["location"].startswith(edges[0].base), first["location"]
    assert second["location"].startswith(edges[1].base), second["location"]
    return pub, owner, edges, [local, first, second]


def test_a_room_spans_three_nodes(redis, nodes_factory):
    gws = three_nodes(redis, nodes_factory)
    room = room_name()

    async def run():
        pub, owner, edges, subs = await room_with_edges(gws, room)
        for sub in subs:
            await media_arrives(sub)
        for edge in edges:
            assert edge.metric("moat_cluster_cascade_links") == 1
            assert edge.metric('moat_cluster_cascade_links_total{outcome="opened"}') == 1
        assert owner.metric("moat_cluster_cascade_legs") == 2
        # A second edge subscriber shares the link.
        more = await subscribe(f"{edges[1].base}/whep/room/{room}?edge=")
        await media_arrives(more)
        assert edges[1].metric('moat_cluster_cascade_links_total{outcome="opened"}') == 1
        await close(*subs, more)
        # After the last edge subscriber the link closes, on both sides.
        for edge in edges:
            wait_for("the link closed", lambda: edge.metric(
                'moat_cluster_cascade_links_total{outcome="closed"}') == 1, timeout=5)
        wait_for("the owner's legs gone", lambda: owner.metric("moat_cluster_cascade_legs") == 0,
                 timeout=5)
        await close(pub)

    asyncio.run(run())


@pytest.mark.hostile
def test_a_forged_flood_at_a_cascade_port_dies_before_the_hmac(redis, nodes_factory):
    gws = three_nodes(redis, nodes_factory)
    room = room_name()

    async def run():
        pub, owner, edges, subs = await room_with_edges(gws, room)
        for sub in subs:
            await media_arrives(sub)
        edge = edges[1]
        links = json.loads(edge.get("/api/cluster/cascade"))["links"]
        assert len(links) == 1 and links[0]["state"] == "up", links
        video_ssrc = links[0]["owner_ssrcs"][1]
        assert video_ssrc
        before = edge.metrics()
        frames = [{k: r.frames for k, r in s["recorders"].items()} for s in subs]
        # The owner's media address and worker port are the link's source:
        # forged SRTP from there reaches the edge leg's prefilter.
        # Half on the link's own video SSRC (they reach the SRTP+ tag
        # check), half on an SSRC the link never carried.
        sent = []
        attack = threading.Thread(target=lambda: sent.extend([flood(
            "127.0.0.1", owner.media_port, "127.0.0.1", edge.media_port, ssrc,
            rate=3000, seconds=1.5) for ssrc in (video_ssrc, 0x0BADF00D)]))
        attack.start()
        while attack.is_alive():
            await asyncio.sleep(0.1)
        after = edge.metrics()

        def grew(reason):
            key = f'moat_dropped_packets_total{{reason="{reason}"}}'
            return after.get(key, 0) - before.get(key, 0)
        forged = sum(sent)
        assert forged > 3000
        # Before the HMAC: the SRTP+ tag or index check, the verification
        # budget, or an SSRC the kernel filter or the prefilter does not know.
        dropped = {k: after[k] - before.get(k, 0) for k in after
                   if "dropped" in k and after[k] != before.get(k, 0)}
        early = grew("tag") + grew("index") + grew("budget") + grew("unknown_ssrc")
        # The link's own SSRC: SRTP+ drops them (tag, or an index outside
        # its window: random sequence numbers).
        assert grew("tag") + grew("index") >= 0.4 * forged, (forged, dropped)
        assert early >= 0.9 * forged, (forged, dropped)
        assert grew("auth") <= 0.1 * forged
        # Every subscriber kept receiving meanwhile and goes on.
        await asyncio.sleep(1.0)
        for sub, seen in zip(subs, frames):
            for kind, count in seen.items():
                assert sub["recorders"][kind].frames > count + 10, (kind, count)
        await close(*subs, pub)

    asyncio.run(run())


def test_a_killed_edge_then_a_killed_owner_are_noticed(redis, nodes_factory):
    gws = three_nodes(redis, nodes_factory)
    room = room_name()

    async def run():
        pub, owner, edges, subs = await room_with_edges(gws, room)
        for sub in subs:
            await media_arrives(sub)
        assert owner.metric("moat_cluster_cascade_legs") == 2
        # An edge dies: the owner's leg towards it loses consent (3 s
        # without an authenticated packet) and ends; the other goes on.
        dead_edge, edge = edges
        dead_edge.process.send_signal(signal.SIGKILL)
        dead_edge.process.wait()
        killed = time.monotonic()
        wait_for("the owner's leg to the dead edge ended",
                 lambda: owner.metric("moat_cluster_cascade_legs") == 1, timeout=8)
        assert time.monotonic() - killed < 8
        frames = subs[2]["recorders"]["audio"].frames
        await asyncio.sleep(1.0)
        assert subs[2]["recorders"]["audio"].frames > frames + 20
        # The owner dies: the surviving edge notices (its leg's consent)
        # and ends its subscriber's session: a DELETE of it is a 404.
        owner.process.send_signal(signal.SIGKILL)
        owner.process.wait()
        killed = time.monotonic()
        wait_for("the edge noticed", lambda: edge.metric(
            'moat_cluster_cascade_links_total{outcome="lost"}') == 1, timeout=8)
        assert time.monotonic() - killed < 8
        assert edge.metric("moat_cluster_cascade_links") == 0
        async with aiohttp.ClientSession() as http:
            async with http.delete(subs[2]["location"]) as r:
                assert r.status == 404, r.status
        for peer in [*subs, pub]:
            await peer["pc"].close()
            for r in peer.get("recorders", {}).values():
                r.task.cancel()

    asyncio.run(run())


def test_cascade_always_serves_every_subscriber_where_it_arrives(redis, nodes_factory):
    gws = [nodes_factory(redis, f"n{i}", extra=("--cluster-cascade", "always"))
           for i in range(2)]
    wait_for("both nodes listed", lambda: all_listed(gws))
    room = room_name()

    async def run():
        pub = await publish(f"{gws[0].base}/whip/room/{room}")
        owner = owner_of(gws, room)[0]
        other = gws[1] if owner is gws[0] else gws[0]
        # No ?edge=: served where it arrived (no 307), fed by a cascade.
        sub = await subscribe(f"{other.base}/whep/room/{room}")
        assert sub["history"] == [] and sub["location"].startswith(other.base), sub
        await media_arrives(sub)
        assert other.metric("moat_cluster_cascade_links") == 1
        await close(sub, pub)

    asyncio.run(run())


@pytest.mark.hostile
def test_link_requests_need_the_cluster_token_and_a_sane_body(redis, nodes_factory):
    gw = nodes_factory(redis, "n0")
    token = hashlib.sha256(f"moat-cluster-forward:{PASSWORD}".encode()).hexdigest()
    key = base64.b64encode(bytes(range(28))).decode()
    good = {"plugin": "room", "room": room_name(), "edge": "n9", "media": "127.0.0.1",
            "port": 9, "to_edge": key, "to_owner": key}

    def post(path, body, headers):
        request = urllib.request.Request(gw.base + path, data=body, method="POST",
                                         headers={"Content-Type": "application/json", **headers})
        try:
            with urllib.request.urlopen(request, timeout=5) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    forwarded = {"X-Moat-Forwarded": token}
    # Without the token, or a wrong one of the right length: 403 before parsing.
    for headers in ({}, {"X-Moat-Forwarded": "0" * len(token)}):
        status, body = post("/api/cluster/cascade", json.dumps(good).encode(), headers)
        assert status == 403 and body["error"] == "forbidden"
        status, _ = post("/api/cluster/cascade/close", b'{"id":"x"}', headers)
        assert status == 403
    # With it: hostile bodies are 400s with a reason; a room this node does
    # not own is a 409; closing an unknown link a 404. No session is made.
    for bad in (b"", b"[]", b"{" * 5000, json.dumps({**good, "port": 0}).encode(),
                json.dumps({**good, "media": "example.com"}).encode(),
                json.dumps({**good, "to_owner": key[:-4]}).encode(),
                json.dumps({**good, "to_owner": base64.b64encode(bytes(30)).decode()}).encode(),
                json.dumps({**good, "room": "a/b"}).encode()):
        status, body = post("/api/cluster/cascade", bad, forwarded)
        assert status in (400, 413), (bad[:40], status, body)
    status, body = post("/api/cluster/cascade", json.dumps(good).encode(), forwarded)
    assert status == 409 and body["error"] == "not_owner"
    status, _ = post("/api/cluster/cascade/close", b'{"id":"nope"}', forwarded)
    assert status == 404
    assert gw.metric("moat_cluster_cascade_refused_total") >= 10
    assert gw.metric("moat_cluster_cascade_legs") == 0
    assert json.loads(gw.get("/api/sessions")) in ([], {"sessions": []})


def test_an_owner_at_its_session_limit_has_subscribers_served_by_edges(redis, nodes_factory):
    gws = [nodes_factory(redis, f"n{i}", extra=("--max-sessions", "2")) for i in range(2)]
    wait_for("both nodes listed", lambda: all_listed(gws))
    room = room_name()

    async def run():
        pub = await publish(f"{gws[0].base}/whip/room/{room}")
        owner = owner_of(gws, room)[0]
        other = gws[1] if owner is gws[0] else gws[0]
        local = await subscribe(f"{owner.base}/whep/room/{room}")
        other_id = f"n{gws.index(other)}"
        # The owner is full (2 of 2 sessions); once its record says so, a
        # subscriber reaching the other node is served there, not sent to
        # the owner (whose own 503 it would get).
        wait_for("the owner's record full", lambda: any(
            n["id"] != other_id and n["sessions"] >= 2
            for n in json.loads(other.get("/api/cluster"))["nodes"]))
        sub = await subscribe(f"{other.base}/whep/room/{room}")
        assert sub["history"] == [] and sub["location"].startswith(other.base), sub
        await media_arrives(sub)
        await media_arrives(local)
        await close(sub, local, pub)

    asyncio.run(run())


def test_two_rooms_cascaded_between_the_same_two_nodes_each_get_their_media(redis,
                                                                             nodes_factory):
    """Every cascade leg between two nodes runs from the owner's worker
    socket to the edge's: the legs of two rooms share one 5-tuple, and each
    must still get its own packets (told apart by SSRC). Before, the first
    leg owned the tuple: the second room's edge subscribers got nothing and
    were ended when its leg went quiet (bench/cluster's latency phase lost a
    whole subscriber when a room's link opened while the previous room's
    was still closing)."""
    gws = [nodes_factory(redis, f"n{i}") for i in range(2)]
    wait_for("both nodes listed", lambda: all_listed(gws))
    owner, edge = gws
    request = urllib.request.Request(edge.base + "/api/cluster/drain", method="POST")
    with urllib.request.urlopen(request, timeout=5):
        pass
    wait_for("the edge draining on the owner", lambda: any(
        n["id"] == "n1" and n["state"] == "draining"
        for n in json.loads(owner.get("/api/cluster"))["nodes"]))
    rooms = [room_name(), room_name()]

    async def run():
        pubs = [await publish(f"{owner.base}/whip/room/{room}") for room in rooms]
        for room in rooms:
            assert owner_of(gws, room) == [owner]
        subs = [await subscribe(f"{edge.base}/whep/room/{room}?edge=") for room in rooms]
        for sub in subs:
            assert sub["location"].startswith(edge.base), sub["location"]
            await media_arrives(sub)
        links = json.loads(edge.get("/api/cluster/cascade"))["links"]
        assert sorted(link["room"] for link in links if link["state"] == "up") == sorted(rooms)
        assert owner.metric("moat_cluster_cascade_legs") == 2
        # Both keep flowing together, and neither link was lost.
        frames = [sub["recorders"]["audio"].frames for sub in subs]
        await asyncio.sleep(1.0)
        for sub, seen in zip(subs, frames):
            assert sub["recorders"]["audio"].frames > seen + 20, (seen, sub["recorders"])
        assert edge.metric('moat_cluster_cascade_links_total{outcome="lost"}') == 0
        # The first room's link closes; the second's goes on.
        await close(subs[0], pubs[0])
        wait_for("the first link closed", lambda: edge.metric(
            'moat_cluster_cascade_links_total{outcome="closed"}') == 1, timeout=5)
        seen = subs[1]["recorders"]["audio"].frames
        await asyncio.sleep(1.0)
        assert subs[1]["recorders"]["audio"].frames > seen + 20
        await close(subs[1], pubs[1])

    asyncio.run(run())


def test_nodes_with_their_own_api_tokens_still_open_cascade_links(redis, nodes_factory):
    """Each node with its own API token (as each generates one when its API
    listens beyond loopback and none is configured): the edge's link request
    carries the cluster's node credential, not the owner's API token, and
    must still be served. Before, the owner answered 401 and no edge
    subscriber got media (seen in the device's cluster capacity run)."""
    gws = [nodes_factory(redis, f"n{i}", extra=("--token", f"node-{i}-" + "x" * 24))
           for i in range(2)]
    wait_for("both nodes listed", lambda: all_listed(gws))
    owner, edge = gws
    request = urllib.request.Request(edge.base + "/api/cluster/drain", method="POST",
                                     headers=edge.auth())
    with urllib.request.urlopen(request, timeout=5):
        pass
    wait_for("the edge draining on the owner", lambda: any(
        n["id"] == "n1" and n["state"] == "draining"
        for n in json.loads(owner.get("/api/cluster"))["nodes"]))
    room = room_name()

    async def run():
        pub = await publish(f"{owner.base}/whip/room/{room}")
        sub = await subscribe(f"{edge.base}/whep/room/{room}?edge=")
        assert sub["location"].startswith(edge.base), sub["location"]
        await media_arrives(sub)
        assert owner.metric("moat_cluster_cascade_legs") == 1
        await close(sub, pub)

    asyncio.run(run())
    # The node route is open to nodes only: without the credential, 403
    # even with the owner's own API token.
    request = urllib.request.Request(owner.base + "/api/cluster/cascade", method="POST",
                                     data=b"{}", headers=owner.auth())
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 403


def test_an_edge_offer_that_does_not_parse_opens_no_link(redis, nodes_factory):
    """WHEP ?edge= with an SDP the subscriber's session would refuse: 400
    bad_sdp from the edge before any link opens (before, the owner made a
    leg sending every layer to the edge, which closed at its next poll)."""
    gws = [nodes_factory(redis, f"n{i}") for i in range(2)]
    wait_for("both nodes listed", lambda: all_listed(gws))
    room = room_name()

    async def run():
        pub = await publish(f"{gws[0].base}/whip/room/{room}")
        try:
            owner, edge = owner_and_other(gws, room)
            for body in (b"v=0\r\n", b"junk", b"v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n"):
                request = urllib.request.Request(
                    f"{edge.base}/whep/room/{room}?edge=", data=body, method="POST",
                    headers={"Content-Type": "application/sdp"})
                try:
                    urllib.request.urlopen(request, timeout=5)
                    assert False, "accepted"
                except urllib.error.HTTPError as e:
                    assert e.code == 400 and json.loads(e.read())["error"] == "bad_sdp"
            assert edge.metric('moat_cluster_cascade_links_total{outcome="opened"}') == 0
            assert owner.metric("moat_cluster_cascade_legs") == 0
        finally:
            await close(pub)
    asyncio.run(run())


def test_a_link_from_a_node_that_lost_the_room_gives_way_to_the_new_owner(redis, nodes_factory):
    """The room's key names another node (as after Redis restarted empty and
    that node won the claim; it has a publisher of its own) while an edge
    holds a link from the old owner with one viewer, whose RTCP keeps the
    link alive. Before, every new viewer at the edge got 503 owner_changed
    for as long as that viewer stayed. Now the first offer after the change
    retires the stale link as a lost one (its viewer ended, its leg on the
    old owner closed) and opens a link to the new owner: 201 at once, and
    the new owner's media."""
    gws = three_nodes(redis, nodes_factory)
    ids = {gw: f"n{gws.index(gw)}" for gw in gws}
    room = room_name()
    lost = 'moat_cluster_cascade_links_total{outcome="lost"}'

    async def run():
        pub = await publish(f"{gws[0].base}/whip/room/{room}")
        old = owner_of(gws, room)[0]
        edge, new = [gw for gw in gws if gw is not old]
        stale = await subscribe(f"{edge.base}/whep/room/{room}?edge=")
        await media_arrives(stale)
        assert old.metric("moat_cluster_cascade_legs") == 1
        assert redis.command("SET", f"moat:room:room:{room}", ids[new], "PX", "60000") == b"+OK\r\n"
        pub2 = await publish(f"{new.base}/whip/room/{room}")
        assert pub2["location"].startswith(new.base), pub2["location"]
        started = time.monotonic()
        viewer = await subscribe(f"{edge.base}/whep/room/{room}?edge=")
        answered_s = time.monotonic() - started
        try:
            await media_arrives(viewer)
            links = json.loads(edge.get("/api/cluster/cascade"))["links"]
            assert [(link["owner"], link["state"], link["subscribers"]) for link in links] == \
                [(ids[new], "up", 1)], links
            assert edge.metric(lost) == 1
            # The stale link's viewer was ended (its resource is gone), and the
            # old owner was asked to close its leg.
            async with aiohttp.ClientSession() as http:
                async with http.delete(stale["location"]) as r:
                    assert r.status == 404, r.status
            wait_for("the old owner's leg closed",
                     lambda: old.metric("moat_cluster_cascade_legs") == 0, timeout=5)
        finally:
            await stale["pc"].close()
            for recorder in stale["recorders"].values():
                recorder.task.cancel()
            await close(viewer, pub2, pub)
        return answered_s

    answered_s = asyncio.run(run())
    print(f"a new edge viewer after the owner changed: 201 in {answered_s:.2f} s")
    assert answered_s < 5
