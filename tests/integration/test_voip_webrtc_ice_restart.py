"""An ICE restart by a WebRTC caller in a call to a phone (what a browser
does after a network change: `restartIce()`, a re-INVITE through the
proxy): Moat restarts ICE in the caller's running session with new local
credentials (DTLS and SRTP go on, as for WHIP) and answers with them, the
fingerprint unchanged. Headless Chromium is the caller (a WebAudio 660 Hz
oscillator as its microphone), a PCMU phone (a UDP socket) the callee;
media must flow both ways before and after the restart, in one session.
Before, the re-offer made a new session whose DTLS the browser never
started."""
import asyncio
import errno
import json
import re
import threading

import pytest

from chromium import Chromium, chromium_path
from test_voip_transcode import udp, voip  # noqa: F401 (fixture)
from test_voip_webrtc import phone_answer, run_phone
from test_voip_webrtc_to_webrtc import page_loaded

pytestmark = pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")

OFFER = """
(async () => {
  const audio = new AudioContext();
  const tone = audio.createOscillator();
  tone.frequency.value = 660;
  const out = audio.createMediaStreamDestination();
  tone.connect(out);
  tone.start();
  const pc = new RTCPeerConnection();
  window.pc = pc;
  pc.addTrack(out.stream.getAudioTracks()[0], out.stream);
  await pc.setLocalDescription(await pc.createOffer());
  return pc.localDescription.sdp;
})()
"""

RESTART = """
(async () => {
  window.pc.restartIce();
  await window.pc.setLocalDescription(await window.pc.createOffer());
  return window.pc.localDescription.sdp;
})()
"""

RECEIVED = """
(async () => {
  let n = 0;
  (await window.pc.getStats()).forEach(s => {
    if (s.type === 'inbound-rtp' && s.kind === 'audio') n = s.packetsReceived;
  });
  return n;
})()
"""

FLAGS = dict(transport_protocol="RTP/AVP", ICE="remove", DTLS="off",
             codec={"transcode": ["PCMU"]})
BACK = dict(ICE="force", DTLS="passive", transport_protocol="UDP/TLS/RTP/SAVPF")


def attribute(sdp, name):
    return re.search(rf"^a={name}:(.*)$", sdp, re.M).group(1).strip()


async def talk(browser, phone, port):
    """3 s of the phone's PCMU; (PCMU packets the phone got, packets
    Chromium received meanwhile)."""
    before = await browser.evaluate(RECEIVED)
    received, stop = [], threading.Event()
    thread = threading.Thread(target=run_phone, args=(phone, port, received, stop))
    thread.start()
    try:
        await asyncio.sleep(3)
    finally:
        stop.set()
        await asyncio.get_running_loop().run_in_executor(None, thread.join)
    pcmu = [p for p in received if len(p) > 12 and p[1] & 0x7F == 0]
    return len(pcmu), await browser.evaluate(RECEIVED) - before


async def call_step(browser, client, script, phone):
    offer_sdp = await browser.evaluate(script)
    offer = client.command("offer", call_id="ir-1", from_tag="chromium", sdp=offer_sdp, **FLAGS)
    assert offer["result"] == "ok", offer
    answer = client.command("answer", call_id="ir-1", from_tag="chromium", to_tag="phone",
                            sdp=phone_answer(phone.getsockname()[1]), **BACK)
    assert answer["result"] == "ok", answer
    await browser.evaluate(
        f"window.pc.setRemoteDescription({{type: 'answer', sdp: {json.dumps(answer['sdp'])}}})")
    return offer_sdp, offer["sdp"], answer["sdp"]


def test_chromium_restarts_ice_in_a_call(voip):
    gw, client = voip
    phone = udp()

    async def scenario():
        browser = Chromium(gw.base + "/healthz",
                           extra_flags=["--autoplay-policy=no-user-gesture-required"])
        try:
            await browser.attach()
            await page_loaded(browser, "/healthz")
            first_offer, to_phone, first = await call_step(browser, client, OFFER, phone)
            port = int(re.search(r"^m=audio (\d+) ", to_phone, re.M).group(1))
            before = await talk(browser, phone, port)
            restart_offer, _, second = await call_step(browser, client, RESTART, phone)
            after = await talk(browser, phone, port)
            sessions = gw.metric("moat_sessions")
            return first_offer, restart_offer, first, second, before, after, sessions
        finally:
            try:
                await browser.close_async()
            except OSError as error:
                if error.errno != errno.ENOTEMPTY:
                    raise

    first_offer, restart_offer, first, second, before, after, sessions = asyncio.run(scenario())
    assert attribute(restart_offer, "ice-ufrag") != attribute(first_offer, "ice-ufrag")
    assert attribute(second, "ice-ufrag") != attribute(first, "ice-ufrag"), second
    assert attribute(second, "fingerprint") == attribute(first, "fingerprint")
    assert sessions == 1
    for label, (phone_got, chromium_got) in (("before", before), ("after", after)):
        assert phone_got > 50 and chromium_got > 50, (label, phone_got, chromium_got)
    assert client.command("delete", call_id="ir-1", delete_delay=0)["result"] == "ok"
