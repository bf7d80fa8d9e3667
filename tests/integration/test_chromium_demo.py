"""Headless Chromium opens the demo page, which publishes its fake camera and
microphone to /whip/echo; the page's getStats must show decoded echoed video
and received audio. Then an ICE restart over WHIP PATCH keeps media flowing
without a new DTLS handshake."""
import asyncio

import pytest

from chromium import Chromium, chromium_path
from conftest import ARTIFACTS

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")

STATS = "window.moatDemo && window.moatDemo.stats"
VIDEO_DECODED = "(window.moatDemo.stats['in video frames decoded'] || 0)"
AUDIO_BYTES = "(window.moatDemo.stats['in audio bytes'] || 0)"

# Restart ICE the way a WHIP client does (RFC 9725 §4.4.1): a new offer's
# credentials go out in a PATCH; the reply's credentials replace the
# answer's.
ICE_RESTART = """
(async () => {
  const demo = window.moatDemo;
  const pc = demo.pc;
  pc.restartIce();
  const offer = await pc.createOffer();
  await pc.setLocalDescription(offer);
  const ufrag = offer.sdp.match(/a=ice-ufrag:(.*)\\r\\n/)[1];
  const pwd = offer.sdp.match(/a=ice-pwd:(.*)\\r\\n/)[1];
  const frag = 'a=ice-ufrag:' + ufrag + '\\r\\na=ice-pwd:' + pwd + '\\r\\n';
  const r = await fetch(demo.whip.resource, {method: 'PATCH',
      headers: {'Content-Type': 'application/trickle-ice-sdpfrag', 'If-Match': '*'}, body: frag});
  const body = await r.text();
  if (r.status !== 200) return 'PATCH ' + r.status + ' ' + body;
  const newUfrag = body.match(/a=ice-ufrag:(.*)\\r?\\n/)[1];
  const newPwd = body.match(/a=ice-pwd:(.*)\\r?\\n/)[1];
  const answer = pc.remoteDescription.sdp
      .replace(/a=ice-ufrag:.*\\r\\n/g, 'a=ice-ufrag:' + newUfrag + '\\r\\n')
      .replace(/a=ice-pwd:.*\\r\\n/g, 'a=ice-pwd:' + newPwd + '\\r\\n');
  await pc.setRemoteDescription({type: 'answer', sdp: answer});
  return 'ok ' + newUfrag;
})()
"""


def test_demo_page_echoes_and_survives_ice_restart(gateway):
    async def scenario():
        browser = Chromium(gateway.base + "/?autostart=1")
        try:
            await browser.attach()
            decoded = await browser.wait_for(f"{STATS} && {VIDEO_DECODED} > 0 && {AUDIO_BYTES} > 0 && {VIDEO_DECODED}", 10)
            stats = await browser.evaluate(STATS)
            assert decoded, f"no echoed media within 10 s; page stats: {stats}"
            await browser.screenshot(ARTIFACTS / "demo-page.png")
            assert gateway.metric("moat_dtls_handshakes_total") == 1

            result = await browser.evaluate(ICE_RESTART)
            assert result.startswith("ok "), result
            new_ufrag = result.split()[1]
            before = await browser.evaluate(VIDEO_DECODED)
            # Media keeps flowing after the restart...
            later = await browser.wait_for(f"{VIDEO_DECODED} > {before} + 30 && {VIDEO_DECODED}", 10)
            assert later, "video stopped after the ICE restart"
            # ...on the new credentials, with the original DTLS session.
            await asyncio.sleep(1.5)
            assert gateway.metric("moat_dtls_handshakes_total") == 1
            assert "ICE restart complete" in gateway.log_text()
            assert new_ufrag
            await browser.screenshot(ARTIFACTS / "demo-page-after-restart.png")
        finally:
            await browser.close_async()

    asyncio.run(scenario())
