"""A publisher that legitimately sends far more than its SDP let the gateway
expect must not keep its own transport's detector on for the rest of the
session (review of the flood defences, defect 1). Before 100 learned slots
the reference rate is the declared one (video 400 + audio 60 + RTCP 20 =
480 pps, so an anomaly above 1920 pps), and the baseline learned only while
the detector was off: a publisher at 2500 authenticated pps (about 24
Mbit/s, under the session cap) was enforcing from its second second on for
good (switches_on 1, switches_off 0), its SRTP+ budget frozen and its
datagrams no longer counted by the worker's detector. Now only failures
keep a detector on: a rate anomaly without a failed authentication for the
hold time becomes the baseline and the detector switches off. A forged
flood (every forgery a failure) still keeps it on: the flood defence tests
(test_flood_defence_*) and unit `prefilter_detector` /forgery-flood-keeps-it-on."""
import json
import time

from conftest import Gateway
from room_fanout import fan_out, report_of

VIDEO_PPS = 2500
DURATION = 12
HOLD_S = 2.0  # [prefilter] hold_ms's default


def publisher_transport(stats):
    """The transport that receives the publisher's RTP (the subscriber
    sends only RTCP)."""
    busiest = max(stats["transports"], key=lambda t: t["rtp_received"], default=None)
    return busiest if busiest and busiest["rtp_received"] > 0 else None


def test_a_high_rate_publisher_does_not_latch_its_detector():
    gateway = Gateway(workers=1, extra_args=["--log-level", "info"])
    samples = []
    try:
        flood = fan_out(gateway, "fast", 1, DURATION, "--video-pps", str(VIDEO_PPS))
        start = time.monotonic()
        while flood.poll() is None and time.monotonic() - start < DURATION + 20:
            transport = publisher_transport(json.loads(gateway.get("/api/stats")))
            if transport:
                samples.append((time.monotonic() - start, transport))
            time.sleep(0.25)
        report = report_of(flood)
    finally:
        assert gateway.stop() == 0, f"moat exited badly; log in {gateway.log_path}"
    assert samples, "no transport received RTP"
    last = samples[-1][1]
    detector = last["detector"]
    print("detector at the end:", detector)
    # It did switch on (2500 pps is past 4 x the declared 480): the case.
    assert detector["switches_on"] >= 1, detector
    # ... and off again, its rate adopted as the baseline, once.
    assert detector["switches_off"] == detector["switches_on"] == 1, detector
    assert detector["rates_adopted"] == 1, detector
    # The baseline it learned while the publisher sent (the publisher stops
    # before the end, and a calm baseline follows its rate down).
    baseline = max(t["detector"]["baseline_pps"] for when, t in samples)
    assert baseline >= 0.7 * VIDEO_PPS, [t["detector"]["baseline_pps"] for when, t in samples]
    # Off within the hold time (and the 0.5 s the snapshot may lag, and the
    # sampling) of switching on; it stays off from then to the end.
    on_at = next(when for when, t in samples if t["detector"]["switches_on"] >= 1)
    off_at = next(when for when, t in samples if t["detector"]["switches_off"] >= 1)
    assert off_at - on_at <= HOLD_S + 1.5, (on_at, off_at)
    assert not any(t["detector"]["enforcing"] for when, t in samples if when > off_at + 0.6)
    # Whatever it did, it dropped none of the publisher's packets.
    drops = {k: v for k, v in last["drops"].items() if v}
    assert not drops, drops
    subscriber = report["per_subscriber"][0]
    assert report["published"] >= 0.8 * VIDEO_PPS * DURATION, report
    assert subscriber["received"] >= 0.95 * report["published"], report
    assert "baseline" in gateway.log_text() and "detector off" in gateway.log_text()
