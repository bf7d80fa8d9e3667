"""A room publisher's data channel messages reach its subscribers (room_data.c
over the core's relay_data): an aiortc publisher with a data channel, two
aiortc WHEP subscribers with data channels, on the publisher's worker and,
with forced placement, on another worker (the cross-worker path, counted in
moat_relay_delivered_data_messages_total). A subscriber without a channel
is simply skipped."""
import asyncio
import json
import urllib.request

import aiohttp
from aiortc import RTCPeerConnection, RTCSessionDescription

from aiortc_peer import PatternTrack, ToneTrack, whip_publish
from test_room import close, whep_post

MESSAGES = 40


async def publisher(base, room):
    pc = RTCPeerConnection()
    pc.addTrack(ToneTrack(440.0))
    pc.addTrack(PatternTrack())
    channel = pc.createDataChannel("room")
    opened = asyncio.Event()
    channel.on("open", opened.set)
    resource, _ = await whip_publish(pc, f"{base}/whip/room/{room}")
    await asyncio.wait_for(opened.wait(), 10)
    return {"pc": pc, "resource": resource, "channel": channel}


async def subscriber(base, room, with_channel=True):
    pc = RTCPeerConnection()
    pc.addTransceiver("audio", direction="recvonly")
    pc.addTransceiver("video", direction="recvonly")
    received = []
    opened = asyncio.Event()
    if with_channel:
        channel = pc.createDataChannel("viewer")
        channel.on("open", opened.set)
        channel.on("message", received.append)
    await pc.setLocalDescription(await pc.createOffer())
    status, body, location, _ = await whep_post(f"{base}/whep/room/{room}", pc.localDescription.sdp)
    assert status == 201, f"WHEP answered {status}: {body}"
    await pc.setRemoteDescription(RTCSessionDescription(sdp=body, type="answer"))
    if with_channel:
        await asyncio.wait_for(opened.wait(), 10)
    return {"pc": pc, "resource": base + location, "received": received}


def api(gateway, method, path, body=None):
    request = urllib.request.Request(gateway.base + path, method=method,
                                     data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as r:
        return r.status, json.loads(r.read() or b"null")


async def exchange(gateway, room):
    pub = await publisher(gateway.base, room)
    subs = [await subscriber(gateway.base, room) for _ in range(2)]
    silent = await subscriber(gateway.base, room, with_channel=False)
    await asyncio.sleep(1.0)  # the gateway has seen the subscribers' channels open
    for i in range(MESSAGES):
        pub["channel"].send(f"message {i}")
        if i % 10 == 9:
            pub["channel"].send(bytes([i]) * 1000)
        await asyncio.sleep(0.01)
    expected = []
    for i in range(MESSAGES):
        expected.append(f"message {i}")
        if i % 10 == 9:
            expected.append(bytes([i]) * 1000)
    for _ in range(100):
        if all(len(s["received"]) >= len(expected) for s in subs):
            break
        await asyncio.sleep(0.1)
    for s in subs:
        assert s["received"] == expected, (len(s["received"]), s["received"][:3])
    _, room_info = api(gateway, "GET", f"/api/rooms/{room}")
    for peer in (*subs, silent):
        await close(peer)
    await close(pub)
    return room_info


def test_room_data_channel_same_worker(gateway):
    info = asyncio.run(exchange(gateway, "chat"))
    workers = {s["worker"] for s in info["subscribers"]} | {p["worker"] for p in info["publishers"]}
    assert len(workers) == 1, info


def test_room_data_channel_cross_worker(gateway):
    status, _ = api(gateway, "POST", "/api/rooms",
                    {"name": "far", "publisher_worker": 0, "subscriber_worker": 1})
    assert status == 201
    before = gateway.metric("moat_relay_delivered_data_messages_total")
    info = asyncio.run(exchange(gateway, "far"))
    assert {s["worker"] for s in info["subscribers"]} == {1}, info
    assert info["publishers"][0]["worker"] == 0, info
    delivered = gateway.metric("moat_relay_delivered_data_messages_total") - before
    assert delivered >= 2 * (MESSAGES + MESSAGES // 10), delivered
    assert gateway.metric('moat_relay_dropped_data_messages_total{reason="queue_full"}') == 0


def test_closed_by_the_room_ends_after_its_drain(gateway):
    """DELETE of a room closes its peers' sessions from the plugin
    (close_session). A session with data channels first drains what it
    queued, then ends: it must leave the registry even though its peer is
    still there answering consent checks."""
    async def scenario():
        pub = await publisher(gateway.base, "gone")
        sub = await subscriber(gateway.base, "gone")
        await asyncio.sleep(0.5)
        assert gateway.metric("moat_sessions") == 2
        status, _ = api(gateway, "DELETE", "/api/rooms/gone")
        assert status == 204
        left = None
        for i in range(100):  # the drain takes at most 5 s
            if gateway.metric("moat_sessions") == 0:
                left = i / 10
                break
            await asyncio.sleep(0.1)
        for peer in (sub, pub):
            await close(peer)
        return left

    left = asyncio.run(scenario())
    assert left is not None, "sessions closed by the room stayed in the registry"
    print(f"room sessions left the registry {left:.1f} s after the room's deletion")


def test_a_subscriber_closing_its_first_channel_gets_data_on_its_second(gateway):
    """A subscriber with two data channels closes the one the room
    delivered to: the publisher's later messages arrive on the other
    (before, none arrived although a channel stayed open)."""
    async def run():
        pub = await publisher(gateway.base, "twochannels")
        pc = RTCPeerConnection()
        pc.addTransceiver("audio", direction="recvonly")
        got = {"a": [], "b": []}
        channels, opened = {}, {}
        for name in ("a", "b"):
            channels[name] = pc.createDataChannel(name)
            opened[name] = asyncio.Event()
            channels[name].on("open", opened[name].set)
            channels[name].on("message", lambda m, name=name: got[name].append(m))
        await pc.setLocalDescription(await pc.createOffer())
        status, body, location, _ = await whep_post(f"{gateway.base}/whep/room/twochannels",
                                                    pc.localDescription.sdp)
        assert status == 201, body
        await pc.setRemoteDescription(RTCSessionDescription(sdp=body, type="answer"))
        await asyncio.wait_for(asyncio.gather(opened["a"].wait(), opened["b"].wait()), 10)
        for _ in range(50):
            pub["channel"].send("before")
            await asyncio.sleep(0.1)
            if got["a"] or got["b"]:
                break
        first = "a" if got["a"] else "b"
        other = "b" if first == "a" else "a"
        channels[first].close()
        await asyncio.sleep(1.0)
        for i in range(5):
            pub["channel"].send(f"after{i}")
        for _ in range(50):
            if len(got[other]) >= 5:
                break
            await asyncio.sleep(0.1)
        assert got[other] == [f"after{i}" for i in range(5)], got
        await close({"pc": pc, "resource": gateway.base + location})
        await close(pub)
    asyncio.run(run())
