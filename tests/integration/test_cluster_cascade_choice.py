"""Cascades chosen without ?edge= (gateway/cluster/cluster_offers.c): a WHEP
subscriber reaching a node that does not own the room is served there
through a cascade link when the room on its owner is at its own
max_subscribers (the owner marks it in Redis, moat:full:<plugin>:<room>,
and the offer's claim reads it), and, with [cluster] cascade = region (the
default), when that node's region differs from the owner's. The owner's
own refusal of a subscriber of a full room names another node (307 with
?edge=). Every subscriber hears the tone and decodes video (aiortc)."""
import asyncio
import json
import shutil
import urllib.request

import pytest

from cluster_helpers import (all_listed, close, media_arrives, nodes_factory, owner_of,  # noqa: F401
                             publish, redis, room_name, subscribe, wait_for)

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="redis-server is not installed (scripts/install-deps.sh)")


def room_info(gw, room):
    return json.loads(gw.get(f"/api/rooms/{room}"))


def create_room(gw, room, **options):
    request = urllib.request.Request(gw.base + "/api/rooms", method="POST",
                                     data=json.dumps({"name": room, **options}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as reply:
        assert reply.status == 201


def full_key(redis, room):
    return redis.command("EXISTS", f"moat:full:room:{room}") == b":1\r\n"


def test_a_full_room_is_served_by_another_node_through_a_cascade(redis, nodes_factory):
    # Regions only to place the room on n0 (same region first); n1 asks for
    # no region cascades, so what sends its subscriber to a cascade is the
    # room's cap alone.
    a = nodes_factory(redis, "n0", extra=("--cluster-region", "eu"))
    b = nodes_factory(redis, "n1", extra=("--cluster-region", "us", "--cluster-cascade", "ask"))
    gws = [a, b]
    wait_for("both nodes listed", lambda: all_listed(gws))
    room = room_name()
    create_room(a, room, max_subscribers=1)

    async def run():
        pub = await publish(f"{a.base}/whip/room/{room}")
        assert owner_of(gws, room) == [a]
        first = await subscribe(f"{a.base}/whep/room/{room}")
        assert room_info(a, room)["subscriber_count"] == 1
        # The owner marks the room full as the subscriber joins.
        wait_for("the room marked full", lambda: full_key(redis, room), timeout=5)
        # Posted to n1: served there through a cascade, not sent to n0.
        second = await subscribe(f"{b.base}/whep/room/{room}")
        assert second["history"] == [] and second["location"].startswith(b.base), second
        assert b.metric('moat_cluster_cascade_chosen_total{reason="room_full"}') == 1
        assert b.metric("moat_cluster_cascade_links") == 1
        # The owner's leg is outside the room's cap.
        info = room_info(a, room)
        assert info["subscriber_count"] == 2 and info["cascade_legs"] == 1, info
        capacity = json.loads(a.get(f"/api/rooms/{room}/capacity"))
        assert capacity == {"max_subscribers": 1, "subscribers": 1, "cascade_legs": 1,
                            "full": True}, capacity
        # Posted to the owner: its refusal names the other node (307,
        # ?edge=), which serves it from the same link.
        third = await subscribe(f"{a.base}/whep/room/{room}")
        assert [status for status, _ in third["history"]] == [307], third
        assert third["history"][0][1] == f"{b.base}/whep/room/{room}?edge=n1"
        assert third["location"].startswith(b.base), third
        assert b.metric('moat_cluster_cascade_links_total{outcome="opened"}') == 1
        for sub in (first, second, third):
            await media_arrives(sub)
        await close(second, third)
        # The owner's subscriber leaving: not full any more, key gone.
        await close(first)
        wait_for("the full mark gone", lambda: not full_key(redis, room), timeout=5)
        await close(pub)

    asyncio.run(run())


def test_a_node_in_another_region_serves_its_subscriber_through_a_cascade(redis, nodes_factory):
    a = nodes_factory(redis, "n0", extra=("--cluster-region", "eu"))
    b = nodes_factory(redis, "n1", extra=("--cluster-region", "us"))
    c = nodes_factory(redis, "n2", extra=("--cluster-region", "eu"))
    gws = [a, b, c]
    wait_for("three nodes listed", lambda: all_listed(gws))
    room = room_name()

    async def run():
        pub = await publish(f"{a.base}/whip/room/{room}")
        owner = owner_of(gws, room)
        assert owner in ([a], [c]), "placed in the publisher's region"
        owner = owner[0]
        same = c if owner is a else a
        # No ?edge=: the subscriber chose n1, in another region.
        far = await subscribe(f"{b.base}/whep/room/{room}")
        assert far["history"] == [] and far["location"].startswith(b.base), far
        assert b.metric('moat_cluster_cascade_chosen_total{reason="region"}') == 1
        assert b.metric("moat_cluster_cascade_links") == 1
        # A node in the owner's region sends it to the owner as before.
        near = await subscribe(f"{same.base}/whep/room/{room}")
        assert [status for status, _ in near["history"]] == [307]
        assert near["location"].startswith(owner.base), near
        assert same.metric("moat_cluster_cascade_links") == 0
        for sub in (far, near):
            await media_arrives(sub)
        await close(far, near, pub)

    asyncio.run(run())
