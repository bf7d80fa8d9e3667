"""An aiortc peer that publishes through WHIP: a 440 Hz tone and a moving
video pattern, and records what the gateway sends back."""
import asyncio
import fractions
import math
import time
from urllib.parse import urljoin

import aiohttp
import numpy as np
from aiortc import RTCConfiguration, RTCIceServer, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import AudioStreamTrack, MediaStreamError, VideoStreamTrack
from av import AudioFrame, VideoFrame

AUDIO_RATE = 48000
AUDIO_SAMPLES = 960  # 20 ms


class ToneTrack(AudioStreamTrack):
    """A 440 Hz sine, 20 ms frames, paced in real time."""

    def __init__(self, frequency=440.0):
        super().__init__()
        self.frequency = frequency
        self.sent = 0
        self._start = None

    async def recv(self):
        if self._start is None:
            self._start = time.time()
        pts = self.sent * AUDIO_SAMPLES
        wait = self._start + self.sent * AUDIO_SAMPLES / AUDIO_RATE - time.time()
        if wait > 0:
            await asyncio.sleep(wait)
        t = (np.arange(AUDIO_SAMPLES) + pts) / AUDIO_RATE
        samples = (0.5 * 32767 * np.sin(2 * math.pi * self.frequency * t)).astype(np.int16)
        frame = AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = AUDIO_RATE
        frame.pts = pts
        frame.time_base = fractions.Fraction(1, AUDIO_RATE)
        self.sent += 1
        return frame


class PatternTrack(VideoStreamTrack):
    """A moving gradient, 320x240 at the default 30 fps."""

    def __init__(self):
        super().__init__()
        self.sent = 0

    async def recv(self):
        pts, time_base = await self.next_timestamp()
        x = np.arange(320, dtype=np.uint16)
        y = np.arange(240, dtype=np.uint16)[:, None]
        shift = self.sent * 4
        image = np.zeros((240, 320, 3), dtype=np.uint8)
        image[:, :, 0] = ((x + shift) % 256).astype(np.uint8)
        image[:, :, 1] = ((y + shift) % 256).astype(np.uint8)
        image[:, :, 2] = 128
        frame = VideoFrame.from_ndarray(image, format="rgb24")
        frame.pts = pts
        frame.time_base = time_base
        self.sent += 1
        return frame


class Recorder:
    """Consumes a received track, keeping audio samples or counting frames."""

    def __init__(self, track):
        self.track = track
        self.frames = 0
        self.samples = []
        self.sample_rate = None
        self.sizes = set()
        self.last_size = None
        self.task = asyncio.ensure_future(self._run())

    async def _run(self):
        try:
            while True:
                frame = await self.track.recv()
                self.frames += 1
                if self.track.kind == "audio":
                    data = frame.to_ndarray()
                    channels = len(frame.layout.channels)
                    mono = data.reshape(-1, channels)[:, 0] if frame.format.is_packed else data[0]
                    self.samples.append(mono.astype(np.float64))
                    self.sample_rate = frame.sample_rate
                else:
                    self.sizes.add((frame.width, frame.height))
                    self.last_size = (frame.width, frame.height)
                    frame.to_ndarray(format="rgb24")  # proves it decodes
        except (MediaStreamError, asyncio.CancelledError):
            pass

    def dominant_frequency(self, skip_seconds=0.5):
        audio = np.concatenate(self.samples)
        audio = audio[int(skip_seconds * self.sample_rate):]
        window = np.hanning(len(audio))
        spectrum = np.abs(np.fft.rfft(audio * window))
        freqs = np.fft.rfftfreq(len(audio), 1.0 / self.sample_rate)
        return float(freqs[np.argmax(spectrum)])


async def whip_publish(pc, url, token=None, mangle_offer=None, links=None, ssl=None):
    """POST the offer; returns (resource URL, answer SDP). The answer's Link
    headers are appended to `links` when it is a list. `ssl`: the SSL
    context an https URL is checked with (None: the system's)."""
    await pc.setLocalDescription(await pc.createOffer())
    offer = pc.localDescription.sdp
    if mangle_offer:
        offer = mangle_offer(offer)
    headers = {"Content-Type": "application/sdp"}
    if token:
        headers["Authorization"] = "Bearer " + token
    async with aiohttp.ClientSession() as http:
        async with http.post(url, data=offer, headers=headers, ssl=ssl) as r:
            body = await r.text()
            assert r.status == 201, f"WHIP answered {r.status}: {body}"
            location = r.headers["Location"]
            if links is not None:
                links.extend(r.headers.getall("Link", []))
    await pc.setRemoteDescription(RTCSessionDescription(sdp=body, type="answer"))
    return urljoin(url, location), body


async def whip_delete(resource, ssl=None):
    async with aiohttp.ClientSession() as http:
        async with http.delete(resource, ssl=ssl) as r:
            return r.status


def ice_connections(pc):
    """The aioice connections under a peer connection's transceivers."""
    return [t.sender.transport.transport.iceGatherer._connection for t in pc.getTransceivers()]


def relay_only(pc):
    """iceTransportPolicy "relay": aiortc 1.9's RTCConfiguration has no
    iceTransportPolicy, but its ICE library (aioice) has the policy; set it on
    every gatherer before the offer gathers candidates."""
    from aioice import TransportPolicy
    for connection in ice_connections(pc):
        connection._transport_policy = TransportPolicy.RELAY


async def echo_call(base, seconds, audio=True, video=True, on_running=None, ice_servers=None,
                    relay=False, path="/whip/echo", video_codec=None, ssl=None):
    """Publishes to `path` for `seconds` and returns what came back.
    `ice_servers`: the iceServers list of /api/ice-servers; `relay`: gather
    relay candidates only; `video_codec`: e.g. "video/H264" to offer only it;
    `ssl`: the SSL context for an https `base`."""
    servers = [RTCIceServer(urls=s["urls"], username=s.get("username"),
                            credential=s.get("credential")) for s in ice_servers or []]
    pc = RTCPeerConnection(RTCConfiguration(iceServers=servers)) if ice_servers else RTCPeerConnection()
    tone = ToneTrack() if audio else None
    pattern = PatternTrack() if video else None
    if tone:
        pc.addTrack(tone)
    if pattern:
        pc.addTrack(pattern)
    if relay:
        relay_only(pc)
    if video_codec:
        from aiortc import RTCRtpSender
        codecs = [c for c in RTCRtpSender.getCapabilities("video").codecs
                  if c.mimeType in (video_codec, "video/rtx")]
        for transceiver in pc.getTransceivers():
            if transceiver.kind == "video":
                transceiver.setCodecPreferences(codecs)
    recorders = {}

    @pc.on("track")
    def on_track(track):
        recorders[track.kind] = Recorder(track)

    links = []
    resource, answer = await whip_publish(pc, base + path, links=links, ssl=ssl)
    started = time.time()
    if on_running:
        await on_running(pc)
    remaining = seconds - (time.time() - started)
    if remaining > 0:
        await asyncio.sleep(remaining)
    # Stop our senders first so frames in flight can still arrive.
    sent_audio = tone.sent if tone else 0
    await asyncio.sleep(0.5)
    selected = [pair.local_candidate.type for c in ice_connections(pc)
                for pair in c._nominated.values()]
    status = await whip_delete(resource, ssl=ssl)
    await pc.close()
    for r in recorders.values():
        r.task.cancel()
    return {
        "recorders": recorders,
        "sent_audio": sent_audio,
        "sent_video": pattern.sent if pattern else 0,
        # Wall-clock time the tone's first frame was taken: media flows from then.
        "audio_started": tone._start if tone else None,
        "delete_status": status,
        "answer": answer,
        "connection_state": pc.connectionState,
        "selected_local_candidate_types": selected,
        "resource": resource,
        "links": links,
        "elapsed": time.time() - started,
    }


def ignore_sctp_shutdown(monkeypatch):
    """Makes every aiortc SCTP association in this test deaf to SHUTDOWN (a
    broken or hostile stack that keeps ICE consent alive): a session that
    hangs up on it drains until its bound."""
    from aiortc import rtcsctptransport
    original = rtcsctptransport.RTCSctpTransport._receive_chunk

    async def deaf(self, chunk):
        if isinstance(chunk, rtcsctptransport.ShutdownChunk):
            return
        await original(self, chunk)

    monkeypatch.setattr(rtcsctptransport.RTCSctpTransport, "_receive_chunk", deaf)
