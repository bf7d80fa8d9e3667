"""RTP ingest: POST /api/rooms/<room>/ingest with the codecs answers a UDP
port; a GStreamer pipeline (440 Hz audiotestsrc through opusenc, videotestsrc
through vp8enc, two udpsinks) sends plain RTP there and becomes the room's
publisher; an aiortc WHEP subscriber hears 440 Hz and decodes the video.
With "srtp" the same pipeline sends SRTP through GStreamer's srtpenc, keyed
with the key Moat's 201 returns. DELETE on the returned resource ends it.
Hostile requests get JSON 4xx (test_ingest_srtp_hostile.py: SRTP's)."""
import asyncio
import base64
import subprocess
import time

import pytest

from test_room import api, check_media, close, subscribe

CODECS = {"audio": {"codec": "opus", "pt": 111}, "video": {"codec": "vp8", "pt": 96}}


# GStreamer srtpenc's names for the SDES suites.
SRTPENC = {"AES_CM_128_HMAC_SHA1_80": ("aes-128-icm", "hmac-sha1-80"),
           "AES_CM_128_HMAC_SHA1_32": ("aes-128-icm", "hmac-sha1-32"),
           "AEAD_AES_128_GCM": ("aes-128-gcm", "null")}


def srtp_stage(srtp):
    """srtpenc keyed as the ingest's 201 said, or nothing for plain RTP."""
    if not srtp:
        return []
    cipher, auth = SRTPENC[srtp["suite"]]
    key = base64.b64decode(srtp["key"]).hex()
    return ["!", "srtpenc", f"key={key}", f"rtp-cipher={cipher}", f"rtp-auth={auth}",
            f"rtcp-cipher={cipher}", f"rtcp-auth={auth}"]


def sender(port, srtp=None):
    return subprocess.Popen(
        ["gst-launch-1.0", "-q",
         "audiotestsrc", "is-live=true", "freq=440", "!", "audioconvert", "!", "audioresample",
         "!", "opusenc", "!", "rtpopuspay", "pt=111", *srtp_stage(srtp), "!", "udpsink",
         "host=127.0.0.1", f"port={port}",
         "videotestsrc", "is-live=true", "!", "video/x-raw,width=320,height=240,framerate=30/1",
         "!", "vp8enc", "deadline=1", "keyframe-max-dist=30", "!", "rtpvp8pay", "pt=96",
         *srtp_stage(srtp), "!", "udpsink", "host=127.0.0.1", f"port={port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.mark.parametrize("suite", [None, "AES_CM_128_HMAC_SHA1_80", "AEAD_AES_128_GCM"],
                         ids=["plain", "srtp", "srtp-gcm"])
def test_gstreamer_ingest_reaches_whep_subscribers(gateway, suite):
    request = dict(CODECS, source="127.0.0.1")
    if suite:
        request["srtp"] = {"suite": suite}
    status, body = api(gateway, "POST", "/api/rooms/live/ingest", request)
    assert status == 201, body
    assert body["rtcp_mux"] is True and body["resource"].startswith("/api/rooms/live/ingest/")
    assert ("srtp" in body) == bool(suite), body
    if suite:
        assert body["srtp"]["suite"] == suite and len(base64.b64decode(body["srtp"]["key"])) == \
            (28 if "GCM" in suite else 30), body
    before = gateway.drops("auth")
    gst = sender(body["port"], body.get("srtp"))
    try:
        async def run():
            deadline = time.time() + 10
            while time.time() < deadline:
                status, room = api(gateway, "GET", "/api/rooms/live")
                if status == 200 and room["publishers"] and room["publishers"][0]["packets"] > 50:
                    break
                await asyncio.sleep(0.2)
            assert room["publisher_count"] == 1, room
            sub = await subscribe(gateway.base, "live")
            await asyncio.sleep(6.0)
            check_media(sub)
            await close(sub)

        asyncio.run(run())
    finally:
        gst.terminate()
        gst.wait(timeout=10)
    assert gateway.drops("auth") == before  # every packet authenticated
    assert api(gateway, "DELETE", body["resource"])[0] == 204
    deadline = time.time() + 5
    while time.time() < deadline:
        status, _ = api(gateway, "GET", "/api/rooms/live")
        if status == 404:
            break
        time.sleep(0.2)
    assert status == 404  # the ingest was the room's only peer
    assert api(gateway, "DELETE", body["resource"])[0] == 404


def test_ingest_refuses_hostile_input(gateway):
    cases = [
        b"{not json",
        b"[]",
        {"audio": {"codec": "mp3", "pt": 111}},
        {"video": {"codec": "vp8", "pt": 300}},
        {"video": {"codec": "opus", "pt": 96}},
        # One payload type for both: video would be taken for Opus.
        {"audio": {"codec": "opus", "pt": 100}, "video": {"codec": "vp8", "pt": 100}},
        {"audio": "opus"},
        {},
        dict(CODECS, source="not-an-address"),
    ]
    for body in cases:
        status, reply = api(gateway, "POST", "/api/rooms/live/ingest", body)
        assert 400 <= status < 500, (body, status, reply)
        assert reply["error"] and reply["status"] == status, reply
    status, reply = api(gateway, "POST", "/api/rooms/a%2Fb/ingest", CODECS)
    assert 400 <= status < 500
    assert api(gateway, "GET", "/api/rooms/live/ingest")[0] == 405
    assert api(gateway, "DELETE", "/api/rooms/live/ingest/nosuch")[0] == 404


def rtp(sequence, ssrc=0x1234, pt=111):
    return bytes([0x80, pt, sequence >> 8, sequence & 0xFF, 0, 0, 0, sequence, ssrc >> 24,
                  (ssrc >> 16) & 0xFF, (ssrc >> 8) & 0xFF, ssrc & 0xFF]) + b"\xfc\xff\xfe"


def publisher_packets(gateway, room):
    status, body = api(gateway, "GET", f"/api/rooms/{room}")
    return body["publishers"][0]["packets"] if status == 200 and body["publishers"] else 0


def wait_for(predicate, timeout=5):
    deadline = time.time() + timeout
    while time.time() < deadline and not predicate():
        time.sleep(0.1)
    return predicate()


def test_source_restriction_and_latching(gateway):
    """Plain RTP has no authentication: "source" names the sender's address;
    without it the first sender's address is latched. Others are dropped and
    counted (unknown_tuple)."""
    import socket
    status, body = api(gateway, "POST", "/api/rooms/guarded/ingest",
                       {"audio": {"codec": "opus", "pt": 111}, "source": "127.0.0.2"})
    assert status == 201, body
    stranger, sender_ = socket.socket(socket.AF_INET, socket.SOCK_DGRAM), \
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stranger.bind(("127.0.0.1", 0))
    sender_.bind(("127.0.0.2", 0))
    before = gateway.drops("unknown_tuple")
    for i in range(20):
        stranger.sendto(rtp(i), ("127.0.0.1", body["port"]))
    assert wait_for(lambda: gateway.drops("unknown_tuple") - before >= 20)
    assert publisher_packets(gateway, "guarded") == 0
    for i in range(20, 40):
        sender_.sendto(rtp(i), ("127.0.0.1", body["port"]))
    assert wait_for(lambda: publisher_packets(gateway, "guarded") == 20)
    assert api(gateway, "DELETE", body["resource"])[0] == 204

    # No "source": the first sender (127.0.0.2) is latched, 127.0.0.1 is not.
    status, body = api(gateway, "POST", "/api/rooms/latched/ingest",
                       {"audio": {"codec": "opus", "pt": 111}})
    assert status == 201, body
    for i in range(10):
        sender_.sendto(rtp(i), ("127.0.0.1", body["port"]))
    assert wait_for(lambda: publisher_packets(gateway, "latched") == 10)
    before = gateway.drops("unknown_tuple")
    for i in range(10, 20):
        stranger.sendto(rtp(i), ("127.0.0.1", body["port"]))
    assert wait_for(lambda: gateway.drops("unknown_tuple") - before >= 10)
    assert publisher_packets(gateway, "latched") == 10
    stranger.close()
    sender_.close()
