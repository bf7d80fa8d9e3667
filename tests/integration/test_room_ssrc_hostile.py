"""A publisher that sends another publisher's SSRCs in the same room (a
hostile one, or a collision): a room names its publishers' streams by SSRC
(a subscriber maps a relayed packet to its publisher's codecs by it, and the
worker's one copy of a publisher's packets, which answers every viewer's
NACKs, is keyed by the room and the SSRC), so the second one's packets
would have been kept as the first one's and resent to the first one's
viewers. The first to send an SSRC keeps it; the other publisher's packets
are dropped and counted (`ssrc_refused`), and the first's viewers hear the
first, their NACKs answered with its packets."""
import asyncio
import re
import time

from aiortc import RTCPeerConnection
from aiortc.rtp import RTCP_RTPFB_NACK, RtcpRtpfbPacket

from aiortc_peer import PatternTrack, ToneTrack, whip_publish
from test_room import api, check_media, close, publish, subscribe, video_receiver
from test_room_rtx import video_answer


async def publish_as(base, room, ssrcs, frequency):
    """A WHIP publisher whose audio and video SSRCs are `ssrcs` (by kind)."""
    pc = RTCPeerConnection()
    pc.addTrack(ToneTrack(frequency))
    pc.addTrack(PatternTrack())
    for sender in pc.getSenders():
        sender._ssrc = ssrcs[sender.track.kind]
    resource, _ = await whip_publish(pc, f"{base}/whip/room/{room}")
    return {"pc": pc, "resource": resource}


def test_a_second_publisher_cannot_send_the_first_ones_ssrcs(gateway):
    async def run():
        first = await publish(gateway.base, "ssrc-taken", 440.0)
        ssrcs = {s.track.kind: s._ssrc for s in first["pc"].getSenders()}
        await asyncio.sleep(1.0)  # the first one's packets claim its SSRCs
        second = await publish_as(gateway.base, "ssrc-taken", ssrcs, 880.0)
        _, room = api(gateway, "GET", "/api/rooms/ssrc-taken")
        ids = [p["id"] for p in room["publishers"]]
        assert len(ids) == 2, room
        viewer = await subscribe(gateway.base, "ssrc-taken", ids[0])
        second_viewer = await subscribe(gateway.base, "ssrc-taken", ids[1])
        _, media_ssrc, rtx_ssrc = video_answer(viewer)
        receiver = await video_receiver(viewer)
        kept, resent = {}, []
        handle = receiver._handle_rtp_packet

        async def recording(packet, arrival_time_ms):
            if packet.ssrc == media_ssrc:
                kept[packet.sequence_number] = bytes(packet.payload)
            elif packet.ssrc == rtx_ssrc:
                osn = packet.payload[0] << 8 | packet.payload[1]
                resent.append((osn, bytes(packet.payload[2:])))
            await handle(packet, arrival_time_ms)

        receiver._handle_rtp_packet = recording
        await asyncio.sleep(5.0)
        check_media(viewer, frequency=440.0)
        # The first one's viewer asks again for packets it had: each comes
        # back as the first one sent it.
        last = max(kept)
        lost = [(last - 10 + i) % 65536 for i in range(8) if (last - 10 + i) % 65536 in kept]
        await receiver.transport._send_rtp(bytes(RtcpRtpfbPacket(
            fmt=RTCP_RTPFB_NACK, ssrc=1234, media_ssrc=media_ssrc, lost=lost)))
        for _ in range(20):
            if len(resent) >= len(lost):
                break
            await asyncio.sleep(0.1)
        assert sorted(osn for osn, _ in resent) == sorted(lost), (resent, lost)
        for osn, payload in resent:
            assert payload == kept[osn], f"sequence number {osn} resent with another payload"
        _, room = api(gateway, "GET", "/api/rooms/ssrc-taken")
        by_id = {p["id"]: p for p in room["publishers"]}
        assert by_id[ids[0]]["ssrc_refused"] == 0, by_id
        assert by_id[ids[1]]["ssrc_refused"] > 100, by_id
        assert by_id[ids[1]]["packets"] == 0, by_id
        heard = second_viewer["recorders"].get("audio")
        assert heard is None or heard.frames == 0, "the second one's packets were relayed"
        for peer in (viewer, second_viewer, first, second):
            await close(peer)

    asyncio.run(run())


def record_video(viewer, audio_ssrc, rtx_ssrc):
    """Every RTP packet with a payload that reaches the viewer on another SSRC
    than its audio's and its RTX's, as (monotonic time, SSRC): all the video
    the room relays to it, whatever SSRC it carries."""
    seen = []
    router = viewer["pc"].getReceivers()[0].transport._rtp_router
    route = router.route_rtp

    def routing(packet):
        if packet.ssrc not in (audio_ssrc, rtx_ssrc) and packet.payload:
            seen.append((time.monotonic(), packet.ssrc))
        return route(packet)

    router.route_rtp = routing
    return seen


async def packets_sent(sender):
    """The sender's RTP packets so far (outbound-rtp packetsSent). getStats
    does not yield to the loop: nothing is sent between it and the caller's
    next statement (a packet being sent then is counted after it: slack 1)."""
    stats = await sender.getStats()
    return next(s.packetsSent for s in stats.values() if s.type == "outbound-rtp")


def test_a_plain_streams_second_ssrc_is_counted_not_relayed(gateway):
    """A plain (not simulcast) video stream that goes on under a second SSRC:
    the room keeps relaying its first only, and counts the others
    (`ssrc_extra`) instead of dropping them unseen. A viewer subscribed
    before the switch gets the first SSRC's video, and after it nothing; the
    publisher's `packets` (what the room took into its fan-out) never holds
    a packet of the second SSRC."""
    async def run():
        publisher = await publish(gateway.base, "ssrc-extra", 440.0)
        await asyncio.sleep(1.5)  # the first SSRC is claimed
        _, room = api(gateway, "GET", "/api/rooms/ssrc-extra")
        before = room["publishers"][0]
        assert before["ssrc_extra"] == 0, before
        viewer = await subscribe(gateway.base, "ssrc-extra")
        answer = viewer["pc"].remoteDescription.sdp
        audio_ssrc = int(re.search(r"a=ssrc:(\d+)", answer[:answer.index("m=video")]).group(1))
        _, media_ssrc, rtx_ssrc = video_answer(viewer)
        video = record_video(viewer, audio_ssrc, rtx_ssrc)
        for _ in range(50):  # the viewer gets the first SSRC's video
            if len(video) >= 30:
                break
            await asyncio.sleep(0.1)
        assert len(video) >= 30, f"the viewer got {len(video)} video packets before the switch"
        assert {ssrc for _, ssrc in video} == {media_ssrc}, video
        senders = {s.track.kind: s for s in publisher["pc"].getSenders()}
        first_video = await packets_sent(senders["video"])
        senders["video"]._ssrc ^= 0x5A5A5A5A
        switched = time.monotonic()
        await asyncio.sleep(2.0)
        # What was in flight at the switch (loopback: milliseconds) may still
        # arrive; nothing later: the second SSRC's packets are not relayed.
        late = [(t - switched, ssrc) for t, ssrc in video if t > switched + 0.5]
        assert not late, (f"{len(late)} video packets reached the viewer after the switch "
                          f"(first at {late[0][0]:.2f} s, SSRCs {sorted({s for _, s in late})})")
        _, room = api(gateway, "GET", "/api/rooms/ssrc-extra")
        after = room["publishers"][0]
        audio = await packets_sent(senders["audio"])
        assert after["packets"] <= audio + first_video + 2, (
            f"the room took {after['packets']} packets into its fan-out; the publisher sent "
            f"{audio} audio and {first_video} video packets on the first SSRC")
        assert after["ssrc_extra"] > 20, after
        assert after["ssrc_refused"] == 0, after
        for peer in (viewer, publisher):
            await close(peer)

    asyncio.run(run())
