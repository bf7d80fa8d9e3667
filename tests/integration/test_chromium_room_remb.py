"""Headless Chromium publishing its fake camera on the room demo page
(web/room.html) follows the room's REMB: in a room created with
max_bitrate 150 kbit/s its video send rate (getStats bytesSent) stays far
below that of the same publisher in a room without a cap. Rates are printed;
the machine is shared, so only the order and a generous bound are asserted."""
import asyncio

import pytest

from chromium import Chromium, chromium_path
from test_room import api

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")

BYTES_SENT = """(async () => {
  if (!window.moatRoom || !window.moatRoom.pc) return 0;
  const report = await window.moatRoom.pc.getStats();
  let bytes = 0;
  report.forEach((s) => { if (s.type === 'outbound-rtp' && s.kind === 'video') bytes += s.bytesSent; });
  return bytes;
})()"""


async def video_rate(browser, seconds=4.0):
    before = await browser.evaluate(BYTES_SENT)
    await asyncio.sleep(seconds)
    return (await browser.evaluate(BYTES_SENT) - before) * 8 / seconds


def test_chromium_publisher_follows_the_room_cap(gateway):
    assert api(gateway, "POST", "/api/rooms", {"name": "cap", "max_bitrate": 150000})[0] == 201

    async def scenario():
        capped = Chromium(gateway.base + "/room.html?room=cap&publish=1")
        free = Chromium(gateway.base + "/room.html?room=nocap&publish=1")
        try:
            await capped.attach()
            await free.attach()
            for browser in (capped, free):
                assert await browser.wait_for(BYTES_SENT, 15), "no video sent"
            await asyncio.sleep(8.0)  # the free one ramps up, the capped one comes down
            capped_rate, free_rate = await asyncio.gather(video_rate(capped), video_rate(free))
            print(f"chromium video send rate capped={capped_rate:.0f} free={free_rate:.0f} bit/s")
            _, room = api(gateway, "GET", "/api/rooms/cap")
            assert room["publishers"][0]["remb_sent"] > 0, room
            assert room["publishers"][0]["remb_bitrate"] == 150000, room
            assert capped_rate < 150000 * 1.5, capped_rate
            assert capped_rate < free_rate, (capped_rate, free_rate)
        finally:
            await capped.close_async()
            await free.close_async()

    asyncio.run(scenario())
