"""Recording a room: POST /api/rooms/<room>/recording records the room's
current publisher (an aiortc peer publishing a 440 Hz tone and video with
WHIP); DELETE closes the file, which is named by room, publisher and UTC
start. gst-discoverer-1.0 finds audio and video and a duration matching the
time between the two calls; the tone decodes at 440 Hz."""
import asyncio
import re
import time

import pytest

from conftest import Gateway
from test_record import decode, discover, wait_recordings_closed
from test_room import api, close, publish


@pytest.fixture
def recording_gateway(tmp_path):
    gw = Gateway(extra_args=["--record-dir", str(tmp_path / "rec")])
    yield gw, tmp_path / "rec"
    assert gw.stop() == 0, f"moat exited badly; log in {gw.log_path}"


def test_room_recording_records_the_publisher(recording_gateway):
    gateway, folder = recording_gateway
    times = {}

    async def run():
        pub = await publish(gateway.base, "studio")
        deadline = time.time() + 10
        while time.time() < deadline:
            status, room = api(gateway, "GET", "/api/rooms/studio")
            if status == 200 and room["publishers"] and room["publishers"][0]["packets"] > 100:
                break
            await asyncio.sleep(0.2)
        label = room["publishers"][0]["id"]
        status, body = api(gateway, "POST", "/api/rooms/studio/recording")
        times["start"] = time.time()
        assert status == 201, body
        times["file"] = body["file"]
        times["label"] = label
        assert api(gateway, "POST", "/api/rooms/studio/recording")[0] == 409
        await asyncio.sleep(5)
        status, body = api(gateway, "DELETE", "/api/rooms/studio/recording")
        times["stop"] = time.time()
        assert status == 200, body
        assert body["file"] == times["file"]
        assert api(gateway, "DELETE", "/api/rooms/studio/recording")[0] == 404
        await close(pub)

    asyncio.run(run())
    wait_recordings_closed(gateway)
    files = list(folder.glob("*.mkv"))
    assert [f.name for f in files] == [times["file"]]  # relative to the recording folder
    name = files[0].name
    assert name.startswith(f"room-studio-{times['label']}-"), name
    assert re.search(r"-\d{8}T\d{6}Z-\d+\.mkv$", name), name
    duration, out = discover(files[0])
    assert "audio" in out.lower() and "Opus" in out, out
    assert "video" in out.lower() and "VP8" in out, out
    expected = times["stop"] - times["start"]
    assert abs(duration - expected) <= 1.0, f"file lasts {duration:.2f} s, recorded {expected:.2f} s"
    frequency, frames = decode(files[0], folder.parent)
    assert abs(frequency - 440.0) <= 5.0, frequency
    assert frames >= 20 * (expected - 1), frames


def test_room_recording_refusals(recording_gateway):
    gateway, _ = recording_gateway
    # No such room, a room without a publisher, a nested path, a bad method.
    status, body = api(gateway, "POST", "/api/rooms/nosuch/recording")
    assert status == 404 and body["error"] == "no_publisher", body
    assert api(gateway, "POST", "/api/rooms", {"name": "empty"})[0] == 201
    assert api(gateway, "POST", "/api/rooms/empty/recording")[0] == 404
    assert api(gateway, "DELETE", "/api/rooms/empty/recording")[0] == 404
    assert api(gateway, "POST", "/api/rooms/a/b/recording")[0] == 404
    assert api(gateway, "POST", "/api/rooms/../recording")[0] in (400, 404)

    async def run():
        pub = await publish(gateway.base, "empty")
        await asyncio.sleep(0.5)
        status, body = api(gateway, "GET", "/api/rooms/empty/recording")
        assert status == 405 and body["error"] == "method_not_allowed", body
        await close(pub)

    asyncio.run(run())


def test_recording_of_several_layers_keeps_the_largest(recording_gateway):
    """An ingest sender with three VP8 SSRCs on one payload type (simulcast
    layers 640x480 at 1 Mbit/s, 320x240 at 300 kbit/s, 160x120 at 100
    kbit/s): the recording's one video track is the largest layer alone
    (before, all three went into it and it decoded at whichever size the
    decoder met last)."""
    import subprocess
    gateway, folder = recording_gateway
    status, body = api(gateway, "POST", "/api/rooms/layers/ingest",
                       {"video": {"codec": "vp8", "pt": 96}})
    assert status == 201, body
    args = []
    for i, (w, h, rate) in enumerate([(640, 480, 1000000), (320, 240, 300000),
                                      (160, 120, 100000)]):
        args += ["videotestsrc", "is-live=true", "pattern=ball", "!",
                 f"video/x-raw,width={w},height={h},framerate=30/1", "!", "vp8enc",
                 f"target-bitrate={rate}", "deadline=1", "keyframe-max-dist=30", "!",
                 "rtpvp8pay", "pt=96", f"ssrc={i + 1}", "!", "udpsink", "host=127.0.0.1",
                 f"port={body['port']}"]
    sender = subprocess.Popen(["gst-launch-1.0", "-q", *args], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        status, started = api(gateway, "POST", "/api/rooms/layers/recording")
        assert status == 201, started
        time.sleep(4)
        assert api(gateway, "DELETE", "/api/rooms/layers/recording")[0] == 200
    finally:
        sender.terminate()
        sender.wait(timeout=10)
    wait_recordings_closed(gateway)
    path = folder / started["file"]
    out = subprocess.run(["gst-launch-1.0", "-m", "filesrc", f"location={path}", "!",
                          "matroskademux", "!", "vp8dec", "!", "fakesink", "-v"],
                         capture_output=True, text=True, timeout=60).stdout
    widths = set(re.findall(r"width=\(int\)(\d+)", out))
    assert widths == {"640"}, widths
