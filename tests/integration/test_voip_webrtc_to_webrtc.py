"""WebRTC to WebRTC through the ng protocol, as Kamailio drives a call
between two SIP-over-WebSocket clients with rtpengine_manage() and ICE=force,
DTLS=passive, UDP/TLS/RTP/SAVPF both ways: the caller's offer gets a
session of its own (Moat answers it), the callee gets Moat's own WebRTC
offer and its answer a second session; Moat relays the decrypted RTP
between them (no transcoding: both speak Opus). Two aiortc peers, 440 Hz
and 660 Hz: each must hear the other's tone, also after the caller held and
resumed the call (re-INVITEs keep both sessions); delete ends both.
aiortc also calls headless Chromium."""
import asyncio
import errno
import json
import re

import pytest
from aiortc import RTCSessionDescription

from chromium import Chromium, chromium_path
from test_voip_transcode import voip  # noqa: F401 (fixture)
from test_voip_webrtc import wait_sessions_gone, webrtc_offer
from test_voip_webrtc_callee import webrtc_answer

SECONDS = 6
WEBRTC = {"ICE": "force", "DTLS": "passive", "transport_protocol": "UDP/TLS/RTP/SAVPF"}


def heard(tracks):
    """What the newest received track (a hold may end one) heard."""
    return tracks[-1].dominant_frequency(skip_seconds=1.0) if tracks and tracks[-1].samples else 0


def ice_ufrag(sdp):
    return re.search(r"^a=ice-ufrag:(\S+)", sdp, re.M).group(1)


def test_webrtc_client_calls_webrtc_client(voip):
    gw, client = voip

    async def scenario():
        caller, caller_tracks = await webrtc_offer(True)
        offer = client.command("offer", call_id="ww-1", from_tag="alice",
                               sdp=caller.localDescription.sdp, **WEBRTC)
        assert offer["result"] == "ok", offer
        sdp = offer["sdp"]
        # The callee gets Moat's own offer: its ICE-lite and fingerprint,
        # not the caller's.
        for present in ("a=ice-lite", "a=fingerprint:sha-256 ", "a=setup:passive",
                        "UDP/TLS/RTP/SAVPF", "opus/48000/2"):
            assert present in sdp, (present, sdp)
        caller_fingerprint = re.search(r"^a=fingerprint:(.*)$", caller.localDescription.sdp,
                                       re.M).group(1).strip()
        assert caller_fingerprint not in sdp
        callee, callee_tracks = await webrtc_answer(sdp, 660.0)
        answer = client.command("answer", call_id="ww-1", from_tag="alice", to_tag="bob",
                                sdp=callee.localDescription.sdp, **WEBRTC)
        assert answer["result"] == "ok", answer
        back = answer["sdp"]
        assert "a=ice-lite" in back and "a=fingerprint:sha-256" in back, back
        assert "a=setup:passive" in back, back
        await caller.setRemoteDescription(RTCSessionDescription(sdp=back, type="answer"))
        await asyncio.sleep(SECONDS / 2)
        # The caller holds and resumes (two re-INVITEs through the proxy):
        # both sessions go on, each party gets what it has of Moat.
        for how in ("sendonly", "sendrecv"):
            caller.getTransceivers()[0].direction = how
            await caller.setLocalDescription(await caller.createOffer())
            again = client.command("offer", call_id="ww-1", from_tag="alice",
                                   sdp=caller.localDescription.sdp, **WEBRTC)
            assert again["result"] == "ok", again
            assert ice_ufrag(again["sdp"]) == ice_ufrag(sdp), again["sdp"]
            await callee.setRemoteDescription(RTCSessionDescription(sdp=again["sdp"],
                                                                    type="offer"))
            await callee.setLocalDescription(await callee.createAnswer())
            answer = client.command("answer", call_id="ww-1", from_tag="alice", to_tag="bob",
                                    sdp=callee.localDescription.sdp, **WEBRTC)
            assert answer["result"] == "ok", answer
            assert ice_ufrag(answer["sdp"]) == ice_ufrag(back), answer["sdp"]
            await caller.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"],
                                                                    type="answer"))
        await asyncio.sleep(SECONDS)
        sessions = gw.metric("moat_sessions")
        legs = gw.metric("moat_call_webrtc_legs")
        query = client.command("query", call_id="ww-1")
        result = heard(caller_tracks), heard(callee_tracks), sessions, legs, query
        await caller.close()
        await callee.close()
        return result

    caller_heard, callee_heard, sessions, legs, query = asyncio.run(scenario())
    assert abs(callee_heard - 440) < 15, callee_heard
    assert abs(caller_heard - 660) < 15, caller_heard
    assert sessions == 2 and legs == 2, (sessions, legs)
    assert query["result"] == "ok", query
    for tag in ("alice", "bob"):
        assert query["tags"][tag]["medias"][0]["protocol"] == "UDP/TLS/RTP/SAVPF", query
    assert client.command("delete", call_id="ww-1", delete_delay=0)["result"] == "ok"
    assert gw.metric("moat_call_webrtc_legs") == 0
    wait_sessions_gone(gw)


CHROMIUM_ANSWER = """
(async () => {
  const audio = new AudioContext();
  const tone = audio.createOscillator();
  tone.frequency.value = 660;
  const out = audio.createMediaStreamDestination();
  tone.connect(out);
  tone.start();
  const pc = new RTCPeerConnection();
  window.pc = pc;
  window.peak = [];
  pc.ontrack = (event) => {
    // Remote audio reaches WebAudio only while a media element plays it.
    const element = new Audio();
    element.muted = true;
    element.srcObject = event.streams[0] || new MediaStream([event.track]);
    element.play();
    const analyser = audio.createAnalyser();
    analyser.fftSize = 8192;
    audio.createMediaStreamSource(new MediaStream([event.track])).connect(analyser);
    const bins = new Float32Array(analyser.frequencyBinCount);
    setInterval(() => {
      analyser.getFloatFrequencyData(bins);
      let best = 0;
      for (let i = 1; i < bins.length; i++) if (bins[i] > bins[best]) best = i;
      window.peak.push([best * audio.sampleRate / analyser.fftSize, bins[best]]);
    }, 200);
  };
  await pc.setRemoteDescription({type: 'offer', sdp: OFFER});
  const transceiver = pc.getTransceivers()[0];
  transceiver.direction = 'sendrecv';
  await transceiver.sender.replaceTrack(out.stream.getAudioTracks()[0]);
  await pc.setLocalDescription(await pc.createAnswer());
  return pc.localDescription.sdp;
})()
"""

CHROMIUM_STATS = """
(async () => {
  const report = await window.pc.getStats();
  const out = {};
  report.forEach(s => {
    if (s.type === 'inbound-rtp' && s.kind === 'audio') out.received = s.packetsReceived;
    if (s.type === 'outbound-rtp' && s.kind === 'audio') out.sent = s.packetsSent;
  });
  const loud = window.peak.filter(p => p[1] > -70).map(p => p[0]);
  out.peaks = loud.slice(-10);
  return JSON.stringify(out);
})()
"""


async def page_loaded(browser, path):
    """Until the page Chromium was started on has loaded (evaluating while
    it navigates away from about:blank fails)."""
    for _ in range(100):
        try:
            if await browser.evaluate(f"location.pathname === {json.dumps(path)} && "
                                      "document.readyState === 'complete'"):
                return
        except RuntimeError:
            pass  # the execution context went with the navigation
        await asyncio.sleep(0.1)
    raise RuntimeError(f"chromium did not load {path}")


@pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")
def test_aiortc_calls_chromium(voip):
    """The callee is headless Chromium (its own WebRTC stack, a 660 Hz
    WebAudio oscillator as its microphone): aiortc hears 660 Hz, and
    Chromium's analyser finds aiortc's 440 Hz in what it receives."""
    gw, client = voip

    async def scenario():
        browser = Chromium(gw.base + "/healthz", extra_flags=["--autoplay-policy=no-user-gesture-required"])
        caller = None
        try:
            await browser.attach()
            await page_loaded(browser, "/healthz")
            caller, caller_tracks = await webrtc_offer(True)
            offer = client.command("offer", call_id="wc-1", from_tag="aiortc",
                                   sdp=caller.localDescription.sdp, **WEBRTC)
            assert offer["result"] == "ok", offer
            script = CHROMIUM_ANSWER.replace("OFFER", json.dumps(offer["sdp"]))
            answer_sdp = await browser.evaluate(script)
            answer = client.command("answer", call_id="wc-1", from_tag="aiortc",
                                    to_tag="chromium", sdp=answer_sdp, **WEBRTC)
            assert answer["result"] == "ok", answer
            await caller.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"],
                                                                    type="answer"))
            await asyncio.sleep(SECONDS)
            stats = json.loads(await browser.evaluate(CHROMIUM_STATS))
            return heard(caller_tracks), stats
        finally:
            if caller:
                await caller.close()
            try:
                await browser.close_async()
            except OSError as error:
                if error.errno != errno.ENOTEMPTY:
                    raise

    caller_heard, stats = asyncio.run(scenario())
    assert stats.get("sent", 0) > 100 and stats.get("received", 0) > 100, stats
    assert abs(caller_heard - 660) < 15, (caller_heard, stats)
    peaks = stats["peaks"]
    assert peaks and all(abs(p - 440) < 15 for p in peaks), stats
    assert client.command("delete", call_id="wc-1", delete_delay=0)["result"] == "ok"
    assert gw.metric("moat_call_webrtc_legs") == 0
