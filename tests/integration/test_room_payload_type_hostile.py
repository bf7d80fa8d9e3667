"""A publisher that sends authenticated RTP on its own video SSRC under a
payload type its m-line never accepted: no plugin can forward it (the room
looked the payload type up for every subscriber, under the room's lock, and
found nothing). The core drops it where it maps the packet to its m-line,
counted as `payload_type`; the publisher's real video goes on reaching its
viewer."""
import asyncio

from test_room import api, check_media, close, publish, subscribe

UNACCEPTED = 45  # in no m-line of aiortc's offer, so in no answer


def rewrite_video_payload_type(publisher, switch):
    """While switch["on"], the publisher's video RTP leaves with payload type
    UNACCEPTED (rewritten before SRTP, so the gateway authenticates it)."""
    video = next(s for s in publisher["pc"].getSenders() if s.track.kind == "video")
    transport = video.transport
    send = transport._send_rtp
    ssrc = video._ssrc.to_bytes(4, "big")

    async def sending(data):
        is_rtp = len(data) >= 12 and not 192 <= data[1] <= 223
        if switch["on"] and is_rtp and data[8:12] == ssrc:
            data = bytes([data[0], (data[1] & 0x80) | UNACCEPTED]) + data[2:]
            switch["sent"] += 1
        await send(data)

    transport._send_rtp = sending


def test_rtp_of_a_payload_type_the_m_line_never_accepted_is_dropped_and_counted(gateway):
    async def run():
        publisher = await publish(gateway.base, "pt-hostile", 440.0)
        await asyncio.sleep(1.0)
        _, room = api(gateway, "GET", "/api/rooms/pt-hostile")
        viewer = await subscribe(gateway.base, "pt-hostile", room["publishers"][0]["id"])
        await asyncio.sleep(2.0)
        switch = {"on": True, "sent": 0}
        before = gateway.drops("payload_type")
        rewrite_video_payload_type(publisher, switch)
        await asyncio.sleep(2.0)
        switch["on"] = False
        sent = switch["sent"]
        assert sent > 20, sent
        for _ in range(30):  # the last ones may still be on their way
            dropped = gateway.drops("payload_type") - before
            if dropped >= sent:
                break
            await asyncio.sleep(0.1)
        assert dropped == sent, (dropped, sent)
        frames = viewer["recorders"]["video"].frames
        await asyncio.sleep(3.0)
        # The real stream goes on under its own payload type.
        assert viewer["recorders"]["video"].frames > frames + 10
        check_media(viewer)
        for peer in (viewer, publisher):
            await close(peer)

    asyncio.run(run())
