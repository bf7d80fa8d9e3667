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
