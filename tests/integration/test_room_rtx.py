"""RTX toward subscribers (RFC 4588): a WHEP subscriber that offers rtx gets
it answered (a=rtpmap rtx with apt, a=ssrc-group:FID <media> <rtx>), and its
NACKs are answered on the RTX SSRC, with the RTX payload type, sequence
numbers of their own and the original sequence number first in the payload,
not as plain duplicates on the media stream (which confuse the receiver's
loss and jitter statistics, and which its SRTP drops as replays). Across
workers too: subscribers on the publisher's other worker share that
worker's one copy of the publisher's packets, and a NACK rebuilds, byte for
byte, the packet that subscriber was sent."""
import asyncio
import re

from aiortc.rtp import RTCP_RTPFB_NACK, RtcpRtpfbPacket

from test_room import api, close, publish, subscribe


def test_subscriber_nacks_are_answered_with_rtx(gateway):
    async def run():
        pub = await publish(gateway.base, "rtx")
        await asyncio.sleep(1.0)
        sub = await subscribe(gateway.base, "rtx")
        answer = sub["pc"].remoteDescription.sdp
        video = answer[answer.index("m=video"):]
        fid = re.search(r"a=ssrc-group:FID (\d+) (\d+)", video)
        assert fid, "no RTX SSRC in the answer:\n" + video
        media_ssrc, rtx_ssrc = int(fid.group(1)), int(fid.group(2))
        rtx_pts = {int(pt) for pt in re.findall(r"a=rtpmap:(\d+) rtx/90000", video)}
        assert rtx_pts, video
        receiver = None
        for _ in range(100):
            receiver = next((r for r in sub["pc"].getReceivers()
                             if r.track and r.track.kind == "video"), None)
            if receiver:
                break
            await asyncio.sleep(0.05)
        seen = {"media": [], "rtx": []}
        handle = receiver._handle_rtp_packet

        async def recording(packet, arrival_time_ms):
            if packet.ssrc == rtx_ssrc:
                osn = packet.payload[0] << 8 | packet.payload[1]
                seen["rtx"].append((packet.payload_type, packet.sequence_number, osn))
            elif packet.ssrc == media_ssrc:
                seen["media"].append(packet.sequence_number)
            await handle(packet, arrival_time_ms)

        receiver._handle_rtp_packet = recording
        await asyncio.sleep(3.0)
        assert len(seen["media"]) > 30, "no video reached the subscriber"
        last = seen["media"][-1]
        lost = [(last - 5 + i) % 65536 for i in range(5)]
        await receiver.transport._send_rtp(bytes(RtcpRtpfbPacket(
            fmt=RTCP_RTPFB_NACK, ssrc=1234, media_ssrc=media_ssrc, lost=lost)))
        for _ in range(20):
            if len(seen["rtx"]) >= len(lost):
                break
            await asyncio.sleep(0.1)
        rtx = seen["rtx"]
        assert sorted(osn for _, _, osn in rtx) == sorted(lost), (rtx, lost)
        assert all(pt in rtx_pts for pt, _, _ in rtx), (rtx, rtx_pts)
        sequences = [seq for _, seq, _ in rtx]
        assert all((b - a) % 65536 == 1 for a, b in zip(sequences, sequences[1:])), sequences
        await close(sub)
        await close(pub)

    asyncio.run(run())


def test_cross_worker_nacks_rebuild_the_packet_sent(gateway):
    status, room = api(gateway, "POST", "/api/rooms",
                       {"name": "rtxfar", "publisher_worker": 0, "subscriber_worker": 1})
    assert status == 201, room

    async def watch(sub):
        answer = sub["pc"].remoteDescription.sdp
        video = answer[answer.index("m=video"):]
        fid = re.search(r"a=ssrc-group:FID (\d+) (\d+)", video)
        assert fid, video
        media_ssrc, rtx_ssrc = int(fid.group(1)), int(fid.group(2))
        receiver = None
        for _ in range(100):
            receiver = next((r for r in sub["pc"].getReceivers()
                             if r.track and r.track.kind == "video"), None)
            if receiver:
                break
            await asyncio.sleep(0.05)
        seen = {"media": {}, "order": [], "rtx": {}}
        handle = receiver._handle_rtp_packet

        async def recording(packet, arrival_time_ms):
            if packet.ssrc == rtx_ssrc:
                osn = packet.payload[0] << 8 | packet.payload[1]
                seen["rtx"][osn] = bytes(packet.payload[2:])
            elif packet.ssrc == media_ssrc:
                seen["media"][packet.sequence_number] = bytes(packet.payload)
                seen["order"].append(packet.sequence_number)
            await handle(packet, arrival_time_ms)

        receiver._handle_rtp_packet = recording
        return receiver, media_ssrc, seen

    async def run():
        pub = await publish(gateway.base, "rtxfar")
        await asyncio.sleep(1.0)
        subs = [await subscribe(gateway.base, "rtxfar") for _ in range(2)]
        watched = [await watch(sub) for sub in subs]
        await asyncio.sleep(3.0)
        _, info = api(gateway, "GET", "/api/rooms/rtxfar")
        assert [s["worker"] for s in info["subscribers"]] == [1, 1], info
        gone = gateway.drops("nack_gone")
        asked = []
        for receiver, media_ssrc, seen in watched:
            assert len(seen["order"]) > 30, "no video reached the subscriber"
            last = seen["order"][-1]
            lost = [(last - 8 + i) % 65536 for i in range(6)]
            asked.append(lost)
            await receiver.transport._send_rtp(bytes(RtcpRtpfbPacket(
                fmt=RTCP_RTPFB_NACK, ssrc=1234, media_ssrc=media_ssrc, lost=lost)))
        for _ in range(30):
            if all(len(w[2]["rtx"]) >= len(lost) for w, lost in zip(watched, asked)):
                break
            await asyncio.sleep(0.1)
        for (_, _, seen), lost in zip(watched, asked):
            assert sorted(seen["rtx"]) == sorted(lost), (sorted(seen["rtx"]), lost)
            for osn in lost:
                # The original payload (its VP8 descriptor as rewritten for
                # this subscriber) after the OSN, byte for byte.
                assert seen["rtx"][osn] == seen["media"][osn], osn
        assert gateway.drops("nack_gone") == gone
        for sub in subs:
            await close(sub)
        await close(pub)

    asyncio.run(run())
