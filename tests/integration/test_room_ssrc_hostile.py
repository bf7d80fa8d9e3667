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


def test_a_plain_streams_second_ssrc_is_counted_not_relayed(gateway):
    """A plain (not simulcast) video stream that goes on under a second SSRC:
    the room keeps relaying its first only, and counts the others
    (`ssrc_extra`) instead of dropping them unseen."""
    async def run():
        publisher = await publish(gateway.base, "ssrc-extra", 440.0)
        await asyncio.sleep(1.5)  # the first SSRC is claimed
        _, room = api(gateway, "GET", "/api/rooms/ssrc-extra")
        before = room["publishers"][0]
        assert before["ssrc_extra"] == 0, before
        video = next(s for s in publisher["pc"].getSenders() if s.track.kind == "video")
        video._ssrc ^= 0x5A5A5A5A
        await asyncio.sleep(2.0)
        _, room = api(gateway, "GET", "/api/rooms/ssrc-extra")
        after = room["publishers"][0]
        assert after["ssrc_extra"] > 20, after
        assert after["ssrc_refused"] == 0, after
        await close(publisher)

    asyncio.run(run())
