"""Recording: an aiortc peer publishes a 440 Hz tone and video to /whip/echo
while the gateway records the session (started through the API, or for every
session from the configuration); after the hang-up gst-discoverer-1.0 finds
audio and video in the Matroska file and a duration matching the session.
An SRTP+ session (moat-flood's peer, on the gateway's own ICE/DTLS/SRTP+
code) records the same way."""
import asyncio
import json
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request

import aiohttp
import numpy as np
import pytest
from aiortc import RTCRtpSender

from aiortc_peer import echo_call
from conftest import ROOT, Gateway


def request(gateway, method, path):
    req = urllib.request.Request(gateway.base + path, method=method, headers=gateway.auth())
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def wait_recordings_closed(gateway, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if gateway.metric("moat_recordings_active") == 0:
            return
        time.sleep(0.2)
    raise AssertionError("recordings still open")


def discover(path):
    """(duration in seconds, stream lines) from gst-discoverer-1.0."""
    out = subprocess.run(["gst-discoverer-1.0", "-v", str(path)], capture_output=True, text=True,
                         timeout=60).stdout
    m = re.search(r"Duration: (\d+):(\d+):(\d+\.\d+)", out)
    assert m, out
    duration = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    return duration, out


def decode(path, tmp_path):
    """Plays the file: (dominant audio frequency, decoded 320x240 video frames)."""
    audio, video = tmp_path / "audio.raw", tmp_path / "video.raw"
    subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={path}", "!", "matroskademux",
                    "!", "opusdec", "!", "audioconvert", "!", "audioresample", "!",
                    "audio/x-raw,format=S16LE,channels=1,rate=48000", "!", "filesink",
                    f"location={audio}"], check=True, timeout=60)
    subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={path}", "!", "matroskademux",
                    "!", "vp8dec", "!", "videoconvert", "!", "video/x-raw,format=I420", "!",
                    "filesink", f"location={video}"], check=True, timeout=60)
    samples = np.fromfile(audio, dtype=np.int16).astype(np.float64)[24000:]
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    frequency = float(np.fft.rfftfreq(len(samples), 1 / 48000)[np.argmax(spectrum)])
    return frequency, video.stat().st_size // (320 * 240 * 3 // 2)


@pytest.fixture
def recording_gateway(tmp_path):
    # The label names a session to token holders only (a resource id needs no token).
    gw = Gateway(extra_args=["--record-dir", str(tmp_path / "rec"), "--token", "rec-secret"])
    yield gw, tmp_path / "rec"
    assert gw.stop() == 0, f"moat exited badly; log in {gw.log_path}"


def test_api_recording_plays_with_audio_video_and_duration(recording_gateway):
    gateway, folder = recording_gateway
    started = {}

    async def start_recording(pc):
        # Sessions are listed by their public label, which names the file.
        sessions = json.loads(gateway.get("/api/sessions"))["sessions"]
        session_id = sessions[0]["id"]
        async with aiohttp.ClientSession(headers=gateway.auth()) as http:
            async with http.post(f"{gateway.base}/api/sessions/{session_id}/recording") as r:
                assert r.status == 201, await r.text()
                started["file"] = (await r.json())["file"]
            async with http.post(f"{gateway.base}/api/sessions/{session_id}/recording") as r:
                assert r.status == 409
        started["id"] = session_id
        started["at"] = time.time()

    result = asyncio.run(echo_call(gateway.base, seconds=6, on_running=start_recording))
    ended = time.time()  # echo_call returns right after its DELETE (the hang-up)
    audio = result["recorders"]["audio"]
    assert abs(audio.dominant_frequency() - 440.0) <= 5.0  # the echo still works
    wait_recordings_closed(gateway)
    files = list(folder.glob("*.mkv"))
    # The reply names the file relative to the recording folder, never by the
    # server's absolute path.
    assert [f.name for f in files] == [started["file"]]
    name = files[0].name
    assert name.startswith("session-" + started["id"] + "-") and re.search(r"-\d{8}T\d{6}Z-\d+\.mkv$", name)
    duration, out = discover(files[0])
    assert "audio" in out.lower() and "Opus" in out, out
    assert "video" in out.lower() and "VP8" in out, out
    # Media reached the recorder from whichever came later: the API call or the
    # first frame (connection setup may outlast the call).
    expected = ended - max(started["at"], result["audio_started"])
    assert abs(duration - expected) <= 1.0, f"file lasts {duration:.2f} s, session {expected:.2f} s"
    # It plays: the tone is 440 Hz and the video decodes, frame after frame.
    frequency, frames = decode(files[0], folder.parent)
    assert abs(frequency - 440.0) <= 5.0, frequency
    assert frames >= 20 * (expected - 1), frames
    assert gateway.metric('moat_record_dropped_packets_total{reason="queue_full"}') == 0
    # Stopping a recording that is not running, and an unknown session.
    assert request(gateway, "DELETE", f"/api/sessions/{started['id']}/recording")[0] == 404
    assert request(gateway, "POST", "/api/sessions/nosuch/recording")[0] == 404


def test_mid_session_start_asks_for_a_keyframe_and_stop_closes_the_file(recording_gateway,
                                                                         monkeypatch):
    """Recording starts 2 s into the call: the peer gets a PLI right away (its
    encoder's keyframe opens the file's video); DELETE closes the file while
    the session goes on."""
    gateway, folder = recording_gateway
    plis = []
    original = RTCRtpSender._send_keyframe

    def counting(self):
        plis.append(time.monotonic())
        return original(self)

    monkeypatch.setattr(RTCRtpSender, "_send_keyframe", counting)
    stopped = {}

    async def record_three_seconds(pc):
        session_id = json.loads(gateway.get("/api/sessions"))["sessions"][0]["id"]
        await asyncio.sleep(2)
        async with aiohttp.ClientSession(headers=gateway.auth()) as http:
            url = f"{gateway.base}/api/sessions/{session_id}/recording"
            stopped["started"] = time.monotonic()
            async with http.post(url) as r:
                assert r.status == 201
            await asyncio.sleep(3)
            async with http.delete(url) as r:
                assert r.status == 200
                stopped["file"] = (await r.json())["file"]
        # The file closes while the session still runs.
        for _ in range(50):
            if gateway.metric("moat_recordings_active") == 0:
                break
            await asyncio.sleep(0.1)
        stopped["closed"] = gateway.metric("moat_recordings_active") == 0

    asyncio.run(echo_call(gateway.base, seconds=7, on_running=record_three_seconds))
    assert stopped["closed"]
    assert any(0 <= t - stopped["started"] <= 1.0 for t in plis), (plis, stopped["started"])
    duration, out = discover(folder / stopped["file"])
    assert "Opus" in out and "VP8" in out
    assert abs(duration - 3.0) <= 1.0, duration


def test_h264_is_remuxed_too(recording_gateway):
    gateway, folder = recording_gateway
    posted = []

    async def start_recording(pc):
        session_id = json.loads(gateway.get("/api/sessions"))["sessions"][0]["id"]
        async with aiohttp.ClientSession(headers=gateway.auth()) as http:
            async with http.post(f"{gateway.base}/api/sessions/{session_id}/recording") as r:
                assert r.status == 201
        posted.append(time.time())

    result = asyncio.run(echo_call(gateway.base, seconds=4, on_running=start_recording,
                                   video_codec="video/H264"))
    ended = time.time()
    assert "H264" in result["answer"]
    wait_recordings_closed(gateway)
    files = list(folder.glob("*.mkv"))
    duration, out = discover(files[0])
    assert "video/x-h264" in out and "Opus" in out, out
    expected = ended - max(posted[0], result["audio_started"])
    assert abs(duration - expected) <= 1.0, (duration, expected)


FLOOD = ROOT / "build" / "tools" / "moat-flood"


@pytest.mark.parametrize("scheme", ["prn", "chain"])
def test_srtpplus_session_records(tmp_path, scheme):
    """moat-flood is the SRTP+ peer (its Opus payloads are synthetic: the file
    is checked as a container, not decoded). [record] all_sessions records it
    from the start."""
    folder = tmp_path / "rec"
    gateway = Gateway(workers=1, extra_args=["--record-dir", str(folder),
                                             "--record-all-sessions", "true"])
    try:
        result = subprocess.run(
            [str(FLOOD), "--whip", gateway.base + "/whip/echo", "--sessions", "1", "--media",
             "opus", "--srtpplus", scheme, "--duration", "4", "--json", "--quiet"],
            capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["sessions"][0]["srtpplus"] == scheme
        wait_recordings_closed(gateway)
        files = list(folder.glob("*.mkv"))
        assert len(files) == 1, files
        duration, out = discover(files[0])
        assert "Opus" in out, out
        assert abs(duration - 4.0) <= 1.0, duration
        assert gateway.metric('moat_record_dropped_packets_total{reason="queue_full"}') == 0
    finally:
        assert gateway.stop() == 0, f"moat exited badly; log in {gateway.log_path}"


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_shutdown_finishes_open_recordings(tmp_path, stop_signal):
    """SIGTERM (or SIGHUP, which killed the process before) while a session
    records: the gateway ends the session, the recorder finishes the file,
    then the gateway exits cleanly and says so."""
    folder = tmp_path / "rec"
    gateway = Gateway(workers=1, extra_args=["--record-dir", str(folder),
                                             "--record-all-sessions", "true"])
    flood = subprocess.Popen(
        [str(FLOOD), "--whip", gateway.base + "/whip/echo", "--sessions", "1", "--media", "opus",
         "--duration", "20", "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while gateway.metric("moat_rtp_packets_received_total") < 100 and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(2)
        gateway.process.send_signal(stop_signal)
        gateway.process.wait(timeout=15)
        assert gateway.stop() == 0, f"moat exited badly; log in {gateway.log_path}"
    finally:
        flood.kill()
        flood.wait()
    log = gateway.log_text()
    assert f"{stop_signal.name} received, shutting down" in log and "msg=\"stopped\"" in log, log
    files = list(folder.glob("*.mkv"))
    assert len(files) == 1, files
    duration, out = discover(files[0])
    assert "Opus" in out
    assert 1.5 <= duration <= 5.0, duration
    assert "may be incomplete" not in gateway.log_text()
