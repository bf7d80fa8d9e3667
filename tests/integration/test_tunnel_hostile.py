"""Hostile messages on a tunnel channel (issue 26): an authenticated tunnel
peer (aiortc, inside its own DTLS session) sends what is not an IP packet:
strings, empty messages, a message over the largest IP packet, a burst of
random binary sizes. The gateway relays only binary messages of at most
65535 bytes to the other peer, drops the rest counted by reason, and the
tunnel keeps working both ways."""
import asyncio
import os
import time

import pytest
from aiortc import RTCPeerConnection

from aiortc_peer import whip_delete, whip_publish
from tunnel_peer import TunnelPeer as Peer

pytestmark = pytest.mark.hostile


def test_malformed_and_oversized_messages_are_dropped(gateway):
    url = gateway.base + "/whip/tunnel/hostile"

    async def scenario():
        attacker = await Peer(url).connect()
        other = await Peer(url).connect()
        # The gateway knows other's channel once its DCEP OPEN arrived:
        # a packet goes through before the attack starts.
        ip = bytes([0x45]) + os.urandom(59)
        deadline = time.monotonic() + 10
        while not other.received and time.monotonic() < deadline:
            attacker.channel.send(ip)
            await asyncio.sleep(0.1)
        assert other.received, "no packet crossed the tunnel"
        before = len(other.received)
        attacker.channel.send("a string is not an IP packet")
        attacker.channel.send("")
        attacker.channel.send(b"")
        attacker.channel.send(os.urandom(70000))
        sizes = [1, 20, 1172, 1500, 9000, 65535]
        for size in sizes:
            attacker.channel.send(os.urandom(size))
        assert await other.wait_for(before + len(sizes))
        await asyncio.sleep(0.3)
        assert [len(m) for m in other.received[before:]] == sizes
        assert all(isinstance(m, bytes) for m in other.received)
        # The other way round still works.
        other.channel.send(ip)
        assert await attacker.wait_for(1)
        assert attacker.received[-1] == ip
        await attacker.close()
        await other.close()

    asyncio.run(scenario())
    m = gateway.metrics()
    assert m['moat_tunnel_dropped_messages_total{reason="not_binary"}'] == 3
    assert m['moat_tunnel_dropped_messages_total{reason="oversized"}'] == 1
    assert m["moat_tunnel_refused_total{reason=\"full\"}"] == 0
    assert gateway.process.poll() is None


def test_closing_the_first_channel_moves_delivery_to_another(gateway):
    """A peer with two channels closes the one the gateway delivered to:
    its other open channel takes over (before, every later packet was
    dropped as no_channel)."""
    url = gateway.base + "/whip/tunnel/twochannels"

    async def scenario():
        sender = await Peer(url).connect()
        receiver = Peer(url)
        second = receiver.pc.createDataChannel("second")
        on_second = []
        second.on("message", on_second.append)
        second_open = asyncio.Event()
        second.on("open", second_open.set)
        await receiver.connect()
        await asyncio.wait_for(second_open.wait(), 15)
        ip = bytes([0x45]) + os.urandom(59)
        deadline = time.monotonic() + 10
        while not receiver.received and time.monotonic() < deadline:
            sender.channel.send(ip)
            await asyncio.sleep(0.1)
        assert receiver.received and not on_second, "delivered to the first channel first"
        receiver.channel.close()
        await asyncio.sleep(1.0)
        for _ in range(20):
            sender.channel.send(ip)
            await asyncio.sleep(0.02)
        deadline = time.monotonic() + 5
        while len(on_second) < 20 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert len(on_second) == 20, len(on_second)
        await sender.close()
        await receiver.close()

    asyncio.run(scenario())
    assert gateway.metrics()['moat_tunnel_dropped_messages_total{reason="no_channel"}'] == 0


def test_a_seventeenth_channel_takes_over_when_the_first_sixteen_close(gateway):
    """A receiving peer with 17 channels closes the first 16: its 17th gets
    the packets (before, only 16 open channels were remembered and every
    later packet was dropped as no_channel)."""
    url = gateway.base + "/whip/tunnel/seventeen"

    async def scenario():
        sender = await Peer(url).connect()
        receiver = Peer(url)
        more = [receiver.pc.createDataChannel(f"c{i}") for i in range(1, 17)]
        on_last = []
        more[-1].on("message", on_last.append)
        await receiver.connect()
        deadline = time.monotonic() + 15
        while any(c.readyState != "open" for c in more) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert all(c.readyState == "open" for c in more)
        ip = bytes([0x45]) + os.urandom(59)
        deadline = time.monotonic() + 10
        while not receiver.received and time.monotonic() < deadline:
            sender.channel.send(ip)
            await asyncio.sleep(0.1)
        assert receiver.received and not on_last, "delivered to the first channel first"
        receiver.channel.close()
        for c in more[:-1]:
            c.close()
        await asyncio.sleep(1.5)
        for _ in range(20):
            sender.channel.send(ip)
            await asyncio.sleep(0.02)
        deadline = time.monotonic() + 5
        while len(on_last) < 20 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert len(on_last) == 20, len(on_last)
        await sender.close()
        await receiver.close()

    asyncio.run(scenario())
    assert gateway.metrics()['moat_tunnel_dropped_messages_total{reason="no_channel"}'] == 0


def test_a_peer_with_only_a_negotiated_channel_ends_with_its_partner(gateway):
    """A peer whose only channel is negotiated (no DCEP OPEN) and that sends
    nothing is ended when its partner leaves, and a newcomer gets a tunnel
    of its own (before, its check was armed by a DCEP OPEN only: it stayed,
    holding its side, and the newcomer was paired with it)."""
    url = gateway.base + "/whip/tunnel/negotiated"

    def tunnel_figures():
        m = gateway.metrics()
        return (m["moat_tunnel_tunnels"], m["moat_tunnel_peers"], m["moat_tunnel_lanes"])

    async def until(predicate, timeout=10):
        deadline = time.monotonic() + timeout
        while not predicate() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        return predicate()

    async def scenario():
        first = await Peer(url).connect()
        quiet = RTCPeerConnection()
        channel = quiet.createDataChannel("tunnel", negotiated=True, id=7)
        resource, _ = await whip_publish(quiet, url)
        assert await until(lambda: channel.readyState == "open")
        assert tunnel_figures() == (1, 2, 2)
        await first.close()
        assert await until(lambda: tunnel_figures() == (0, 0, 0)), tunnel_figures()
        assert await until(lambda: gateway.metrics()["moat_sessions"] == 0)
        newcomer = await Peer(url).connect()
        assert tunnel_figures() == (1, 1, 1)
        await newcomer.close()
        await whip_delete(resource)
        await quiet.close()

    asyncio.run(scenario())
