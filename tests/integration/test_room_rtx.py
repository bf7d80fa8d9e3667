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

from test_room import api, close, publish, subscribe, video_receiver


def video_answer(sub):
    """The video m-line of the subscriber's answer and its (media, RTX)
    SSRCs from a=ssrc-group:FID."""
    answer = sub["pc"].remoteDescription.sdp
    video = answer[answer.index("m=video"):]
    fid = re.search(r"a=ssrc-group:FID (\d+) (\d+)", video)
    assert fid, "no RTX SSRC in the answer:\n" + video
    return video, int(fid.group(1)), int(fid.group(2))


def test_subscriber_nacks_are_answered_with_rtx(gateway):
    async def run():
        pub = await publish(gateway.base, "rtx")
        await asyncio.sleep(1.0)
        sub = await subscribe(gateway.base, "rtx")
        video, media_ssrc, rtx_ssrc = video_answer(sub)
        rtx_pts = {int(pt) for pt in re.findall(r"a=rtpmap:(\d+) rtx/90000", video)}
        assert rtx_pts, video
        receiver = await video_receiver(sub)
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
        _, media_ssrc, rtx_ssrc = video_answer(sub)
        receiver = await video_receiver(sub)
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


PLAYOUT_URI = "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"
PLAYOUT_ID = 12


def offer_playout_delay(sdp):
    """Chromium's offer has the playout-delay extension; aiortc's does not:
    added to the video m-line."""
    head, video = sdp.split("m=video", 1)
    lines = video.split("\r\n")
    lines.insert(1, f"a=extmap:{PLAYOUT_ID} {PLAYOUT_URI}")
    return head + "m=video" + "\r\n".join(lines)


def extension_element(data, wanted):
    """The value of one-byte-header extension element `wanted` in an RTP
    datagram (header extensions are not encrypted by SRTP), None absent."""
    if not data[0] & 0x10:
        return None
    start = 12 + 4 * (data[0] & 0x0F)
    if len(data) < start + 4 or data[start:start + 2] != b"\xbe\xde":
        return None
    end = start + 4 + 4 * int.from_bytes(data[start + 2:start + 4], "big")
    i = start + 4
    while i < min(end, len(data)):
        if data[i] == 0:
            i += 1
            continue
        element, size = data[i] >> 4, (data[i] & 0x0F) + 1
        if element == wanted:
            return data[i + 1:i + 1 + size]
        i += 1 + size
    return None


async def nacking_viewer(gateway, room, every, munge=None):
    """A subscriber that NACKs every `every`-th media packet it receives
    (as a receiver on a path losing 1/every would; `every` is a one-item
    list the test may change) and counts, on the wire before SRTP, how many
    copies of each RTX packet arrive, and the playout delays its media
    packets ask for (min, max in 10 ms units, in order of change)."""
    sub = await subscribe(gateway.base, room, munge=munge)
    _, media_ssrc, rtx_ssrc = video_answer(sub)
    receiver = await video_receiver(sub)
    every = every if isinstance(every, list) else [every]
    state = {"media": 0, "nacked": 0, "rtx_copies": {}, "playout": [], "every": every}
    ice = receiver.transport.transport
    receive = ice._recv

    async def wire():
        data = await receive()
        if len(data) >= 12 and 128 <= data[0] < 192 and not 72 <= (data[1] & 0x7f) <= 76:
            ssrc = int.from_bytes(data[8:12], "big")
            if ssrc == rtx_ssrc:
                seq = int.from_bytes(data[2:4], "big")
                state["rtx_copies"][seq] = state["rtx_copies"].get(seq, 0) + 1
            elif ssrc == media_ssrc:
                value = extension_element(data, PLAYOUT_ID)
                delay = (value[0] << 4 | value[1] >> 4, (value[1] & 0x0F) << 8 | value[2]) \
                    if value and len(value) == 3 else None
                if not state["playout"] or state["playout"][-1] != delay:
                    state["playout"].append(delay)
        return data

    ice._recv = wire
    handle = receiver._handle_rtp_packet

    async def nacking(packet, arrival_time_ms):
        await handle(packet, arrival_time_ms)
        if packet.ssrc != media_ssrc:
            return
        state["media"] += 1
        if every[0] and state["media"] % every[0] == 0:
            state["nacked"] += 1
            await receiver.transport._send_rtp(bytes(RtcpRtpfbPacket(
                fmt=RTCP_RTPFB_NACK, ssrc=1234, media_ssrc=media_ssrc,
                lost=[packet.sequence_number])))

    receiver._handle_rtp_packet = nacking
    return sub, state


def test_retransmissions_go_twice_on_a_lossy_path(gateway):
    """A viewer whose NACKs cover 5 % of its video gets each retransmission
    twice (a second chance if the first is lost too); one whose NACKs cover
    0.5 %, in the same room and run, gets one. Before: one copy each."""
    async def run():
        pub = await publish(gateway.base, "rtxtwice")
        await asyncio.sleep(1.0)
        lossy, lossy_state = await nacking_viewer(gateway, "rtxtwice", 20)
        clean, clean_state = await nacking_viewer(gateway, "rtxtwice", 200)
        # The judgement needs 200 packets sent; aiortc's pattern runs at
        # about 60 video packets a second.
        for _ in range(150):
            if lossy_state["media"] >= 700:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.5)
        for peer in (lossy, clean, pub):
            await close(peer)
        return lossy_state, clean_state

    lossy, clean = asyncio.run(run())
    print("lossy viewer:", lossy["media"], "media,", lossy["nacked"], "NACKed, RTX copies",
          sorted(lossy["rtx_copies"].values()))
    print("clean viewer:", clean["media"], "media,", clean["nacked"], "NACKed, RTX copies",
          sorted(clean["rtx_copies"].values()))
    assert lossy["media"] >= 400 and lossy["nacked"] >= 20, lossy
    twice = sum(1 for n in lossy["rtx_copies"].values() if n == 2)
    assert twice >= lossy["nacked"] // 2, lossy
    assert max(lossy["rtx_copies"].values()) == 2, lossy
    assert clean["rtx_copies"] and set(clean["rtx_copies"].values()) == {1}, clean
    assert gateway.metric("moat_nack_retransmission_copies_total") >= twice


def test_a_lossy_viewer_is_asked_for_a_playout_delay(gateway):
    """Viewers that offered the playout-delay extension (as Chromium does):
    one whose NACKs cover 5 % of its video is asked for a playout delay
    (min = 1.5 round trips + 20 ms, at least 60 ms; max 10 s), so its
    jitter buffer waits for retransmissions instead of freezing; one whose
    NACKs cover 0.5 %, in the same run, is never asked. When the lossy one
    stops NACKing, the ask goes back to 0 once a stale window shows it.
    Before: no playout delay was ever sent."""
    async def run():
        pub = await publish(gateway.base, "playout")
        await asyncio.sleep(1.0)
        lossy, lossy_state = await nacking_viewer(gateway, "playout", [20],
                                                  munge=offer_playout_delay)
        clean, clean_state = await nacking_viewer(gateway, "playout", 200,
                                                  munge=offer_playout_delay)
        for _ in range(150):
            if lossy_state["media"] >= 500 and lossy_state["playout"][-1:] not in ([None], []):
                break
            await asyncio.sleep(0.1)
        asked_at = lossy_state["media"]
        lossy_state["every"][0] = 0  # the path stops losing
        # 800 packets without a NACK closing the window (session_playout.c).
        for _ in range(250):
            if lossy_state["playout"][-1:] == [(0, 1000)]:
                break
            await asyncio.sleep(0.1)
        for peer in (lossy, clean, pub):
            await close(peer)
        return lossy_state, clean_state, asked_at

    lossy, clean, asked_at = asyncio.run(run())
    print("lossy viewer playout asks:", lossy["playout"], "first asked by packet", asked_at,
          "of", lossy["media"])
    print("clean viewer playout asks:", clean["playout"])
    asked = [d for d in lossy["playout"] if d]
    assert asked and asked[0][0] >= 6 and asked[0][1] == 1000, lossy["playout"]
    assert lossy["playout"][-1] == (0, 1000), lossy["playout"]
    assert clean["playout"] == [None], clean["playout"]
    assert gateway.metric("moat_playout_delays_asked_total") >= 1
