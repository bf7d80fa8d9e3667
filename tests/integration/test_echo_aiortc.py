"""aiortc (an independent WebRTC stack) publishes a 440 Hz tone and a moving
video pattern to /whip/echo and checks what Moat sends back."""
import asyncio

from aiortc_peer import echo_call


def test_tone_and_video_come_back(gateway):
    result = asyncio.run(echo_call(gateway.base, seconds=6))
    recorders = result["recorders"]
    assert "audio" in recorders and "video" in recorders, f"tracks received: {list(recorders)}"
    audio = recorders["audio"]
    sent = result["sent_audio"]
    assert sent > 200
    ratio = audio.frames / sent
    assert ratio >= 0.90, f"only {audio.frames} of {sent} audio frames came back ({ratio:.1%})"
    frequency = audio.dominant_frequency()
    assert abs(frequency - 440.0) <= 5.0, f"echoed tone is {frequency:.1f} Hz"
    video = recorders["video"]
    assert video.frames >= 30, f"only {video.frames} video frames decoded"
    assert (320, 240) in video.sizes
    assert result["delete_status"] == 200

    m = gateway.metrics()
    assert m["moat_rtp_packets_received_total"] > 200
    assert m["moat_rtp_packets_sent_total"] > 200
    assert m["moat_dtls_handshakes_total"] == 1
    assert m["moat_srtp_auth_failures_total"] == 0
    # The session is gone after DELETE.
    assert m["moat_sessions"] == 0


def test_two_sessions_are_independent(gateway):
    async def both():
        return await asyncio.gather(echo_call(gateway.base, seconds=4),
                                    echo_call(gateway.base, seconds=4))

    first, second = asyncio.run(both())
    for result in (first, second):
        audio = result["recorders"]["audio"]
        assert audio.frames / result["sent_audio"] >= 0.85
        assert abs(audio.dominant_frequency() - 440.0) <= 5.0
    # One session per worker: the two workers share the load.
    assert gateway.metric("moat_dtls_handshakes_total") == 2
