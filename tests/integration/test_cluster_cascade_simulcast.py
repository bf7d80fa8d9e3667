"""Simulcast across a cascade link (gateway/cluster/cascade_*.c): headless
Chromium publishes its fake 1280x720 camera with three layers (rids h, m,
l scaled 1, 2, 4) to a room on node n0; two aiortc subscribers on node n1
are served there through one cascade link, which carries every layer of
the publisher, each on its own SSRC (the owner's leg answers them as
"layer_ssrcs"; the edge names them s0, s1, s2 in the publisher's order).
Each edge subscriber pins its own layer through the room API on the edge
(answered there: the subscriber lives in the edge's copy of the room) and
decodes that layer's size (320 for l, 640 for m); a switch on the edge asks
the real publisher for a keyframe of the wanted layer through the link and
the picture resumes at the new size. Before this, the owner's leg was one
subscriber carrying one layer: the edge's copy had no simulcast publisher
and both edge subscribers got the same picture.

A plain publisher's video on a link that offers layers: the edge's copy of
the room shows no layers for it and refuses a layer pin (409), as the
owner does; before, it showed a silent target layer and took the pin.

RTX on the link: with every 8th packet from the owner's media port to the
edge's dropped (iptables, those two ports only), the edge's NACKs are
answered with RTX (RFC 4588) on each stream's own RTX SSRC, unwrapped on
the edge (moat_rtx_received_total), for a plain publisher's video and for
each simulcast layer; before, the owner resent plain duplicates."""
import asyncio
import contextlib
import json
import shutil
import subprocess
import time

import pytest

from chromium import Chromium, chromium_path
from cluster_helpers import (all_listed, close, media_arrives, nodes_factory,  # noqa: F401
                             owner_of, publish, redis, room_name, subscribe, wait_for)
from test_room import api

pytestmark = [
    pytest.mark.skipif(shutil.which("redis-server") is None,
                       reason="redis-server is not installed (scripts/install-deps.sh)"),
    pytest.mark.skipif(chromium_path() is None, reason="chromium not installed"),
]

WIDTHS = {"h": 1280, "m": 640, "l": 320}


def owner_layers(gw, room):
    status, body = api(gw, "GET", f"/api/rooms/{room}")
    pubs = body.get("publishers", []) if status == 200 else []
    return pubs[0].get("layers", []) if pubs else []


def peer_info(gw, sub):
    resource = sub["location"].rsplit("/", 1)[1]
    status, body = api(gw, "POST", f"/api/sessions/{resource}/message", {"request": "info"})
    assert status == 200, body
    return body


async def shows(sub, width, timeout):
    """The subscriber decodes frames `width` wide, and more keep coming."""
    recorder = sub["recorders"]["video"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if recorder.last_size and recorder.last_size[0] == width:
            frames = recorder.frames
            await asyncio.sleep(0.5)
            if recorder.frames > frames and recorder.last_size[0] == width:
                return
        await asyncio.sleep(0.1)
    raise AssertionError(f"wanted {width} wide, last {recorder.last_size}, "
                         f"sizes {recorder.sizes}, {recorder.frames} frames")


@contextlib.contextmanager
def lossy_link(owner, edge, every=8):
    """Drops every `every`th UDP packet from the owner's media port to the
    edge's (the cascade link only: both ports are this test's)."""
    rule = ["OUTPUT", "-o", "lo", "-p", "udp", "--sport", str(owner.media_port), "--dport",
            str(edge.media_port), "-m", "statistic", "--mode", "nth", "--every", str(every),
            "--packet", "0", "-j", "DROP"]
    subprocess.run(["iptables", "-I", *rule], check=True)
    try:
        yield
    finally:
        subprocess.run(["iptables", "-D", *rule], check=True)


async def repaired_with_rtx(edge, subs, wanted=20, timeout=25):
    """The edge unwraps RTX from the link while its subscribers keep
    decoding."""
    before = edge.metric("moat_rtx_received_total") or 0
    frames = [s["recorders"]["video"].frames for s in subs]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (edge.metric("moat_rtx_received_total") or 0) - before >= wanted:
            break
        await asyncio.sleep(0.2)
    got = (edge.metric("moat_rtx_received_total") or 0) - before
    assert got >= wanted, f"{got} RTX packets reached the edge"
    for sub, count in zip(subs, frames):
        now = sub["recorders"]["video"].frames
        assert now > count + 10, (count, now)


def test_rtx_on_the_link_for_a_plain_publisher(redis, nodes_factory):
    gws = [nodes_factory(redis, f"n{i}") for i in range(2)]
    wait_for("both nodes listed", lambda: all_listed(gws))
    room = room_name()

    async def run():
        pub = await publish(f"{gws[0].base}/whip/room/{room}")
        owner = owner_of(gws, room)[0]
        edge = gws[1] if owner is gws[0] else gws[0]
        sub = await subscribe(f"{edge.base}/whep/room/{room}?edge=")
        await media_arrives(sub)
        links = json.loads(edge.get("/api/cluster/cascade"))["links"]
        assert links[0]["rtx"] is True, links
        # The link offers three layers, but this source sends plain video
        # (media_arrives: 20 frames decoded on the edge): the edge's copy of
        # the room says so (no layers, no layer to pin).
        info = peer_info(edge, sub)
        assert "layer" not in info, info
        status, body = api(edge, "POST", f"/api/rooms/{room}/subscribers/{info['id']}/layer",
                           {"rid": "s1"})
        assert status == 409 and body["error"] == "not_simulcast", (status, body)
        status, body = api(edge, "GET", f"/api/rooms/{room}")
        assert status == 200 and "layers" not in body["publishers"][0], body
        with lossy_link(owner, edge):
            await repaired_with_rtx(edge, [sub])
        await close(sub, pub)

    asyncio.run(run())


def test_every_layer_crosses_the_link_and_edge_subscribers_choose(redis, nodes_factory):
    room = room_name()
    # n0 alone at the publish: the room is placed there; n1 joins after.
    owner = nodes_factory(redis, "n0")
    wait_for("n0 listed", lambda: all_listed([owner]))
    publisher = Chromium(f"{owner.base}/room.html?room={room}&publish=1&simulcast=1")
    subs = []

    async def run():
        await publisher.attach()
        # Chromium sends l and m once its estimate allows (h may follow).
        layers = wait_for("the publisher's l and m layers", lambda: (lambda x: x if {
            y["rid"] for y in x if y["bitrate_bps"] > 0} >= {"l", "m"} else None)(
                owner_layers(owner, room)), timeout=30)
        edge = nodes_factory(redis, "n1")
        wait_for("both nodes listed", lambda: all_listed([owner, edge]))
        # The edge names layers by position in the publisher's order.
        link_rid = {x["rid"]: f"s{i}" for i, x in enumerate(layers)}
        for _ in range(2):
            subs.append(await subscribe(f"{edge.base}/whep/room/{room}?edge="))
        links = json.loads(edge.get("/api/cluster/cascade"))["links"]
        assert len(links) == 1 and links[0]["state"] == "up", links
        assert len(links[0]["layer_ssrcs"]) == 3, links
        ids = [peer_info(edge, s)["id"] for s in subs]
        # Each pins its own layer, on the edge.
        for sub_id, rid in zip(ids, ("l", "m")):
            status, body = api(edge, "POST", f"/api/rooms/{room}/subscribers/{sub_id}/layer",
                               {"rid": link_rid[rid]})
            assert status == 200, body
        await shows(subs[0], WIDTHS["l"], 15)
        await shows(subs[1], WIDTHS["m"], 15)
        info = peer_info(edge, subs[0])
        assert info["layer"]["current"] == link_rid["l"] and info["layer"]["mode"] == "pinned"
        # Both layers crossed the one link at once: the owner's leg is one
        # session, the edge's copy of the room measures each layer.
        assert owner.metric("moat_cluster_cascade_legs") == 1
        # A switch on the edge: a keyframe of m is asked of the publisher
        # through the link, and the picture resumes at m's size.
        status, body = api(edge, "POST", f"/api/rooms/{room}/subscribers/{ids[0]}/layer",
                           {"rid": link_rid["m"]})
        assert status == 200, body
        await shows(subs[0], WIDTHS["m"], 10)
        await shows(subs[1], WIDTHS["m"], 5)
        # Losses on the link: each layer's NACKs answered with RTX.
        status, body = api(edge, "POST", f"/api/rooms/{room}/subscribers/{ids[1]}/layer",
                           {"rid": link_rid["l"]})
        assert status == 200, body
        await shows(subs[1], WIDTHS["l"], 10)
        with lossy_link(owner, edge):
            await repaired_with_rtx(edge, subs)
        await close(*subs)

    try:
        asyncio.run(run())
    finally:
        publisher.close()
