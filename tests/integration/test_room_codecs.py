"""Plugins shape the SDP answer (plugin API v2 accept_codec): a room created
with POST /api/rooms {"codecs": [...]} only accepts those codecs. aiortc
offers (VP8 and H.264, or H.264 only via codec preferences): a VP8/Opus room
answers VP8 only, rejects (port 0) an H.264-only video m-line, refuses an
offer with nothing it takes with a JSON 400; a room without a list takes
H.264; bad codec lists get JSON 400."""
import asyncio

from aiortc import RTCPeerConnection, RTCRtpSender

from aiortc_peer import PatternTrack, ToneTrack
from test_room import api, whep_post


async def offer(video_codecs=None, audio=True):
    pc = RTCPeerConnection()
    if audio:
        pc.addTrack(ToneTrack(440.0))
    transceiver = pc.addTransceiver(PatternTrack(), direction="sendonly")
    if video_codecs:
        wanted = [c for c in RTCRtpSender.getCapabilities("video").codecs
                  if c.mimeType.split("/")[1] in video_codecs]
        transceiver.setCodecPreferences(wanted)
    await pc.setLocalDescription(await pc.createOffer())
    return pc, pc.localDescription.sdp


def sections(sdp):
    parts = sdp.split("\r\nm=")
    return {p.split(" ")[0]: "m=" + p for p in parts[1:]}


async def publish_raw(base, room, video_codecs=None, audio=True):
    pc, sdp = await offer(video_codecs, audio)
    status, body, location, content_type = await whep_post(f"{base}/whip/room/{room}", sdp)
    await pc.close()
    return status, body, location, content_type


def test_room_codecs_shape_the_answer(gateway):
    status, room = api(gateway, "POST", "/api/rooms", {"name": "vp8", "codecs": ["opus", "vp8"]})
    assert status == 201 and room["codecs"] == ["opus", "VP8"], room

    async def run():
        base = gateway.base
        # VP8 and H.264 offered: only VP8 answered.
        status, body, location, _ = await publish_raw(base, "vp8")
        assert status == 201, body
        video = sections(body)["video"]
        assert "VP8/90000" in video and "H264" not in video, video
        assert not video.startswith("m=video 0 "), video
        assert "opus/48000" in sections(body)["audio"]
        await api_delete(base + location)
        # H.264 only: the video m-line is rejected, audio accepted.
        status, body, location, _ = await publish_raw(base, "vp8", ["H264"])
        assert status == 201, body
        assert sections(body)["video"].startswith("m=video 0 "), body
        assert not sections(body)["audio"].startswith("m=audio 0 "), body
        await api_delete(base + location)
        # H.264 only and no audio: nothing to accept.
        status, body, _, content_type = await publish_raw(base, "vp8", ["H264"], audio=False)
        assert status == 400 and content_type == "application/json", (status, body)
        # A room without a list takes H.264.
        status, body, location, _ = await publish_raw(base, "anything", ["H264"])
        assert status == 201 and "H264/90000" in sections(body)["video"], body
        await api_delete(base + location)

    asyncio.run(run())
    for bad in (["mp3"], [], "VP8", ["VP8"] * 9, [1], None):
        status, reply = api(gateway, "POST", "/api/rooms", {"name": "bad", "codecs": bad})
        assert status == 400 and reply["error"] == "bad_codecs", (bad, status, reply)
    assert api(gateway, "GET", "/api/rooms/bad")[0] == 404


async def api_delete(url):
    import aiohttp
    async with aiohttp.ClientSession() as http:
        async with http.delete(url) as r:
            assert r.status in (200, 204), r.status
