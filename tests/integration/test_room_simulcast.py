"""Simulcast through a room: headless Chromium publishes its fake 1280x720
camera with three layers (sendEncodings rids h, m, l scaled 1, 2, 4) on
web/room.html, another Chromium watches through WHEP (on another worker:
forced placement), and the layer API
switches the watcher between layers: its getStats shows the decoded frame
width follow (320 for l, 1280 for h), the room API shows the layers and
the subscriber's current layer, and the room's event topic says
layer_switched. Hostile layer requests get 4xx JSON."""
import asyncio
import json

import aiohttp
import pytest

from chromium import Chromium, chromium_path
from conftest import ARTIFACTS
from test_room import api

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")

STATS = "window.moatRoom && window.moatRoom.stats"
WIDTH = "(window.moatRoom.stats['in video width'] || 0)"


async def wait_api(gateway, path, predicate, timeout):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    body = None
    while loop.time() < deadline:
        status, body = api(gateway, "GET", path)
        if status == 200 and predicate(body):
            return body
        await asyncio.sleep(0.5)
    return body


def sending_layers(room):
    pubs = room.get("publishers", [])
    layers = pubs[0].get("layers", []) if pubs else []
    return {x["rid"] for x in layers if x["bitrate_bps"] > 0}


def test_room_simulcast_layers_switch(gateway):
    async def scenario():
        publisher = Chromium(gateway.base + "/room.html?room=sim&publish=1&simulcast=1")
        watcher = None
        http = aiohttp.ClientSession()
        try:
            events = await http.ws_connect(gateway.base.replace("http", "ws") +
                                           "/api/events?topic=rooms/sim")
            # Publisher on worker 0, viewer on worker 1: the layers cross
            # the relay rings.
            status, body = api(gateway, "POST", "/api/rooms",
                               {"name": "sim", "publisher_worker": 0, "subscriber_worker": 1})
            assert status == 201, body
            await publisher.attach()
            # Chromium sends all three layers once its bandwidth estimate
            # allows: the gateway sees each rid's SSRC and measures it.
            room = await wait_api(gateway, "/api/rooms/sim",
                                  lambda b: sending_layers(b) == {"h", "m", "l"}, 40)
            out = await publisher.evaluate(STATS)
            assert sending_layers(room) == {"h", "m", "l"}, f"layers: {room} publisher: {out}"
            for rid in "hml":
                assert out.get(f"out video {rid} packets", 0) > 0, out
            # Each layer's size, read from its VP8 keyframes.
            room = await wait_api(gateway, "/api/rooms/sim", lambda b: all(
                "width" in x for x in b["publishers"][0]["layers"]), 10)
            sizes = {x["rid"]: (x.get("width"), x.get("height"))
                     for x in room["publishers"][0]["layers"]}
            assert sizes == {"h": (1280, 720), "m": (640, 360), "l": (320, 180)}, room

            watcher = Chromium(gateway.base + "/room.html?room=sim&watch=1")
            await watcher.attach()
            decoded = await watcher.wait_for(
                f"{STATS} && (window.moatRoom.stats['in video frames decoded'] || 0) > 10", 20)
            assert decoded, f"the watcher decoded nothing: {await watcher.evaluate(STATS)}"
            room = await wait_api(gateway, "/api/rooms/sim", lambda b: b["subscribers"], 5)
            sub = room["subscribers"][0]
            assert "layer" in sub, room
            assert (room["publishers"][0]["worker"], sub["worker"]) == (0, 1), room
            base = f"/api/rooms/sim/subscribers/{sub['id']}/layer"

            for rid, width in (("l", 320), ("h", 1280), ("m", 640)):
                status, body = api(gateway, "POST", base, {"rid": rid})
                assert status == 200 and body["mode"] == "pinned", body
                got = await watcher.wait_for(f"{STATS} && {WIDTH} == {width} && {WIDTH}", 20)
                assert got == width, (f"after {rid}: {await watcher.evaluate(STATS)} "
                                      f"room {api(gateway, 'GET', '/api/rooms/sim')[1]}")
                room = await wait_api(gateway, "/api/rooms/sim",
                                      lambda b: b["subscribers"][0]["layer"] ==
                                      {**b["subscribers"][0]["layer"], "current": rid,
                                       "mode": "pinned"}, 5)
                layer = room["subscribers"][0]["layer"]
                assert layer["current"] == rid and layer["mode"] == "pinned", layer
            await watcher.screenshot(ARTIFACTS / "room-simulcast-watcher.png")

            # Back to automatic choice.
            status, body = api(gateway, "POST", base, {"rid": "auto"})
            assert status == 200 and body["mode"] == "auto", body
            room = await wait_api(gateway, "/api/rooms/sim",
                                  lambda b: b["subscribers"][0]["layer"]["mode"] == "auto", 5)
            layer = room["subscribers"][0]["layer"]
            assert layer["mode"] == "auto" and layer["current"] in ("h", "m", "l"), layer
            assert layer["estimate_bps"] > 0, layer
            decoded = (await watcher.evaluate(STATS))["in video frames decoded"]
            more = await watcher.wait_for(
                f"window.moatRoom.stats['in video frames decoded'] > {decoded + 20}", 10)
            assert more, f"the watcher stopped decoding in auto mode: {await watcher.evaluate(STATS)}"

            # Each switch was an event on the room's topic.
            switched = []
            while switched[-2:] != ["h", "m"]:
                message = await events.receive(timeout=5)
                event = json.loads(message.data)
                if event["type"] == "layer_switched":
                    assert event["id"] == sub["id"] and event["publisher"] == sub["publisher"]
                    switched.append(event["rid"])
            assert "l" in switched, switched
            await events.close()

            # Hostile requests: 4xx with a JSON reason.
            assert api(gateway, "POST", base, {"rid": "x"})[0] == 400
            assert api(gateway, "POST", base, {"rid": 7})[0] == 400
            assert api(gateway, "POST", base, b"{not json")[0] == 400
            assert api(gateway, "POST", base, {"rid": "a" * 100})[0] == 400
            assert api(gateway, "GET", base)[0] == 405
            status, body = api(gateway, "POST", "/api/rooms/sim/subscribers/s999/layer",
                               {"rid": "h"})
            assert status == 404 and body["error"] == "unknown_subscriber", body
            status, body = api(gateway, "POST", "/api/rooms/nope/subscribers/s1/layer",
                               {"rid": "h"})
            assert status == 404 and body["error"] == "unknown_room", body
            assert api(gateway, "POST", "/api/rooms/sim/subscribers/s1/../layer",
                       {"rid": "h"})[0] == 404
        finally:
            if watcher:
                await watcher.close_async()
            await publisher.close_async()
            await http.close()

    asyncio.run(scenario())


def test_layer_api_refuses_a_publisher_without_simulcast(gateway):
    """An aiortc publisher sends one video stream: its subscriber has no
    layer in the room API and the layer API answers 409 not_simulcast."""
    from test_room import close, publish, subscribe

    async def scenario():
        pub = await publish(gateway.base, "plain")
        sub = await subscribe(gateway.base, "plain")
        try:
            room = await wait_api(gateway, "/api/rooms/plain", lambda b: b["subscribers"], 10)
            entry = room["subscribers"][0]
            assert "layer" not in entry and "layers" not in room["publishers"][0], room
            status, body = api(gateway, "POST",
                               f"/api/rooms/plain/subscribers/{entry['id']}/layer", {"rid": "h"})
            assert status == 409 and body["error"] == "not_simulcast", body
        finally:
            await close(sub)
            await close(pub)

    asyncio.run(scenario())
