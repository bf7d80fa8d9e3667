"""Room events on a WebSocket per room: GET /api/rooms/<room>/events
(joined, left, publisher_changed, active_speaker). aiortc publishers and a
subscriber come and go; an aiohttp WebSocket client listens."""
import asyncio
import json
import urllib.error
import urllib.request

import aiohttp

from conftest import Gateway
from test_room import close, publish, subscribe


async def drain(ws, timeout=2.0):
    events = []
    while True:
        try:
            message = await ws.receive(timeout=timeout)
        except asyncio.TimeoutError:
            return events
        if message.type != aiohttp.WSMsgType.TEXT:
            return events
        events.append(json.loads(message.data))


def test_room_events_websocket_per_room(gateway):
    async def run():
        ws_base = gateway.base.replace("http", "ws")
        async with aiohttp.ClientSession() as http:
            ws = await http.ws_connect(ws_base + "/api/rooms/speak/events")
            other = await http.ws_connect(ws_base + "/api/rooms/elsewhere/events")
            quiet = await publish(gateway.base, "speak", frequency=0.0)
            loud = await publish(gateway.base, "speak", 440.0)
            await asyncio.sleep(0.5)
            sub = await subscribe(gateway.base, "speak")
            await asyncio.sleep(2.5)
            await close(loud)  # the speaker leaves: nobody speaks
            await asyncio.sleep(1.0)
            await close(sub)
            await close(quiet)
            events = await drain(ws)
            seen = [(e["type"], e["role"]) for e in events]
            assert seen[:2] == [("joined", "publisher"), ("joined", "publisher")], seen
            assert ("joined", "subscriber") in seen and ("left", "subscriber") in seen, seen
            assert seen.count(("left", "publisher")) == 2, seen
            publishers = [e["id"] for e in events if e["type"] == "joined" and e["role"] == "publisher"]
            speakers = [e["id"] for e in events if e["type"] == "active_speaker"]
            # The loud one speaks (the silent one never does), then nobody.
            assert speakers and speakers[0] == publishers[1], events
            assert publishers[0] not in speakers and speakers[-1] is None, events
            # Announced on change only.
            assert all(a != b for a, b in zip(speakers, speakers[1:])), speakers
            assert all(e["room"] == "speak" for e in events), events
            assert await drain(other, 0.5) == []
            await ws.close()
            await other.close()
            # A path that names no room is no WebSocket: 404.
            try:
                await http.ws_connect(ws_base + "/api/rooms/a/b/events")
                assert False, "upgraded"
            except aiohttp.WSServerHandshakeError as e:
                assert e.status == 404, e

    asyncio.run(run())
    # A plain GET (no upgrade) gets a JSON 426; the room API still works.
    try:
        urllib.request.urlopen(gateway.base + "/api/rooms/speak/events", timeout=5)
        status, body = 200, None
    except urllib.error.HTTPError as e:
        status, body = e.code, json.loads(e.read())
    assert status == 426 and body["error"] == "websocket_required", (status, body)
    with urllib.request.urlopen(gateway.base + "/api/rooms", timeout=5) as r:
        assert r.status == 200 and json.loads(r.read())["rooms"] == []


def test_room_events_websocket_needs_the_token():
    gw = Gateway(extra_args=["--token", "room-secret"])
    try:
        async def run():
            url = gw.base.replace("http", "ws") + "/api/rooms/locked/events"
            async with aiohttp.ClientSession() as http:
                anonymous = await http.ws_connect(url)
                message = await anonymous.receive(timeout=5.0)
                assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED), message
                await anonymous.close()
                ws = await http.ws_connect(url, headers={"Authorization": "Bearer room-secret"})
                request = urllib.request.Request(
                    gw.base + "/api/rooms", data=json.dumps({"name": "locked"}).encode(),
                    method="POST", headers={"Authorization": "Bearer room-secret"})
                with urllib.request.urlopen(request, timeout=5) as r:
                    assert r.status == 201
                # Nothing happened in the room yet: the listener stays open.
                assert await drain(ws, 0.5) == []
                assert not ws.closed
                await ws.close()

        asyncio.run(run())
    finally:
        assert gw.stop() == 0
