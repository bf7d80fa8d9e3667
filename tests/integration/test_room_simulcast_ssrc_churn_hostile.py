"""A room publisher that moves a simulcast layer to a new SSRC on every
packet. Each packet carrying the layer's rid re-claimed the layer for its
SSRC, the room keys the worker's shared retransmission copy by the room and
the SSRC, and every subscriber worker made a new copy (a ~52 KB cache) per
SSRC, freed only 2 s after its last packet: 450 new SSRCs a second grew the
gateway from 42 to 93 MB in 24 s.

A layer now moves to a new SSRC at most once a second (an encoder restart);
the other packets are dropped and counted (`ssrc_changes_refused` in
GET /api/rooms/<room>), and a worker keeps at most 2048 shared copies. The
churn leaves the gateway's memory flat, and an honest publisher's viewer on
the same subscriber worker keeps hearing and seeing it."""
import asyncio
import struct
import time

import aiohttp
import pytest
from aiortc import RTCPeerConnection, RTCSessionDescription
from aiortc.rtcrtpsender import RTCRtpSender

from conftest import ASAN_ENV, Gateway, rss_kib
from test_room import api, check_media, close, publish, subscribe, video_receiver

pytestmark = pytest.mark.hostile

RID_EXTENSION = 10
RATE = 500  # packets a second, each on a new SSRC
CHURN_S = 10.0


def simulcast_offer(sdp, rids=("h", "l")):
    """aiortc's video offer with rid layers (aiortc sends no simulcast)."""
    out = []
    for line in sdp.split("\r\n"):
        out.append(line)
        if line.startswith("m=video"):
            out.append(f"a=extmap:{RID_EXTENSION} urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id")
            out += [f"a=rid:{rid} send" for rid in rids]
            out.append("a=simulcast:send " + ";".join(rids))
    return "\r\n".join(out)


async def simulcast_publisher(base, room):
    """A WHIP publisher whose packets the test writes itself: its transport
    and the VP8 payload type the gateway answered."""
    pc = RTCPeerConnection()
    transceiver = pc.addTransceiver("video", direction="sendonly")
    codecs = RTCRtpSender.getCapabilities("video").codecs
    transceiver.setCodecPreferences([c for c in codecs if c.mimeType.lower() == "video/vp8"])
    await pc.setLocalDescription(await pc.createOffer())
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/whip/room/{room}",
                             data=simulcast_offer(pc.localDescription.sdp),
                             headers={"Content-Type": "application/sdp"}) as r:
            answer = await r.text()
            assert r.status == 201, answer
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
    pt = next(int(line.split(":")[1].split()[0]) for line in answer.split("\r\n")
              if line.startswith("a=rtpmap:") and "vp8" in line.lower())
    transport = transceiver.sender.transport
    for _ in range(100):
        if transport.state == "connected":
            break
        await asyncio.sleep(0.1)
    assert transport.state == "connected"
    return pc, transport, pt


def layer_packet(pt, sequence, timestamp, ssrc, rid):
    """A VP8 keyframe (320x180) of layer `rid`."""
    name = rid.encode()
    extension = bytes([RID_EXTENSION << 4 | (len(name) - 1)]) + name
    extension += b"\0" * (-len(extension) % 4)
    payload = b"\x10" + bytes([0, 0, 0, 0x9d, 0x01, 0x2a]) + struct.pack("<HH", 320, 180)
    return (struct.pack("!BBHII", 0x90, 0x80 | pt, sequence & 0xffff, timestamp & 0xffffffff,
                        ssrc) + struct.pack("!HH", 0xBEDE, len(extension) // 4) + extension +
            payload + b"\0" * 40)


def test_a_layer_on_a_new_ssrc_per_packet_holds_no_memory():
    # No ASan quarantine (only the ASan gateway reads it): freed memory is
    # reused at once, as in the release build, so RSS means the same.
    gw = Gateway(workers=2, env={"ASAN_OPTIONS": ASAN_ENV["ASAN_OPTIONS"] + ":quarantine_size_mb=0"})
    try:
        for name in ("churn", "honest"):
            status, body = api(gw, "POST", "/api/rooms",
                               {"name": name, "publisher_worker": 0, "subscriber_worker": 1})
            assert status == 201, body

        async def run():
            honest = await publish(gw.base, "honest")
            pc, transport, pt = await simulcast_publisher(gw.base, "churn")
            viewer = await subscribe(gw.base, "honest")
            churn_viewer = await subscribe(gw.base, "churn")
            received = {"n": 0}
            receiver = await video_receiver(churn_viewer)
            handle = receiver._handle_rtp_packet

            async def counting(packet, arrival_time_ms):
                received["n"] += 1
                await handle(packet, arrival_time_ms)

            receiver._handle_rtp_packet = counting
            # The layer's first SSRC, for a second: both viewers get going.
            sequence, timestamp, ssrc = 1000, 0, 0x10000000
            for _ in range(25):
                await transport._send_rtp(layer_packet(pt, sequence, timestamp, ssrc, "l"))
                sequence, timestamp = sequence + 1, timestamp + 3600
                await asyncio.sleep(0.04)
            await asyncio.sleep(1.0)
            before = rss_kib(gw.process.pid)
            frames, got = viewer["recorders"]["video"].frames, received["n"]
            sent, start = 0, time.monotonic()
            while time.monotonic() - start < CHURN_S:
                for _ in range(RATE // 100):
                    ssrc += 1
                    await transport._send_rtp(layer_packet(pt, sequence, timestamp, ssrc, "l"))
                    sequence, timestamp, sent = sequence + 1, timestamp + 3600, sent + 1
                await asyncio.sleep(0.01)
            grown = rss_kib(gw.process.pid) - before
            print(f"{sent} packets on new SSRCs: RSS grew {grown} KiB; "
                  f"the churning publisher's viewer got {received['n'] - got} of them")
            _, room = api(gw, "GET", "/api/rooms/churn")
            publisher = room["publishers"][0]
            # Before: 42 MB (~1000 live copies of ~52 KB on the viewers' worker).
            assert grown < 8 * 1024, f"RSS grew {grown} KiB over {sent} new SSRCs"
            # About one change a second was taken; the rest were refused.
            assert publisher["ssrc_changes_refused"] >= sent - 2 * CHURN_S - 5, publisher
            assert publisher["ssrc_refused"] == 0, publisher
            # The honest publisher's viewer, on the same worker, went on.
            assert viewer["recorders"]["video"].frames - frames >= 100, "honest video stalled"
            check_media(viewer)
            await pc.close()
            for peer in (viewer, churn_viewer, honest):
                await close(peer)

        asyncio.run(run())
    finally:
        code = gw.stop()
    assert code == 0, f"moat exited with {code}; log in {gw.log_path}"
