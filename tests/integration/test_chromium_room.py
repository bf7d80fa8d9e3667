"""Headless Chromium on the room demo page (web/room.html): one browser
publishes its fake camera and microphone to /whip/room/<room>, another
watches through /whep/room/<room>; the watcher's getStats shows decoded
video and received audio."""
import asyncio

import pytest

from chromium import Chromium, chromium_path
from conftest import ARTIFACTS

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")

STATS = "window.moatRoom && window.moatRoom.stats"
DECODED = "(window.moatRoom.stats['in video frames decoded'] || 0)"
AUDIO = "(window.moatRoom.stats['in audio bytes'] || 0)"
SENT = "(window.moatRoom.stats['out video packets'] || 0)"


def test_room_page_publish_and_watch(gateway):
    async def scenario():
        publisher = Chromium(gateway.base + "/room.html?room=web&publish=1")
        watcher = None
        try:
            await publisher.attach()
            sent = await publisher.wait_for(f"{STATS} && {SENT} > 0 && {SENT}", 10)
            assert sent, f"the publisher sent nothing: {await publisher.evaluate(STATS)}"
            watcher = Chromium(gateway.base + "/room.html?room=web&watch=1")
            await watcher.attach()
            decoded = await watcher.wait_for(
                f"{STATS} && {DECODED} > 30 && {AUDIO} > 0 && {DECODED}", 15)
            stats = await watcher.evaluate(STATS)
            assert decoded, f"the watcher decoded no video within 15 s: {stats}"
            await watcher.screenshot(ARTIFACTS / "room-page-watcher.png")
        finally:
            if watcher:
                await watcher.close_async()
            await publisher.close_async()

    asyncio.run(scenario())
