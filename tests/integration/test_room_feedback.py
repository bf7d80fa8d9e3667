"""Congestion feedback to publishers (room_feedback.c): the room sends each
publisher REMB with the lowest of its subscribers' estimates, capped by the
room's max_bitrate (POST /api/rooms) and the publisher's own (its session's
configure message). aiortc honours REMB (RTCRtpSender sets its encoder's
target_bitrate from it): a publisher of noise (which fills whatever bitrate
it is given) in a room capped at 300 kbit/s sends less than one in a room
without a cap, its encoder's target is the cap, and the room counts the
REMB it sent; a subscriber's REMB (sent by its aiortc receiver) lowers its
publisher's target."""
import asyncio
import json

import numpy as np
from aiortc import RTCPeerConnection, VideoStreamTrack
from aiortc.rtp import RTCP_PSFB_APP, RtcpPsfbPacket, pack_remb_fci
from av import VideoFrame

from aiortc_peer import whip_publish
from test_room import api, close, subscribe
from test_room_message import message


class NoiseTrack(VideoStreamTrack):
    """A gradient under faint noise, 320x240: the encoder uses all the
    bitrate it may (and can meet a lower target by coarser quantization)."""

    async def recv(self):
        pts, time_base = await self.next_timestamp()
        x = np.arange(320, dtype=np.uint16)
        y = np.arange(240, dtype=np.uint16)[:, None]
        image = np.zeros((240, 320, 3), dtype=np.uint8)
        image[:, :, 0] = (x % 256).astype(np.uint8)
        image[:, :, 1] = (y % 256).astype(np.uint8)
        image[:, :, 2] = 128
        image += np.random.randint(0, 12, (240, 320, 3), dtype=np.uint8)
        frame = VideoFrame.from_ndarray(image, format="rgb24")
        frame.pts = pts
        frame.time_base = time_base
        return frame


def encoder_target(pc):
    sender = next(s for s in pc.getSenders() if s.track and s.track.kind == "video")
    encoder = getattr(sender, "_RTCRtpSender__encoder", None)
    return encoder.target_bitrate if encoder else None


async def bytes_sent(pc):
    sender = next(s for s in pc.getSenders() if s.track and s.track.kind == "video")
    stats = await sender.getStats()
    return sum(s.bytesSent for s in stats.values() if s.type == "outbound-rtp")


async def send_rate(pc, seconds=3.0):
    before = await bytes_sent(pc)
    await asyncio.sleep(seconds)
    return (await bytes_sent(pc) - before) * 8 / seconds


async def publish_noise(base, room):
    pc = RTCPeerConnection()
    pc.addTrack(NoiseTrack())
    resource, answer = await whip_publish(pc, f"{base}/whip/room/{room}")
    assert "goog-remb" in answer, answer
    return {"pc": pc, "resource": resource}


def publisher_of(gateway, room):
    _, info = api(gateway, "GET", f"/api/rooms/{room}")
    return info["publishers"][0]


def test_remb_caps_the_publisher(gateway):
    status, _ = api(gateway, "POST", "/api/rooms", {"name": "capped", "max_bitrate": 300000})
    assert status == 201

    async def run():
        capped = await publish_noise(gateway.base, "capped")
        free = await publish_noise(gateway.base, "free")
        viewers = [await subscribe(gateway.base, "capped"), await subscribe(gateway.base, "free")]
        await asyncio.sleep(3.0)
        capped_rate, free_rate = await asyncio.gather(send_rate(capped["pc"]), send_rate(free["pc"]))
        pub = publisher_of(gateway, "capped")
        assert pub["remb_sent"] >= 2 and pub["remb_bitrate"] == 300000, pub
        assert publisher_of(gateway, "free")["remb_sent"] == 0  # nothing limits it
        assert encoder_target(capped["pc"]) == 300000
        assert encoder_target(free["pc"]) == 500000  # aiortc's default
        print(f"send rate capped={capped_rate:.0f} free={free_rate:.0f} bit/s")
        assert capped_rate < free_rate, (capped_rate, free_rate)

        # The publisher's own cap, lower than the room's, through its session.
        status, reply = await message(gateway.base, capped["resource"],
                                      {"request": "configure", "max_bitrate": 260000})
        assert status == 200 and reply["max_bitrate"] == 260000, reply
        await asyncio.sleep(1.5)
        assert publisher_of(gateway, "capped")["remb_bitrate"] == 260000
        assert encoder_target(capped["pc"]) == 260000
        # A subscriber's own estimate (its REMB) limits its publisher.
        receiver = next(t.receiver for t in viewers[1]["pc"].getTransceivers() if t.kind == "video")
        for _ in range(6):
            await receiver._send_rtcp(RtcpPsfbPacket(fmt=RTCP_PSFB_APP, ssrc=1234, media_ssrc=0,
                                                     fci=pack_remb_fci(280000, [5678])))
            await asyncio.sleep(0.4)
        assert publisher_of(gateway, "free")["remb_bitrate"] == 280000
        _, free_room = api(gateway, "GET", "/api/rooms/free")
        assert free_room["subscribers"][0]["estimate_bitrate"] == 280000, free_room
        assert encoder_target(free["pc"]) == 280000
        status, reply = await message(gateway.base, viewers[0]["resource"],
                                      {"request": "configure", "max_bitrate": 1})
        assert status == 400 and reply["error"] == "bad_option", reply  # subscribers have none
        for peer in (*viewers, capped, free):
            await close(peer)

    asyncio.run(run())
    status, reply = api(gateway, "POST", "/api/rooms", {"name": "bad", "max_bitrate": -5})
    assert status == 400 and reply["error"] == "bad_option", reply
