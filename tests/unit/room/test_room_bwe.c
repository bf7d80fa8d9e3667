/* A subscriber's layer choice from the gateway's sender-side estimate
 * (room_bwe.c over a fake gateway): the estimate replaces the receiver-report
 * one, a probe toward the next layer is asked for only when that layer
 * does not fit yet, at its bitrate x ROOM_BWE_PROBE_FACTOR, one at a time,
 * backed off after a failure; a confirmed probe's estimate moves the
 * subscriber up; with [room] send_side_bwe off nothing of it happens. */
#include <glib.h>
#include <string.h>

#include "room.h"

room_settings room_config;

static moat_plugin_estimate fake_estimate;
static int fake_estimate_rc;
static unsigned probes;
static uint64_t probe_target, probe_duration;

static int fake_send_estimate(moat_plugin_session *session, moat_plugin_estimate *out)
{
    (void)session;
    *out = fake_estimate;
    return fake_estimate_rc;
}

static int fake_probe(moat_plugin_session *session, uint64_t target_bps, uint64_t duration_us)
{
    (void)session;
    probes++;
    probe_target = target_bps;
    probe_duration = duration_us;
    fake_estimate.probing = true;
    return 0;
}

static const moat_gateway_calls fake_gateway = {
    .send_estimate = fake_send_estimate,
    .probe = fake_probe,
};

static const uint32_t rates[3] = {2500000, 600000, 150000}; /* h, m, l */

static room_peer *subscriber_on(int layer)
{
    room_peer *s = g_new0(room_peer, 1);
    s->gateway = &fake_gateway;
    room_layers_init(&s->layer);
    s->layer.current = s->layer.target = layer;
    memset(&fake_estimate, 0, sizeof fake_estimate);
    fake_estimate_rc = 0;
    probes = 0;
    room_config.send_side_bwe = true;
    return s;
}

static void test_probe_target(void)
{
    room_layer_state s;
    room_layers_init(&s);
    s.current = s.target = 1;
    g_assert_cmpuint(room_bwe_probe_target(&s, rates, 3, 1000000), ==,
                     (uint64_t)(2500000 * ROOM_BWE_PROBE_FACTOR) + ROOM_BWE_PROBE_EXTRA);
    g_assert_cmpuint(room_bwe_probe_target(&s, rates, 3, 3000000), ==, 0); /* fits */
    s.current = s.target = 0;
    g_assert_cmpuint(room_bwe_probe_target(&s, rates, 3, 1000000), ==, 0); /* top */
    s.current = 2;
    s.target = 1;
    g_assert_cmpuint(room_bwe_probe_target(&s, rates, 3, 100000), ==, 0); /* switching */
    s.current = s.target = 2;
    s.pinned = true;
    g_assert_cmpuint(room_bwe_probe_target(&s, rates, 3, 100000), ==, 0);
    s.pinned = false;
    g_assert_cmpuint(room_bwe_probe_target(&s, rates, 3, 100000), ==,
                     (uint64_t)(600000 * ROOM_BWE_PROBE_FACTOR) + ROOM_BWE_PROBE_EXTRA);
}

static void test_estimate_drives_and_probes(void)
{
    room_peer *s = subscriber_on(1);
    uint64_t t = 10000000;
    fake_estimate.bitrate_bps = 900000;
    fake_estimate.feedbacks = 10;
    room_bwe_update(s, rates, 3, t);
    g_assert_true(s->bwe.active);
    g_assert_cmpuint(s->layer.estimate_bps, ==, 900000);
    g_assert_cmpuint(probes, ==, 1);
    g_assert_cmpuint(probe_target, ==, (uint64_t)(2500000 * ROOM_BWE_PROBE_FACTOR) + 50000);
    g_assert_cmpuint(probe_duration, ==, ROOM_BWE_PROBE_US);
    /* One at a time. */
    room_bwe_update(s, rates, 3, t + 100000);
    g_assert_cmpuint(probes, ==, 1);
    /* It failed: the next one waits the back-off, which doubles. */
    fake_estimate.probing = false;
    fake_estimate.probes_failed = 1;
    room_bwe_update(s, rates, 3, t + 600000);
    g_assert_cmpuint(probes, ==, 1);
    room_bwe_update(s, rates, 3, t + 600000 + 2 * ROOM_BWE_BACKOFF_US - 1);
    g_assert_cmpuint(probes, ==, 1);
    room_bwe_update(s, rates, 3, t + 600000 + 2 * ROOM_BWE_BACKOFF_US);
    g_assert_cmpuint(probes, ==, 2);
    /* It was confirmed: the estimate carries h, the choice moves up once
     * the hold since the last switch is spent; no further probe. */
    fake_estimate.probing = false;
    fake_estimate.probes_confirmed = 1;
    fake_estimate.bitrate_bps = 3100000;
    uint64_t t2 = t + 10000000;
    room_bwe_update(s, rates, 3, t2);
    g_assert_cmpuint(probes, ==, 2);
    g_assert_cmpint(room_layers_choose(&s->layer, rates, 3, t2), ==, 0);
    /* The path narrows: the estimate falls, the choice goes down at once. */
    s->layer.current = s->layer.target = 0;
    s->layer.switched_us = t2;
    fake_estimate.bitrate_bps = 340000;
    room_bwe_update(s, rates, 3, t2 + 100000);
    g_assert_cmpint(room_layers_choose(&s->layer, rates, 3, t2 + 100000), ==, 2);
    /* It is also the subscriber's estimate for its publisher's REMB. */
    room_bwe_note(s, t2 + 200000);
    g_assert_cmpuint(atomic_load(&s->estimate_bps), ==, 340000);
    g_assert_cmpuint(atomic_load(&s->estimate_us), ==, t2 + 200000);
    g_free(s);
}

static void test_off_or_unavailable(void)
{
    room_peer *s = subscriber_on(1);
    uint64_t before = s->layer.estimate_bps;
    fake_estimate.bitrate_bps = 200000;
    room_config.send_side_bwe = false;
    room_bwe_update(s, rates, 3, 1000000);
    g_assert_false(s->bwe.active);
    g_assert_cmpuint(s->layer.estimate_bps, ==, before);
    g_assert_cmpuint(probes, ==, 0);
    /* No transport-cc (or no feedback yet): receiver reports decide. */
    room_config.send_side_bwe = true;
    fake_estimate_rc = -1;
    room_bwe_update(s, rates, 3, 2000000);
    g_assert_false(s->bwe.active);
    g_assert_cmpuint(s->layer.estimate_bps, ==, before);
    g_assert_null(room_bwe_describe(s));
    room_bwe_note(s, 3000000);
    g_assert_cmpuint(atomic_load(&s->estimate_us), ==, 0);
    g_free(s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/room/bwe/probe-target", test_probe_target);
    g_test_add_func("/room/bwe/estimate-drives-and-probes", test_estimate_drives_and_probes);
    g_test_add_func("/room/bwe/off-or-unavailable", test_off_or_unavailable);
    return g_test_run();
}
