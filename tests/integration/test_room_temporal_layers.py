"""Temporal layers through a room: headless Chromium publishes three
simulcast layers, each VP8 L1T3 (scalabilityMode), and the room measures
each layer's temporal layers (`temporal_bps` by TID). An aiortc viewer
whose REMB says 40 kbit/s (under the lowest layer's rate) is moved to `l`
and then loses TL2 and TL1: what it receives is TL0 only, with sequence
numbers and VP8 picture ids that go up one by one (no gap: it neither
counts a loss nor NACKs), and it keeps decoding. Without the REMB it gets
every temporal layer back."""
import asyncio
import struct

import pytest
from aiortc.rtp import RTCP_PSFB_APP, RtcpPsfbPacket, pack_remb_fci

from chromium import Chromium, chromium_path
from test_room import api, close, subscribe, video_receiver

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")


def vp8_descriptor(payload):
    """(picture id or None, TID or None, begins a frame) of a VP8 payload."""
    if not payload:
        return None, None, False
    first = payload[0]
    begins = bool(first & 0x10) and (first & 0x0f) == 0
    if not first & 0x80 or len(payload) < 2:
        return None, None, begins
    x, at, picture, tid = payload[1], 2, None, None
    if x & 0x80:
        if payload[at] & 0x80:
            picture = struct.unpack("!H", payload[at:at + 2])[0] & 0x7fff
            at += 2
        else:
            picture = payload[at]
            at += 1
    if x & 0x40:
        at += 1
    if x & 0x20:
        tid = payload[at] >> 6
    return picture, tid, begins


async def wait_api(gateway, predicate, timeout):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    body = None
    while loop.time() < deadline:
        status, body = api(gateway, "GET", "/api/rooms/tl")
        if status == 200 and predicate(body):
            return body
        await asyncio.sleep(0.25)
    return body


def l1t3(room):
    """Whether every layer of the publisher sends three temporal layers."""
    pubs = room.get("publishers", [])
    layers = pubs[0].get("layers", []) if pubs else []
    return len(layers) == 3 and all(
        len([b for b in x.get("temporal_bps", []) if b > 0]) == 3 for x in layers)


def test_temporal_layers_dropped_for_a_low_estimate(gateway):
    async def scenario():
        publisher = Chromium(gateway.base + "/room.html?room=tl&publish=1&simulcast=1&temporal=1")
        sub = None
        try:
            await publisher.attach()
            room = await wait_api(gateway, l1t3, 40)
            assert l1t3(room), f"no L1T3 layers measured: {room}"
            sub = await subscribe(gateway.base, "tl")
            receiver = await video_receiver(sub)
            assert receiver, "no video receiver"
            seen = []
            handle = receiver._handle_rtp_packet

            ssrcs = set()

            async def recording(packet, arrival_time_ms):
                ssrcs.add(packet.ssrc)
                seen.append((packet.sequence_number, *vp8_descriptor(packet.payload)))
                await handle(packet, arrival_time_ms)

            receiver._handle_rtp_packet = recording
            await asyncio.sleep(3)
            assert {tid for _, _, tid, _ in seen} >= {0, 1, 2}, \
                f"the viewer did not get three temporal layers: {seen[-20:]}"

            # A REMB of 40 kbit/s, kept fresh (it is valid 5 s).
            async def remb_loop(stop):
                while not stop.is_set():
                    await receiver._send_rtcp(RtcpPsfbPacket(
                        fmt=RTCP_PSFB_APP, ssrc=1234, media_ssrc=0,
                        fci=pack_remb_fci(40000, sorted(ssrcs))))
                    await asyncio.sleep(0.25)

            stop = asyncio.Event()
            remb = asyncio.ensure_future(remb_loop(stop))
            room = await wait_api(gateway, lambda b: b["subscribers"][0]["layer"] == {
                **b["subscribers"][0]["layer"], "current": "l", "temporal_current": 0}, 20)
            layer = room["subscribers"][0]["layer"]
            assert layer["current"] == "l" and layer["temporal_current"] == 0, room
            # The viewer (Python, maybe behind on a loaded machine) gets
            # TL0 only from some packet on: the stretch after the last
            # packet of another TID grows to 20 pictures (TL0 is a quarter
            # of the frames: about 3 s).
            frames = sub["recorders"]["video"].frames

            def tl0_stretch():
                last = max((i for i, x in enumerate(seen) if x[2] != 0), default=-1)
                return last, seen[last:] if last >= 0 else seen

            loop = asyncio.get_running_loop()
            deadline = loop.time() + 20
            while loop.time() < deadline:
                last, window = tl0_stretch()
                if len(window) > 20 and (window[-1][1] - window[1][1]) % 32768 >= 20:
                    break
                await asyncio.sleep(0.2)
            last, window = tl0_stretch()
            assert len(window) > 20 and (window[-1][1] - window[1][1]) % 32768 >= 20, \
                ("TL1/TL2 still sent", seen[-40:])
            # From the last packet of TL1/TL2 on (the edge included): one by
            # one, no gap where frames were dropped.
            for (seq_a, pic_a, _, _), (seq_b, pic_b, _, _) in zip(window, window[1:]):
                assert (seq_b - seq_a) % 65536 == 1, ("sequence gap", window)
                assert (pic_b - pic_a) % 32768 in (0, 1), ("picture id gap", window)
            more = sub["recorders"]["video"].frames - frames
            assert more >= 10, f"the viewer decoded {more} frames on TL0"

            # The REMB stops: all temporal layers come back.
            stop.set()
            await remb
            room = await wait_api(gateway, lambda b: b["subscribers"][0]["layer"][
                "temporal_current"] >= 2, 15)
            assert room["subscribers"][0]["layer"]["temporal_current"] >= 2, room
        finally:
            if sub:
                await close(sub)
            await publisher.close_async()

    asyncio.run(scenario())
