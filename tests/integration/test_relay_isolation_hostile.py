"""One authenticated publisher flooding its room through the cross-worker
relay must not starve an unrelated room on the same worker pair.

Two rooms, each with its publisher on worker 0 and its subscribers on
worker 1 (POST /api/rooms). Room b carries an ordinary stream (moat-flood's
paced publisher, 200 packets a second, two subscribers); room a's publisher
sends video at thousands of packets a second (moat-flood --video-pps) to
many subscribers, more than worker 1 can deliver, so its packets wait in
the (worker 0, worker 1) ring. Before, they took worker 0's whole relay
pool and room b lost 12-28 % of its packets as
moat_relay_dropped_packets_total{reason="pool_empty"}; now one sender has at
most an eighth of the pool waiting per consumer (engine/relay.h sources),
the rest of its packets drop as source_full, and room b loses (nearly)
nothing."""
import time

from conftest import Gateway
from room_fanout import create_room, fan_out, report_of

FLOOD_PPS = 10000
FLOOD_SUBSCRIBERS = 20
QUIET_DURATION = 12
FLOOD_DURATION = 7


def relay_drops(gateway, reason):
    return gateway.metric(f'moat_relay_dropped_packets_total{{reason="{reason}"}}')


def test_a_flooding_publisher_does_not_starve_another_room_on_its_workers():
    gateway = Gateway(workers=2, extra_args=["--whip-rate-per-ip", "0",
                                             "--max-pending-per-source", "0",
                                             # the relay's own bound, not the
                                             # publisher's media cap
                                             "--session-media-kbps", "0",
                                             "--log-level", "warn"])
    try:
        create_room(gateway, "quiet", publisher_worker=0, subscriber_worker=1)
        create_room(gateway, "flood", publisher_worker=0, subscriber_worker=1)
        quiet = fan_out(gateway, "quiet", 2, QUIET_DURATION)
        time.sleep(3)  # room quiet connected and flowing
        flood = fan_out(gateway, "flood", FLOOD_SUBSCRIBERS, FLOOD_DURATION,
                        "--video-pps", str(FLOOD_PPS))
        flood_report = report_of(flood)
        quiet_report = report_of(quiet)
        assert flood_report["connected"] == FLOOD_SUBSCRIBERS, flood_report["first_failure"]
        assert quiet_report["connected"] == 2, quiet_report["first_failure"]
        # The flood was one: room a's publisher sent far past a camera's rate
        # and more than its share waited for worker 1.
        assert flood_report["published"] >= 0.3 * FLOOD_PPS * FLOOD_DURATION, flood_report
        # Room b, beside it on the same workers, lost (nearly) nothing.
        assert quiet_report["published"] >= 0.5 * 200 * QUIET_DURATION
        pool_empty = relay_drops(gateway, "pool_empty")
        assert quiet_report["loss_max"] <= 0.01, (quiet_report, pool_empty)
        assert pool_empty == 0
        # What room a lost past its share is counted as such.
        assert relay_drops(gateway, "source_full") > 0
    finally:
        assert gateway.stop() == 0
