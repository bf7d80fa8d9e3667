"""Hostile lane joins on a tunnel (issue 26, lanes): a tunnel whose two
peers (aiortc) have two lanes each (POST /whip/tunnel/<name>/<key>/<lane>),
then joins that must be refused with a 4xx JSON body and touch nothing:
a lane with a wrong token (401), a lane with a key neither peer holds
(404), a third peer's lane 0 (409), a lane past the cap of 8 (409), a lane
that is taken (409), a lane of a tunnel that does not exist (404, and no
tunnel is made), malformed lanes (404). The tunnel's lanes keep relaying
lane i to lane i both ways; then one lane's DELETE closes every other
lane's channel."""
import asyncio
import os
import time
import uuid

import aiohttp
import pytest
from aiortc import RTCPeerConnection

from aiortc_peer import whip_delete
from tunnel_peer import TunnelPeer
from conftest import Gateway

pytestmark = pytest.mark.hostile

TOKEN = "lanes-hostile-token"


def Lane(url):
    return TunnelPeer(url, token=TOKEN)


async def offer_status(url, token=TOKEN):
    """POSTs a data channel offer; (status, JSON body or None)."""
    pc = RTCPeerConnection()
    pc.createDataChannel("tunnel")
    await pc.setLocalDescription(await pc.createOffer())
    headers = {"Content-Type": "application/sdp", "Authorization": "Bearer " + token}
    try:
        async with aiohttp.ClientSession() as http:
            async with http.post(url, data=pc.localDescription.sdp, headers=headers) as r:
                body = await r.json(content_type=None) if r.status != 201 else None
                return r.status, body
    finally:
        await pc.close()


async def until(predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def crosses(sender, receiver, others):
    """A packet from sender arrives at receiver (resent until the gateway
    knows receiver's channel), none at the other lanes."""
    ip = bytes([0x45]) + os.urandom(59)
    before = [len(o.received) for o in others]
    deadline = time.monotonic() + 10
    while ip not in receiver.received and time.monotonic() < deadline:
        sender.channel.send(ip)
        await asyncio.sleep(0.1)
    return ip in receiver.received and [len(o.received) for o in others] == before


def test_hostile_lane_joins_are_refused():
    gateway = Gateway(extra_args=["--token", TOKEN])
    key_a, key_b, key_c = (uuid.uuid4().hex for _ in range(3))
    base = gateway.base + "/whip/tunnel/"

    async def scenario():
        a0 = await Lane(f"{base}lanes/{key_a}/0").connect()
        a1 = await Lane(f"{base}lanes/{key_a}/1").connect()
        b0 = await Lane(f"{base}lanes/{key_b}/0").connect()
        b1 = await Lane(f"{base}lanes/{key_b}/1").connect()
        assert await crosses(a1, b1, [b0, a0])
        assert await crosses(a0, b0, [b1, a1])
        assert await crosses(b1, a1, [a0, b0])
        refusals = [
            (f"lanes/{key_a}/2", "wrong", 401),
            (f"lanes/{key_c}/1", TOKEN, 404),   # a key neither peer holds
            (f"lanes/{key_c}/0", TOKEN, 409),   # a third peer
            ("lanes", TOKEN, 409),              # a third one-lane peer
            (f"lanes/{key_a}/8", TOKEN, 409),   # past the cap
            (f"lanes/{key_a}/999", TOKEN, 409),
            (f"lanes/{key_a}/1", TOKEN, 409),   # taken
            (f"nothere/{key_a}/1", TOKEN, 404),  # no such tunnel (or peer)
            (f"lanes/{key_a}/x", TOKEN, 404),
            (f"lanes/{key_a}/01", TOKEN, 404),
            (f"lanes/{key_a}/1/2", TOKEN, 404),
            ("lanes/short/1", TOKEN, 404),
            (f"lanes/{key_a}/" + "9" * 40, TOKEN, 404),
            (f"lanes/{'k' * 65}/1", TOKEN, 404),
        ]
        for path, token, status in refusals:
            got, body = await offer_status(base + path, token)
            assert got == status, (path, got, body)
            assert body and body.get("error") and body.get("detail"), (path, body)
        # Nothing touched the tunnel: its lanes still relay lane to lane.
        assert await crosses(a1, b1, [b0, a0])
        assert await crosses(b0, a0, [a1, b1])
        m = gateway.metrics()
        assert m["moat_tunnel_tunnels"] == 1
        assert m["moat_tunnel_peers"] == 2
        assert m["moat_tunnel_lanes"] == 4
        assert m['moat_tunnel_refused_total{reason="no_such_peer"}'] == 2
        assert m['moat_tunnel_refused_total{reason="full"}'] == 2
        assert m['moat_tunnel_refused_total{reason="lane_cap"}'] == 2
        assert m['moat_tunnel_refused_total{reason="lane_taken"}'] == 1
        assert m['moat_tunnel_refused_total{reason="bad_lane"}'] == 6
        # One lane hangs up: the gateway closes every other lane of both
        # peers (their channels close); they hang up as moat-tunnel does.
        await whip_delete(a1.resource)
        others = (a0, b0, b1)
        assert await until(lambda: all(o.channel.readyState == "closed" for o in others), 20), [
            o.channel.readyState for o in others]
        for lane in others:
            await whip_delete(lane.resource)
        assert await until(lambda: gateway.metric("moat_tunnel_lanes") == 0, 20), {
            k: v for k, v in gateway.metrics().items() if "tunnel" in k and "total" not in k}
        assert gateway.metric("moat_tunnel_tunnels") == 0
        for lane in (a0, a1, b0, b1):
            await lane.pc.close()

    try:
        asyncio.run(scenario())
        assert gateway.process.poll() is None
    finally:
        assert gateway.stop() == 0
