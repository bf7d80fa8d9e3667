"""POST /api/sessions/<id>/message reaches the session's plugin
(handle_message on its worker) and returns its reply. The room plugin
answers "info" and "configure" (audio/video forwarding on or off, for a
publisher's subscribers or for one subscriber). aiortc publisher and two
aiortc WHEP subscribers; hostile requests get JSON 4xx."""
import asyncio
import json

import aiohttp

from conftest import Gateway
from test_room import close, publish, subscribe


async def message(base, resource, body, token=None):
    session_id = resource.rsplit("/", 1)[1]
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/api/sessions/{session_id}/message", data=data,
                             headers=headers) as r:
            text = await r.text()
            return r.status, json.loads(text) if text else None


async def growth(recorder, seconds=1.5):
    before = recorder.frames
    await asyncio.sleep(seconds)
    return recorder.frames - before


def test_room_message_info_and_configure(gateway):
    async def run():
        base = gateway.base
        pub = await publish(base, "msg")
        await asyncio.sleep(0.5)
        one = await subscribe(base, "msg")
        two = await subscribe(base, "msg")
        await asyncio.sleep(3.0)
        status, info = await message(base, pub["resource"], {"request": "info"})
        assert status == 200 and info["role"] == "publisher" and info["room"] == "msg", info
        assert info["audio"] is True and info["video"] is True and info["packets"] > 0, info
        status, sub_info = await message(base, one["resource"], {})
        assert status == 200 and sub_info["role"] == "subscriber", sub_info
        assert sub_info["publisher"] == info["id"], (sub_info, info)

        # One subscriber stops its audio: the other keeps hearing.
        status, reply = await message(base, one["resource"], {"request": "configure", "audio": False})
        assert status == 200 and reply["audio"] is False and reply["video"] is True, reply
        await asyncio.sleep(0.5)
        one_audio, two_audio = await asyncio.gather(growth(one["recorders"]["audio"]),
                                                    growth(two["recorders"]["audio"]))
        assert one_audio <= 2 and two_audio >= 30, (one_audio, two_audio)
        await message(base, one["resource"], {"request": "configure", "audio": True})
        await asyncio.sleep(0.5)
        assert await growth(one["recorders"]["audio"]) >= 30

        # The publisher's video off: no subscriber gets video; on again: both do.
        status, reply = await message(base, pub["resource"], {"request": "configure", "video": False})
        assert status == 200 and reply["video"] is False, reply
        await asyncio.sleep(0.5)
        frozen = await asyncio.gather(growth(one["recorders"]["video"]),
                                      growth(two["recorders"]["video"]))
        assert max(frozen) <= 1, frozen
        await message(base, pub["resource"], {"request": "configure", "video": True})
        await asyncio.sleep(1.0)
        resumed = await asyncio.gather(growth(one["recorders"]["video"], 2.0),
                                       growth(two["recorders"]["video"], 2.0))
        assert min(resumed) >= 5, resumed

        # Hostile and unknown input: JSON 4xx.
        for body, code, error in (("not json", 400, "bad_json"), ("[1]", 400, "bad_json"),
                                  ("", 400, "bad_json"),
                                  ({"request": "explode"}, 400, "unknown_request"),
                                  ({"request": "configure", "audio": "no"}, 400, "bad_option")):
            status, reply = await message(base, pub["resource"], body)
            assert status == code and reply["error"] == error, (body, status, reply)
        status, reply = await message(base, "/whip/resource/" + "0" * 32, {})
        assert status == 404 and reply["error"] == "unknown_session", reply
        async with aiohttp.ClientSession() as http:
            session_id = pub["resource"].rsplit("/", 1)[1]
            async with http.get(f"{base}/api/sessions/{session_id}/message") as r:
                assert r.status == 405 and (await r.json())["error"] == "method_not_allowed"
        # A session that ended is unknown.
        await close(two)
        await asyncio.sleep(0.5)
        status, reply = await message(base, two["resource"], {})
        assert status == 404, (status, reply)
        await close(one)
        await close(pub)

    asyncio.run(run())


def test_session_message_needs_the_resource_id_or_the_token():
    """The resource id (the WHIP Location) is the session's capability: it is
    enough without the API token. The public label (GET /api/sessions,
    /metrics) is not: it takes the token."""
    gw = Gateway(extra_args=["--token", "msg-secret"])
    try:
        async def run():
            from aiortc import RTCPeerConnection
            from aiortc_peer import PatternTrack, whip_publish
            pc = RTCPeerConnection()
            pc.addTrack(PatternTrack())
            resource, _ = await whip_publish(pc, f"{gw.base}/whip/room/locked")
            status, reply = await message(gw.base, resource, {"request": "info"})
            assert status == 200 and reply["role"] == "publisher", reply
            label = json.loads(gw.get("/api/sessions"))["sessions"][0]["id"]
            status, reply = await message(gw.base, "/" + label, {"request": "info"})
            assert status == 403 and reply["error"] == "label_not_capability", reply
            status, reply = await message(gw.base, "/" + label, {"request": "info"}, token="msg-secret")
            assert status == 200 and reply["role"] == "publisher", reply
            await pc.close()

        asyncio.run(run())
    finally:
        assert gw.stop() == 0
