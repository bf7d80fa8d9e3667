"""A room publisher's reliable data channel relayed to a subscriber slower
than the publisher (issue 20): nothing the gateway acknowledged is dropped.
The publisher sends 6 MiB in 16 KiB messages paced only by its own
bufferedAmount; the subscriber reads its datagrams at about 1 MB/s; the
gateway runs at the smallest per-session data-channel limit, so the
subscriber's queue fills within a second or two. The publisher must be
slowed down instead (its reading paused: backpressure), and every message
must reach the subscriber byte-exact and in order, with no drop counted
anywhere, on the publisher's worker and across workers. A subscriber whose
peer stops taking data altogether holds the publisher back for 10 s at most:
then what is relayed to it is dropped and counted (datachannel_stalled), and
the other subscribers still get everything."""
import asyncio
import json
import random
import time
import urllib.request

import pytest
from aiortc import RTCPeerConnection, RTCSessionDescription

from aiortc_peer import ToneTrack, whip_delete, whip_publish
from conftest import Gateway
from test_room import whep_post

KIB = 1024
MIB = 1024 * KIB
MESSAGE = 16 * KIB
COUNT = 384  # 6 MiB
HIGH_WATER = 2 * MIB
LOW_WATER = 512 * KIB
TRANSFER_S = 50
# The smallest [limits] datachannel_session_bytes: 3 MiB for the association,
# 1 MiB of queue.
SESSION_BYTES = 4 * MIB


def api(gateway, method, path, body=None):
    request = urllib.request.Request(gateway.base + path, method=method,
                                     data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as r:
        return r.status, json.loads(r.read() or b"null")


def slow_down(pc, pause_s=0.001):
    """The subscriber's SCTP reads one datagram per pause_s at most: its
    DTLS transport hands each decrypted datagram to SCTP through this."""
    sctp = pc.sctp
    handle = sctp._handle_data

    async def slowly(data):
        await asyncio.sleep(pause_s)
        await handle(data)

    sctp._handle_data = slowly


async def publisher(base, room):
    pc = RTCPeerConnection()
    pc.addTrack(ToneTrack(440.0))
    channel = pc.createDataChannel("bulk")
    opened = asyncio.Event()
    channel.on("open", opened.set)
    resource, _ = await whip_publish(pc, f"{base}/whip/room/{room}")
    await asyncio.wait_for(opened.wait(), 10)
    return pc, resource, channel


def stall(pc, after):
    """The subscriber's SCTP takes nothing after `after` datagrams: a peer
    that stops acknowledging (its ICE consent still answered)."""
    sctp = pc.sctp
    handle = sctp._handle_data
    seen = [0]

    async def until_stalled(data):
        seen[0] += 1
        if seen[0] <= after:
            await handle(data)

    sctp._handle_data = until_stalled


async def subscriber(base, room, slow=True):
    pc = RTCPeerConnection()
    pc.addTransceiver("audio", direction="recvonly")
    received = []
    changed = asyncio.Event()
    opened = asyncio.Event()
    channel = pc.createDataChannel("viewer")
    channel.on("open", opened.set)

    @channel.on("message")
    def on_message(message):
        received.append(message)
        changed.set()

    await pc.setLocalDescription(await pc.createOffer())
    status, body, location, _ = await whep_post(f"{base}/whep/room/{room}", pc.localDescription.sdp)
    assert status == 201, f"WHEP answered {status}: {body}"
    await pc.setRemoteDescription(RTCSessionDescription(sdp=body, type="answer"))
    await asyncio.wait_for(opened.wait(), 10)
    if slow:
        slow_down(pc)
    return pc, base + location, received, changed


async def send_buffered(channel, messages, deadline):
    low = asyncio.Event()
    channel.bufferedAmountLowThreshold = LOW_WATER
    channel.on("bufferedamountlow", low.set)
    for index, message in enumerate(messages):
        while channel.bufferedAmount > HIGH_WATER:
            low.clear()
            if channel.bufferedAmount <= LOW_WATER:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return index
            try:
                await asyncio.wait_for(low.wait(), min(remaining, 0.5))
            except asyncio.TimeoutError:
                pass
        channel.send(message)
        if index % 16 == 15:
            await asyncio.sleep(0)
    return len(messages)


async def transfer(gateway, room, messages):
    sub_pc, sub_resource, received, changed = None, None, [], None
    pub_pc, pub_resource, channel = await publisher(gateway.base, room)
    try:
        sub_pc, sub_resource, received, changed = await subscriber(gateway.base, room)
        await asyncio.sleep(0.5)  # the gateway has seen the subscriber's channel open
        started = time.monotonic()
        deadline = started + TRANSFER_S
        sent = await send_buffered(channel, messages, deadline)
        while len(received) < len(messages) and time.monotonic() < deadline:
            changed.clear()
            try:
                await asyncio.wait_for(changed.wait(), 0.5)
            except asyncio.TimeoutError:
                pass
        return sent, list(received), time.monotonic() - started
    finally:
        if sub_pc:
            await whip_delete(sub_resource)
            await sub_pc.close()
        await whip_delete(pub_resource)
        await pub_pc.close()


@pytest.mark.parametrize("placement", ["same_worker", "cross_worker"])
def test_slow_subscriber_gets_every_message(placement):
    gw = Gateway(extra_args=["--datachannel-session-bytes", str(SESSION_BYTES)])
    try:
        room = "bulk"
        if placement == "cross_worker":
            status, _ = api(gw, "POST", "/api/rooms",
                            {"name": room, "publisher_worker": 0, "subscriber_worker": 1})
            assert status == 201
        rng = random.Random(placement)
        messages = [i.to_bytes(4, "big") + rng.randbytes(MESSAGE - 4) for i in range(COUNT)]
        sent, received, elapsed = asyncio.run(transfer(gw, room, messages))
        m = gw.metrics()
        relay_drops = {k: v for k, v in m.items()
                       if k.startswith("moat_relay_dropped_data_messages_total") and v}
        print(f"{placement}: {len(received)} of {sent} messages in {elapsed:.1f} s, "
              f"{m.get('moat_datachannel_receive_pauses_total', 0):.0f} pauses, "
              f"relay drops {relay_drops}")
        assert sent == COUNT
        assert len(received) == COUNT and received == messages, \
            f"{len(received)} of {COUNT} messages reached the subscriber"
        assert gw.drops("datachannel_limit") == 0
        assert relay_drops == {}
        # The subscriber was slower than the publisher: backpressure did it.
        assert m["moat_datachannel_receive_pauses_total"] > 0
    finally:
        assert gw.stop() == 0


def test_stalled_subscriber_holds_the_publisher_back_only_so_long():
    gw = Gateway(extra_args=["--datachannel-session-bytes", str(SESSION_BYTES)])
    count = 256  # 4 MiB
    rng = random.Random("stalled")
    messages = [i.to_bytes(4, "big") + rng.randbytes(MESSAGE - 4) for i in range(count)]

    async def scenario():
        pub_pc, pub_resource, channel = await publisher(gw.base, "stall")
        peers = []
        try:
            healthy = await subscriber(gw.base, "stall", slow=False)
            peers.append(healthy)
            stalled = await subscriber(gw.base, "stall", slow=False)
            peers.append(stalled)
            stall(stalled[0], 20)
            await asyncio.sleep(0.5)
            deadline = time.monotonic() + TRANSFER_S
            sent = await send_buffered(channel, messages, deadline)
            received, changed = healthy[2], healthy[3]
            while len(received) < count and time.monotonic() < deadline:
                changed.clear()
                try:
                    await asyncio.wait_for(changed.wait(), 0.5)
                except asyncio.TimeoutError:
                    pass
            return sent, list(received)
        finally:
            for pc, resource, _, _ in peers:
                await whip_delete(resource)
                await pc.close()
            await whip_delete(pub_resource)
            await pub_pc.close()

    try:
        sent, received = asyncio.run(scenario())
        assert sent == count
        assert len(received) == count and received == messages, \
            f"{len(received)} of {count} messages reached the healthy subscriber"
        assert gw.drops("datachannel_stalled") > 0
        assert gw.drops("datachannel_limit") == 0
    finally:
        assert gw.stop() == 0


def test_a_subscriber_that_recovers_from_a_stall_gets_backpressure_again():
    """After its relayed messages were shed (a 10 s stall), the subscriber
    reads again, merely slower than the publisher: every later message
    reaches it, with backpressure on the publisher and no drop (before, the
    stall mark was never cleared once its queue was empty, and whenever its
    send buffer was full the publisher's messages were dropped as
    datachannel_stalled: 72 of 256 arrived)."""
    gw = Gateway(extra_args=["--datachannel-session-bytes", str(SESSION_BYTES)])
    rng = random.Random("recovers")
    stalled_phase = [b"A" + i.to_bytes(4, "big") + rng.randbytes(MESSAGE - 5) for i in range(256)]
    later = [b"B" + i.to_bytes(4, "big") + rng.randbytes(MESSAGE - 5) for i in range(256)]

    async def quiet(received, seconds):
        """Until nothing arrived for `seconds` (at most a minute)."""
        end = time.monotonic() + 60
        while time.monotonic() < end:
            n = len(received)
            await asyncio.sleep(seconds)
            if len(received) == n:
                return

    async def scenario():
        pub_pc, pub_resource, channel = await publisher(gw.base, "recovers")
        pc, resource, received, _ = await subscriber(gw.base, "recovers", slow=False)
        sctp = pc.sctp
        handle = sctp._handle_data
        state = {"stalled": True, "pause": 0.0}

        async def gated(data):
            if state["stalled"]:
                return
            if state["pause"]:
                await asyncio.sleep(state["pause"])
            await handle(data)
        sctp._handle_data = gated
        try:
            await send_buffered(channel, stalled_phase, time.monotonic() + 40)
            for _ in range(60):
                if gw.drops("datachannel_stalled") > 0:
                    break
                await asyncio.sleep(0.5)
            assert gw.drops("datachannel_stalled") > 0
            state["stalled"] = False
            # Recovered once SCTP's retransmissions reach it again.
            for _ in range(120):
                if received:
                    break
                await asyncio.sleep(0.5)
            assert received, "the subscriber got nothing after the stall"
            await quiet(received, 3)
            shed = gw.drops("datachannel_stalled")
            state["pause"] = 0.001  # slower than the publisher
            await send_buffered(channel, later, time.monotonic() + 60)
            await quiet(received, 3)
            return [m for m in received if m[:1] == b"B"], gw.drops("datachannel_stalled") - shed
        finally:
            await whip_delete(resource)
            await pc.close()
            await whip_delete(pub_resource)
            await pub_pc.close()

    try:
        got, dropped = asyncio.run(scenario())
        assert dropped == 0 and got == later, f"{len(got)} of {len(later)}, {dropped} dropped"
        assert gw.drops("datachannel_limit") == 0
    finally:
        assert gw.stop() == 0
