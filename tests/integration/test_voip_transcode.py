"""Transcoding between call legs that share no codec, over the ng protocol
and plain RTP: a PCMU-only phone offers with codec-transcode=opus, an
Opus-only phone answers; Moat transcodes both directions through GStreamer.
Each phone sends a tone (440 Hz from the PCMU phone, 660 Hz from the Opus
phone), decodes what it receives (G.711 by hand, Opus with PyAV) and must
hear the other's tone; payload types, SSRC, timestamp steps and sequence
numbers are those of its own codec. A telephone-event from the PCMU phone
reaches the Opus phone re-stamped on the 48 kHz clock. A re-answer Moat
cannot transcode takes the transcoders off and is relayed as is."""
import fractions
import math
import re
import socket
import struct
import time

import av
import numpy as np
import pytest

from voip_peers import ng_relay, sdp_port, udp_phone

PACKETS = 150  # 3 s


def pcmu_phone_sdp(port):
    return ("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {port} RTP/AVP 0 101\r\n"
            "a=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\n"
            "a=fmtp:101 0-16\r\na=sendrecv\r\n")


def opus_phone_sdp(port):
    return ("v=0\r\no=- 2 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {port} RTP/AVP 111 110\r\n"
            "a=rtpmap:111 opus/48000/2\r\na=rtpmap:110 telephone-event/48000\r\n"
            "a=sendrecv\r\n")


def udp():
    return udp_phone(0.002)


def tone(hz, rate, first, count):
    t = (np.arange(count) + first) / rate
    return (12000 * np.sin(2 * np.pi * hz * t)).astype(np.int16)


def ulaw_encode(sample):
    sign = 0x80 if sample < 0 else 0
    value = min(abs(int(sample)), 32635) + 0x84
    exponent = 7
    mask = 0x4000
    while not value & mask and exponent > 0:
        exponent -= 1
        mask >>= 1
    mantissa = (value >> (exponent + 3)) & 0x0F
    return ~(sign | exponent << 4 | mantissa) & 0xFF


def ulaw_decode(code):
    code = ~code & 0xFF
    exponent, mantissa = (code >> 4) & 7, code & 0x0F
    value = (((mantissa << 3) + 0x84) << exponent) - 0x84
    return -value if code & 0x80 else value


def frequency(samples, rate):
    """Rising crossings of +-1000 (hysteresis) over the span they cover."""
    state, first, last, rises = 0, 0, 0, 0
    for i, s in enumerate(samples):
        if s > 1000 and state <= 0:
            if state < 0:
                first = i if rises == 0 else first
                last = i
                rises += 1
            state = 1
        elif s < -1000:
            state = -1
    return (rises - 1) * rate / (last - first) if rises > 1 else 0


def rtp(pt, seq, ts, ssrc, payload, marker=False):
    return struct.pack("!BBHII", 0x80, pt | (0x80 if marker else 0), seq & 0xFFFF,
                       ts & 0xFFFFFFFF, ssrc) + payload


def opus_encoder():
    enc = av.CodecContext.create("libopus", "w")
    enc.sample_rate = 48000
    enc.layout = "mono"
    enc.format = "s16"
    enc.bit_rate = 32000
    enc.options = {"frame_duration": "20", "application": "voip"}
    return enc


def opus_packets(hz, count):
    enc, out = opus_encoder(), []
    for n in range(count):
        frame = av.AudioFrame.from_ndarray(tone(hz, 48000, n * 960, 960).reshape(1, -1),
                                           format="s16", layout="mono")
        frame.sample_rate = 48000
        frame.pts = n * 960
        frame.time_base = fractions.Fraction(1, 48000)
        out.extend(bytes(p) for p in enc.encode(frame))
    return out


def opus_decode(payloads):
    dec = av.CodecContext.create("libopus", "r")
    dec.sample_rate = 48000
    dec.layout = "mono"
    pcm = []
    for payload in payloads:
        for frame in dec.decode(av.Packet(payload)):
            data = frame.to_ndarray().reshape(-1)
            if data.dtype != np.int16:
                data = (data * 32767).astype(np.int16)
            pcm.append(data)
    return np.concatenate(pcm) if pcm else np.zeros(0, np.int16)


def drain(sock, into, until):
    while time.monotonic() < until:
        try:
            data, _ = sock.recvfrom(2048)
        except socket.timeout:
            continue
        into.append(data)


@pytest.fixture
def voip():
    with ng_relay() as (gw, client, ports):
        yield gw, client


def check_stream(packets, pt, step):
    assert len(packets) > PACKETS // 2, f"only {len(packets)} packets"
    ssrcs = {struct.unpack("!I", p[8:12])[0] for p in packets}
    assert len(ssrcs) == 1
    audio = [p for p in packets if p[1] & 0x7F == pt]
    for a, b in zip(packets, packets[1:]):
        assert (struct.unpack("!H", b[2:4])[0] - struct.unpack("!H", a[2:4])[0]) & 0xFFFF == 1
    for a, b in zip(audio, audio[1:]):
        assert (struct.unpack("!I", b[4:8])[0] - struct.unpack("!I", a[4:8])[0]) & 0xFFFFFFFF \
            == step
    return audio


def test_pcmu_phone_to_opus_phone_transcoded(voip):
    gw, client = voip
    pcmu_phone, opus_phone = udp(), udp()
    offer = client.command("offer", call_id="tc-1", from_tag="pcmu",
                           sdp=pcmu_phone_sdp(pcmu_phone.getsockname()[1]),
                           codec={"transcode": ["opus"]}, replace=["origin"])
    assert offer["result"] == "ok", offer
    # The Opus phone is offered Opus (and a 48 kHz telephone-event) besides PCMU.
    assert re.search(r"^a=rtpmap:(\d+) opus/48000/2", offer["sdp"], re.M), offer["sdp"]
    assert "telephone-event/48000" in offer["sdp"]
    answer = client.command("answer", call_id="tc-1", from_tag="pcmu", to_tag="opus",
                            sdp=opus_phone_sdp(opus_phone.getsockname()[1]))
    assert answer["result"] == "ok", answer
    assert "warning" not in answer, answer
    # The PCMU phone's answer names PCMU only: it never sees Opus.
    assert re.search(r"^m=audio \d+ RTP/AVP 0 101\r$", answer["sdp"], re.M), answer["sdp"]
    assert "opus" not in answer["sdp"]
    to_opus_side, to_pcmu_side = sdp_port(offer["sdp"]), sdp_port(answer["sdp"])

    opus_payloads = opus_packets(660, PACKETS)
    got_at_pcmu, got_at_opus = [], []
    start = time.monotonic()  # the phones send in real time: Moat meters faster input
    for n in range(PACKETS):
        pcm = tone(440, 8000, n * 160, 160)
        pcmu_phone.sendto(rtp(0, 100 + n, 1000 + n * 160, 0xAAAA,
                              bytes(ulaw_encode(s) for s in pcm)), ("127.0.0.1", to_pcmu_side))
        opus_phone.sendto(rtp(111, 7 + n, 5000 + n * 960, 0xBBBB, opus_payloads[n]),
                          ("127.0.0.1", to_opus_side))
        if n == 100:  # digit 5 at 2 s, three updates and an end
            for k, duration in enumerate((160, 320, 480, 480)):
                end = 0x80 if k == 3 else 0
                pcmu_phone.sendto(rtp(101, 100 + n, 1000 + 100 * 160, 0xAAAA,
                                      struct.pack("!BBH", 5, end | 10, duration), k == 0),
                                  ("127.0.0.1", to_pcmu_side))
        drain(pcmu_phone, got_at_pcmu, time.monotonic() + 0.005)
        drain(opus_phone, got_at_opus, start + (n + 1) * 0.02)
    drain(pcmu_phone, got_at_pcmu, time.monotonic() + 1.0)
    drain(opus_phone, got_at_opus, time.monotonic() + 0.2)

    # The PCMU phone hears 660 Hz in PCMU, 160 ticks a packet.
    audio = check_stream(got_at_pcmu, 0, 160)
    pcm = [ulaw_decode(b) for p in audio for b in p[12:]]
    hz = frequency(pcm[1600:], 8000)
    assert abs(hz - 660) < 10, hz

    # The Opus phone hears 440 Hz in Opus, 960 ticks a packet.
    audio = check_stream(got_at_opus, 111, 960)
    hz = frequency(opus_decode([p[12:] for p in audio])[9600:], 48000)
    assert abs(hz - 440) < 10, hz

    # The digit: on the 48 kHz clock, 2 s after the first audio packet.
    events = [p for p in got_at_opus if p[1] & 0x7F == 110]
    assert len(events) == 4, len(events)
    first_ts = struct.unpack("!I", audio[0][4:8])[0]
    for k, (event, duration) in enumerate(zip(events, (160, 320, 480, 480))):
        assert event[12] == 5
        assert struct.unpack("!H", event[14:16])[0] == duration * 6
        assert (struct.unpack("!I", event[4:8])[0] - first_ts) & 0xFFFFFFFF == 100 * 960
        assert bool(event[1] & 0x80) == (k == 0)

    # Both pipelines counted on /metrics, nothing dropped on this clean path.
    assert gw.metric("moat_transcoders") == 2
    assert gw.metric('moat_transcode_packets_total{direction="in"}') >= 2 * PACKETS
    assert gw.metric("moat_transcode_dtmf_events_total") == 4
    assert gw.metric('moat_transcode_dropped_packets_total{reason="queue_full"}') == 0
    assert gw.metric('moat_transcode_dropped_packets_total{reason="too_fast"}') == 0

    assert client.command("delete", call_id="tc-1", delete_delay=0)["result"] == "ok"
    deadline = time.monotonic() + 5
    while gw.metric("moat_transcoders") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gw.metric("moat_transcoders") == 0


def test_transcoded_call_alive_at_shutdown(voip):
    """Moat stops cleanly (exit 0, checked by the fixture) with both pipelines
    of an undeleted call still running and packets in flight."""
    gw, client = voip
    pcmu_phone, opus_phone = udp(), udp()
    offer = client.command("offer", call_id="tc-2", from_tag="pcmu",
                           sdp=pcmu_phone_sdp(pcmu_phone.getsockname()[1]),
                           codec={"transcode": ["opus"]})
    answer = client.command("answer", call_id="tc-2", from_tag="pcmu", to_tag="opus",
                            sdp=opus_phone_sdp(opus_phone.getsockname()[1]))
    assert answer["result"] == "ok", answer
    to_pcmu_side = sdp_port(answer["sdp"])
    for n in range(50):
        pcmu_phone.sendto(rtp(0, n, n * 160, 0xAAAA, bytes(160)), ("127.0.0.1", to_pcmu_side))
    got = []
    drain(opus_phone, got, time.monotonic() + 1.0)
    assert got and all(p[1] & 0x7F == 111 for p in got)
    assert gw.metric("moat_transcoders") == 2
    assert sdp_port(offer["sdp"])


def test_transcoded_to_an_sdes_leg(voip):
    """The Opus phone is an SRTP (SDES) party: the transcoded output is
    protected on the worker with the key Moat offered it (libsrtp on the
    phone's side decrypts it), and what the phone protects with its own key
    is decrypted before it enters the transcoder."""
    import base64
    import os
    from pylibsrtp import Policy, Session
    gw, client = voip
    suite = "AES_CM_128_HMAC_SHA1_80"
    pcmu_phone, opus_phone = udp(), udp()
    offer = client.command("offer", call_id="tc-3", from_tag="pcmu",
                           sdp=pcmu_phone_sdp(pcmu_phone.getsockname()[1]),
                           transport_protocol="RTP/SAVP", codec={"transcode": ["opus"]})
    assert offer["result"] == "ok", offer
    line = re.search(rf"^a=crypto:\d+ {suite} inline:(\S+)\r$", offer["sdp"], re.M)
    assert line and "opus/48000" in offer["sdp"], offer["sdp"]
    moat_key, phone_key = base64.b64decode(line.group(1)), os.urandom(30)
    sdp = opus_phone_sdp(opus_phone.getsockname()[1]).replace("RTP/AVP", "RTP/SAVP")
    sdp += f"a=crypto:1 {suite} inline:{base64.b64encode(phone_key).decode()}\r\n"
    answer = client.command("answer", call_id="tc-3", from_tag="pcmu", to_tag="opus", sdp=sdp)
    assert answer["result"] == "ok", answer
    assert re.search(r"^m=audio \d+ RTP/AVP 0 101\r$", answer["sdp"], re.M), answer["sdp"]

    def srtp(key, outbound):
        kind = Policy.SSRC_ANY_OUTBOUND if outbound else Policy.SSRC_ANY_INBOUND
        return Session(policy=Policy(key=key, ssrc_type=kind,
                                     srtp_profile=Policy.SRTP_PROFILE_AES128_CM_SHA1_80))
    protect, unprotect = srtp(phone_key, True), srtp(moat_key, False)
    to_opus_side, to_pcmu_side = sdp_port(offer["sdp"]), sdp_port(answer["sdp"])
    opus_payloads = opus_packets(660, PACKETS)
    got_at_pcmu, got_at_opus = [], []
    start = time.monotonic()
    for n in range(PACKETS):
        pcm = tone(440, 8000, n * 160, 160)
        pcmu_phone.sendto(rtp(0, n, n * 160, 0xAAAA, bytes(ulaw_encode(s) for s in pcm)),
                          ("127.0.0.1", to_pcmu_side))
        opus_phone.sendto(protect.protect(rtp(111, n, n * 960, 0xBBBB, opus_payloads[n])),
                          ("127.0.0.1", to_opus_side))
        drain(pcmu_phone, got_at_pcmu, time.monotonic() + 0.005)
        drain(opus_phone, got_at_opus, start + (n + 1) * 0.02)
    drain(pcmu_phone, got_at_pcmu, time.monotonic() + 1.0)
    drain(opus_phone, got_at_opus, time.monotonic() + 0.2)

    audio = check_stream([unprotect.unprotect(p) for p in got_at_opus], 111, 960)
    hz = frequency(opus_decode([p[12:] for p in audio])[9600:], 48000)
    assert abs(hz - 440) < 10, hz
    audio = check_stream(got_at_pcmu, 0, 160)
    hz = frequency([ulaw_decode(b) for p in audio for b in p[12:]][1600:], 8000)
    assert abs(hz - 660) < 10, hz


def g729_phone_sdp(port):
    return ("v=0\r\no=- 2 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {port} RTP/AVP 18\r\na=rtpmap:18 G729/8000\r\na=sendrecv\r\n")


def bad_rtpmap_phone_sdp(port):
    return ("v=0\r\no=- 2 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=audio {port} RTP/AVP 0\r\na=rtpmap:0 PCMU\r\na=sendrecv\r\n")


@pytest.mark.parametrize("reanswer, pt", [(g729_phone_sdp, 18), (bad_rtpmap_phone_sdp, 0)],
                         ids=["g729", "bad_rtpmap"])
def test_reanswer_that_cannot_transcode_relays_as_is(voip, reanswer, pt):
    """A transcoded call re-offered and re-answered with a codec Moat cannot
    transcode (G.729), or with an rtpmap it cannot read: the reply warns
    the m-line is relayed as is, and it is: the transcoders are gone and
    the answerer's packets reach the offerer unchanged (the old transcoder
    used to stay on the stream and drop them all as invalid)."""
    gw, client = voip
    pcmu_phone, other_phone = udp(), udp()
    offer = dict(call_id="tc-re", from_tag="pcmu", codec={"transcode": ["opus"]},
                 sdp=pcmu_phone_sdp(pcmu_phone.getsockname()[1]))
    assert client.command("offer", **offer)["result"] == "ok"
    answer = client.command("answer", call_id="tc-re", from_tag="pcmu", to_tag="opus",
                            sdp=opus_phone_sdp(other_phone.getsockname()[1]))
    assert answer["result"] == "ok" and "warning" not in answer, answer
    assert gw.metric("moat_transcoders") == 2

    reoffer = client.command("offer", **offer)
    assert reoffer["result"] == "ok", reoffer
    reanswered = client.command("answer", call_id="tc-re", from_tag="pcmu", to_tag="opus",
                                sdp=reanswer(other_phone.getsockname()[1]))
    assert reanswered["result"] == "ok", reanswered
    assert "m-line 0 relayed as is" in reanswered.get("warning", ""), reanswered
    deadline = time.monotonic() + 5
    while gw.metric("moat_transcoders") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gw.metric("moat_transcoders") == 0

    to_other_side, to_pcmu_side = sdp_port(reoffer["sdp"]), sdp_port(reanswered["sdp"])
    invalid_before = gw.metric('moat_transcode_dropped_packets_total{reason="invalid"}')
    sent, got_at_pcmu, got_at_other = [], [], []
    for n in range(50):
        packet = rtp(pt, n, n * 160, 0x7290, bytes([n]) * 20)
        sent.append(packet)
        other_phone.sendto(packet, ("127.0.0.1", to_other_side))
        pcmu_phone.sendto(rtp(0, n, n * 160, 0xAAAA, bytes(160)), ("127.0.0.1", to_pcmu_side))
        drain(pcmu_phone, got_at_pcmu, time.monotonic() + 0.01)
        drain(other_phone, got_at_other, time.monotonic() + 0.01)
    drain(pcmu_phone, got_at_pcmu, time.monotonic() + 0.5)
    drain(other_phone, got_at_other, time.monotonic() + 0.1)
    assert len(got_at_pcmu) >= 45, len(got_at_pcmu)
    assert all(p[1] & 0x7F == pt and p[12:] == sent[struct.unpack("!H", p[2:4])[0]][12:]
               for p in got_at_pcmu)
    assert len(got_at_other) >= 45 and all(p[1] & 0x7F == 0 for p in got_at_other)
    assert gw.metric('moat_transcode_dropped_packets_total{reason="invalid"}') == invalid_before
