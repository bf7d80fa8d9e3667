"""A call party against the transcoder, on the ASan/UBSan gateway: a
PCMU-only phone calls an Opus-only phone through Moat (codec-transcode
opus, as test_voip_transcode.py sets it up).

  * The Opus phone sends small real 120 ms Opus packets (a few dozen bytes,
    timestamps 120 ms apart) as fast as it likes. Each becomes six 172-byte
    PCMU packets; unmetered, Moat flooded the PCMU phone at some 36x real
    time (2000 packets in: 12,000 out, 2 MB). The transcoder meters its
    input against the wall clock (1.2 s of media a second plus a 500 ms
    burst), so the PCMU phone gets about real time's worth and the rest is
    counted (moat_transcode_dropped_packets_total{reason="too_fast"}).
  * A call at real time, with jitter and a network hiccup's backlog
    arriving at once, loses nothing to the meter, both ways."""
import fractions
import random
import socket
import time

import av
import pytest

from conftest import MOAT_ASAN, Gateway, free_port
from ng_client import NgClient
from test_voip_transcode import opus_packets, opus_phone_sdp, pcmu_phone_sdp, rtp, tone, ulaw_encode
from voip_peers import sdp_port, udp_phone

TOO_FAST = 'moat_transcode_dropped_packets_total{reason="too_fast"}'
PACKET_RATE = 50  # what the PCMU phone gets in real time: 20 ms packets
BURST_PACKETS = 25  # the meter's 500 ms burst


@pytest.fixture
def call():
    """(gw, pcmu phone, opus phone, port to send to as the Opus phone,
    port to send to as the PCMU phone) of a transcoded call."""
    low = free_port(socket.SOCK_DGRAM, 40)
    low += low & 1
    gw = Gateway(binary=MOAT_ASAN,
                 extra_args=["--media-port-min", str(low), "--media-port-max", str(low + 37),
                             "--announced-address", "127.0.0.1",
                             "--call-allow-loopback-destinations"])
    client = NgClient(gw.ng_port, timeout=20.0)
    pcmu_phone, opus_phone = udp_phone(0.002), udp_phone(0.002)
    offer = client.command("offer", call_id="tc-hostile", from_tag="pcmu",
                           sdp=pcmu_phone_sdp(pcmu_phone.getsockname()[1]),
                           codec={"transcode": ["opus"]})
    assert offer["result"] == "ok", offer
    answer = client.command("answer", call_id="tc-hostile", from_tag="pcmu", to_tag="opus",
                            sdp=opus_phone_sdp(opus_phone.getsockname()[1]))
    assert answer["result"] == "ok" and "warning" not in answer, answer
    yield gw, pcmu_phone, opus_phone, sdp_port(offer["sdp"]), sdp_port(answer["sdp"])
    client.close()
    code = gw.stop()
    assert code == 0, f"moat exited with {code}; log in {gw.log_path}"


def opus_120ms_packets(count):
    """Real 120 ms Opus packets of a low-rate tone (tens of bytes each)."""
    enc = av.CodecContext.create("libopus", "w")
    enc.sample_rate, enc.layout, enc.format, enc.bit_rate = 48000, "mono", "s16", 6000
    enc.options = {"frame_duration": "120", "application": "voip"}
    out = []
    for n in range(count):
        frame = av.AudioFrame.from_ndarray(tone(660, 48000, n * 5760, 5760).reshape(1, -1),
                                           format="s16", layout="mono")
        frame.sample_rate, frame.pts = 48000, n * 5760
        frame.time_base = fractions.Fraction(1, 48000)
        out.extend(bytes(p) for p in enc.encode(frame))
    return out


def receive_all(sock, into):
    try:
        while True:
            into.append(sock.recvfrom(2048)[0])
    except OSError:
        pass


def test_faster_than_real_time_is_metered(call):
    gw, pcmu_phone, opus_phone, to_opus_side, _ = call
    payloads = opus_120ms_packets(12)[2:]
    assert payloads and all(len(p) < 100 for p in payloads), [len(p) for p in payloads]
    sent, got = 1500, []  # 180 s of media
    start = time.monotonic()
    for n in range(sent):
        opus_phone.sendto(rtp(111, n, n * 5760, 0xBBBB, payloads[n % len(payloads)]),
                          ("127.0.0.1", to_opus_side))
        if n % 20 == 19:  # the socket buffers would drop the rest: Moat must see them
            time.sleep(0.01)
            receive_all(pcmu_phone, got)
    until = time.monotonic() + 1.5
    while time.monotonic() < until:
        receive_all(pcmu_phone, got)
    elapsed = time.monotonic() - start
    most = elapsed * PACKET_RATE * 1.5 + BURST_PACKETS + 6
    print(f"{sent} x 120 ms sent, {len(got)} PCMU packets back in {elapsed:.2f} s "
          f"(at most {most:.0f}); {gw.metric(TOO_FAST):.0f} too fast")
    assert len(got) <= most
    assert len(got) >= BURST_PACKETS  # the call still carries audio
    assert all(p[1] & 0x7F == 0 and len(p) == 172 for p in got)
    assert gw.metric(TOO_FAST) >= sent - (elapsed * 1.2 + 0.5) / 0.12 - 1
    assert gw.metric('moat_transcode_dropped_packets_total{reason="queue_full"}') == 0


def test_real_time_with_jitter_and_a_hiccup_loses_nothing(call):
    gw, pcmu_phone, opus_phone, to_opus_side, to_pcmu_side = call
    count = 150
    opus_payloads = opus_packets(440, count)
    # Each phone's packet n leaves at n * 20 ms plus up to 30 ms of jitter;
    # packets 60-74 are held by a 300 ms hiccup and arrive together.
    rng = random.Random(7)
    schedule = []
    for n in range(count):
        due = n * 0.02 + (0.3 if 60 <= n < 75 else rng.uniform(0, 0.03))
        schedule.append(max(due, schedule[-1] if schedule else 0))
    got_at_pcmu, got_at_opus = [], []
    start = time.monotonic()
    for n, due in enumerate(schedule):
        while time.monotonic() < start + due:
            receive_all(pcmu_phone, got_at_pcmu)
            receive_all(opus_phone, got_at_opus)
        pcm = tone(660, 8000, n * 160, 160)
        pcmu_phone.sendto(rtp(0, n, n * 160, 0xAAAA, bytes(ulaw_encode(s) for s in pcm)),
                          ("127.0.0.1", to_pcmu_side))
        opus_phone.sendto(rtp(111, n, n * 960, 0xBBBB, opus_payloads[n]),
                          ("127.0.0.1", to_opus_side))
    until = time.monotonic() + 1.5
    while time.monotonic() < until:
        receive_all(pcmu_phone, got_at_pcmu)
        receive_all(opus_phone, got_at_opus)
    assert gw.metric(TOO_FAST) == 0
    assert gw.metric('moat_transcode_packets_total{direction="in"}') == 2 * count
    assert len([p for p in got_at_pcmu if p[1] & 0x7F == 0]) >= count - 3, len(got_at_pcmu)
    assert len([p for p in got_at_opus if p[1] & 0x7F == 111]) >= count - 3, len(got_at_opus)
