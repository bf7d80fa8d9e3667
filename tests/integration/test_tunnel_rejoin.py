"""A tunnel peer (aiortc) that leaves and rejoins under the same name at
once, as a client reconnecting as fast as it can does: the rejoined peer
gets a tunnel of its own, which stays up while its old partner ends and
carries packets to a new partner. Before, the leaving peer's tunnel stayed
findable by its name until the partner noticed (its next 100 ms check): the
newcomer took the freed side of that tunnel, was paired with the partner
that was already ending, and was closed ("closed by plugin") when that
partner left, about 0.1 s later. And the first POST after the DELETE's 200
is taken: before, the leaving peer held its seat until its session was gone
(its data channels drained, some 20 ms here), and POSTs meanwhile got 409."""
import asyncio
import os
import time
from urllib.parse import urljoin

import aiohttp
from aiortc import RTCSessionDescription

from aiortc_peer import whip_delete
from test_tunnel_lanes_hostile import until
from tunnel_peer import TunnelPeer as Peer



async def crosses(sender, receiver):
    """A packet from sender arrives at receiver (resent until the gateway
    knows receiver's channel)."""
    ip = bytes([0x45]) + os.urandom(59)
    deadline = time.monotonic() + 10
    while ip not in receiver.received and time.monotonic() < deadline:
        sender.channel.send(ip)
        await asyncio.sleep(0.1)
    return ip in receiver.received


async def post_until_created(url, offer):
    """POSTs the offer until it is taken: the statuses, the answer, the
    resource URL."""
    statuses = []
    deadline = time.monotonic() + 5
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            headers = {"Content-Type": "application/sdp"}
            async with http.post(url, data=offer, headers=headers) as r:
                statuses.append(r.status)
                if r.status == 201:
                    return statuses, await r.text(), urljoin(url, r.headers["Location"])
            await asyncio.sleep(0.005)
    return statuses, None, None


def test_a_peer_rejoining_at_once_gets_a_tunnel_that_stays(gateway):
    url = gateway.base + "/whip/tunnel/rejoin"

    def figures():
        m = gateway.metrics()
        return (m["moat_tunnel_tunnels"], m["moat_tunnel_peers"], m["moat_tunnel_lanes"])

    def closed_by_plugin():
        return gateway.log_text().count("ended (closed by plugin)")

    async def scenario():
        a = await Peer(url).connect()
        b = await Peer(url).connect()
        assert await crosses(a, b), "no packet crossed the first tunnel"
        # The rejoining peer's offer is ready before its old self leaves.
        a2 = Peer(url)
        await a2.pc.setLocalDescription(await a2.pc.createOffer())
        assert await whip_delete(a.resource) == 200
        statuses, answer, a2.resource = await post_until_created(url, a2.pc.localDescription.sdp)
        assert statuses == [201], statuses
        await a2.pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
        assert await until(a2.opened.is_set, 15), (
            "the rejoined peer's channel never opened; sessions closed by the plugin: %d"
            % closed_by_plugin())
        # The old partner ends (its peer left); the rejoined peer stays,
        # alone in its own tunnel, well past several checks.
        assert await until(lambda: closed_by_plugin() >= 1), figures()
        await asyncio.sleep(1.0)
        assert closed_by_plugin() == 1, gateway.log_text()[-3000:]
        assert a2.channel.readyState == "open"
        assert a2.pc.connectionState == "connected"
        assert await until(lambda: figures() == (1, 1, 1)), figures()
        # A new partner joins that tunnel and packets cross both ways.
        b2 = await Peer(url).connect()
        assert figures() == (1, 2, 2)
        assert await crosses(a2, b2)
        assert await crosses(b2, a2)
        await a2.close()
        await b2.close()
        await a.pc.close()
        await b.pc.close()
        return statuses

    asyncio.run(scenario())
    assert gateway.process.poll() is None
