"""transport-cc toward publishers: headless Chromium publishing its fake
camera on the room demo page (web/room.html) negotiates the transport-wide
sequence number extension and transport-cc feedback with the gateway, and
the gateway sends it transport-wide feedback (RTCP RTPFB FMT 15) for what it
receives, as any SFU does: moat_transport_cc_feedback_total grows by about
twenty a second, and Chromium's send-side estimator, which then runs on that
feedback, reports an available outgoing bitrate and keeps sending video."""
import asyncio
import time

import pytest

from chromium import Chromium, chromium_path

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")

STATS = """(async () => {
  if (!window.moatRoom || !window.moatRoom.pc) return null;
  const report = await window.moatRoom.pc.getStats();
  let bytes = 0, available = 0;
  report.forEach((s) => {
    if (s.type === 'outbound-rtp' && s.kind === 'video') bytes += s.bytesSent;
    if (s.type === 'candidate-pair' && s.nominated && s.availableOutgoingBitrate)
      available = s.availableOutgoingBitrate;
  });
  const sdp = window.moatRoom.pc.remoteDescription ? window.moatRoom.pc.remoteDescription.sdp : '';
  return {bytes, available, twcc: sdp.includes('transport-wide-cc') && sdp.includes('transport-cc')};
})()"""


def test_chromium_publisher_gets_transport_wide_feedback(gateway):
    async def scenario():
        browser = Chromium(gateway.base + "/room.html?room=twcc&publish=1")
        try:
            await browser.attach()
            bytes_sent = """(async () => { const s = await (%s); return s && s.bytes; })()""" % STATS
            assert await browser.wait_for(bytes_sent, 15), "no video sent"
            first = await browser.evaluate(STATS)
            before = gateway.metric("moat_transport_cc_feedback_total")
            start = time.monotonic()
            await asyncio.sleep(4.0)
            after = gateway.metric("moat_transport_cc_feedback_total")
            elapsed = time.monotonic() - start
            last = await browser.evaluate(STATS)
            rate = (after - before) / elapsed
            print(f"transport-cc feedback {rate:.1f}/s; chromium available outgoing "
                  f"{last['available']:.0f} bit/s, sent {last['bytes'] - first['bytes']} bytes")
            assert first["twcc"], "the answer did not take transport-cc"
            assert rate >= 5, rate  # every 50 ms while media flows
            assert last["bytes"] > first["bytes"]
            assert last["available"] > 0
        finally:
            await browser.close_async()

    asyncio.run(scenario())
