"""One room subscriber flooding PLIs (every 20 ms) must not make the
publisher's encoder send a keyframe to every viewer three times a second
(the core's per-m-line interval, which was the only limit): a subscriber's
keyframe requests reach its publisher at most once a second
(ROOM_KEYFRAME_REQUEST_INTERVAL_US), the rest are dropped and counted in
its `keyframe_requests_dropped` (GET /api/rooms/<room>); another
subscriber's PLI still yields a keyframe."""
import asyncio
import time

from aiortc.rtp import RTCP_PSFB_PLI, RtcpPsfbPacket

from test_room import api, close, count_keyframes, publish, subscribe, video_receiver

FLOOD_S = 5.0


def subscriber_stats(gateway, room, sub_id):
    _, body = api(gateway, "GET", f"/api/rooms/{room}")
    return next(s for s in body["subscribers"] if s["id"] == sub_id)


async def watching(sub):
    """The subscriber's video receiver, and the SSRC it receives once video
    flows."""
    receiver = await video_receiver(sub)
    assert receiver, "no video track"
    seen = {}
    handle = receiver._handle_rtp_packet

    async def recording(packet, arrival_time_ms):
        seen["ssrc"] = packet.ssrc
        await handle(packet, arrival_time_ms)

    receiver._handle_rtp_packet = recording
    return receiver, seen


async def pli(receiver, ssrc):
    await receiver.transport._send_rtp(bytes(RtcpPsfbPacket(fmt=RTCP_PSFB_PLI, ssrc=1234,
                                                            media_ssrc=ssrc)))


def test_a_pli_flood_is_held_to_one_keyframe_a_second(gateway):
    async def run():
        pub = await publish(gateway.base, "pli-flood")
        keyframes = count_keyframes(pub)
        await asyncio.sleep(1.0)
        honest = await subscribe(gateway.base, "pli-flood")
        honest_receiver, honest_seen = await watching(honest)
        hostile = await subscribe(gateway.base, "pli-flood")
        hostile_receiver, hostile_seen = await watching(hostile)
        await asyncio.sleep(3.0)
        assert "ssrc" in honest_seen and "ssrc" in hostile_seen, "no video reached a subscriber"
        # Ids are s<serial>: the honest viewer joined first.
        subs = api(gateway, "GET", "/api/rooms/pli-flood")[1]["subscribers"]
        honest_id, hostile_id = sorted((s["id"] for s in subs), key=lambda i: int(i[1:]))

        # The flood: one PLI every 20 ms.
        start_keyframes = keyframes["n"]
        dropped_before = subscriber_stats(gateway, "pli-flood", hostile_id).get(
            "keyframe_requests_dropped", 0)
        sent = 0
        end = time.monotonic() + FLOOD_S
        while time.monotonic() < end:
            await pli(hostile_receiver, hostile_seen["ssrc"])
            sent += 1
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.5)  # what the encoder was asked for has been sent
        flood_keyframes = keyframes["n"] - start_keyframes
        stats = subscriber_stats(gateway, "pli-flood", hostile_id)
        print(f"{sent} PLIs in {FLOOD_S} s: {flood_keyframes} publisher keyframes; {stats}")
        # Once a second, the first at once (the core's 300 ms alone let
        # through about 3.3 a second).
        assert flood_keyframes <= FLOOD_S + 2, (
            f"{sent} PLIs made the publisher send {flood_keyframes} keyframes in {FLOOD_S} s")
        assert flood_keyframes >= 1, "the flooding subscriber's first PLI was not passed on"
        dropped = stats["keyframe_requests_dropped"] - dropped_before
        assert dropped >= sent - (FLOOD_S + 2), f"{dropped} of {sent} PLIs counted as dropped"

        # The honest viewer, quiet meanwhile, still gets a keyframe for its
        # PLI, and none of its requests was dropped.
        await asyncio.sleep(1.0)
        honest_dropped = subscriber_stats(gateway, "pli-flood", honest_id)[
            "keyframe_requests_dropped"]
        count = keyframes["n"]
        await pli(honest_receiver, honest_seen["ssrc"])
        for _ in range(20):
            if keyframes["n"] > count:
                break
            await asyncio.sleep(0.1)
        assert keyframes["n"] > count, "the honest subscriber's PLI did not reach the publisher"
        assert subscriber_stats(gateway, "pli-flood", honest_id)[
            "keyframe_requests_dropped"] == honest_dropped
        for peer in (honest, hostile, pub):
            await close(peer)

    asyncio.run(run())
