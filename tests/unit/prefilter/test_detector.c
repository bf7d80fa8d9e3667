/* The anomaly detector on synthetic traffic with the clock passed in. */
#include "prefilter/detector.h"

#include <glib.h>

static moat_detector_config auto_config(void)
{
    moat_detector_config config = {
        .mode = MOAT_DETECTOR_MODE_AUTO,
        .hold_ms = 2000,
        .rate_factor = 4.0,
        .min_excess_pps = 200,
        .auth_failures_per_s = 50,
        .declared_pps = 100,
    };
    return config;
}

/* `pps` packets per second from `start` for `duration` µs, ticking every 10 ms. */
static uint64_t feed(moat_detector *d, uint64_t start, uint64_t duration, uint32_t pps,
                     int *events_on, int *events_off)
{
    uint64_t interval = 1000000u / pps;
    uint64_t next_tick = start;
    for (uint64_t t = start; t < start + duration; t += interval) {
        while (next_tick <= t) {
            moat_detector_event e = moat_detector_tick(d, next_tick);
            *events_on += e == MOAT_DETECTOR_EVENT_ON;
            *events_off += e == MOAT_DETECTOR_EVENT_OFF;
            next_tick += 10000;
        }
        moat_detector_event e = moat_detector_on_packet(d, t);
        *events_on += e == MOAT_DETECTOR_EVENT_ON;
    }
    return start + duration;
}

static void test_steady_traffic_stays_off(void)
{
    moat_detector d;
    moat_detector_config config = auto_config();
    moat_detector_init(&d, &config, 0);
    int on = 0, off = 0;
    feed(&d, 0, 10 * 1000000u, 50, &on, &off);
    g_assert_cmpint(on, ==, 0);
    g_assert_false(moat_detector_enforcing(&d));
    g_assert_cmpfloat_with_epsilon(d.baseline_pps, 50.0, 15.0);
}

static void test_keyframe_bursts_stay_off(void)
{
    moat_detector d;
    moat_detector_config config = auto_config();
    config.declared_pps = 460;
    moat_detector_init(&d, &config, 0);
    int on = 0, off = 0;
    uint64_t t = 0;
    GRand *rand = g_rand_new_with_seed(3);
    for (int second = 0; second < 20; second++) {
        /* 300 pkt/s with 10 % jitter, and a 60-packet keyframe every second. */
        for (int i = 0; i < 300; i++) {
            uint64_t at = t + (uint64_t)i * 3333 + g_rand_int_range(rand, 0, 333);
            moat_detector_tick(&d, at);
            if (moat_detector_on_packet(&d, at) == MOAT_DETECTOR_EVENT_ON)
                on++;
        }
        for (int i = 0; i < 60; i++) {
            if (moat_detector_on_packet(&d, t + 500000 + (uint64_t)i * 100) ==
                MOAT_DETECTOR_EVENT_ON)
                on++;
        }
        t += 1000000;
    }
    g_rand_free(rand);
    g_assert_cmpint(on, ==, 0);
    (void)off;
}

static void test_auth_failures_switch_on_fast_and_off_after_hold(void)
{
    moat_detector d;
    moat_detector_config config = auto_config();
    moat_detector_init(&d, &config, 0);
    int on = 0, off = 0;
    uint64_t t = feed(&d, 0, 3 * 1000000u, 50, &on, &off);
    /* A flood of forged packets, each failing authentication. */
    uint64_t flood_start = t, switched = 0;
    for (int i = 0; i < 5000; i++) { /* 10 000 pkt/s for 0.5 s */
        uint64_t at = flood_start + (uint64_t)i * 100;
        if (i % 100 == 0)
            moat_detector_tick(&d, at);
        moat_detector_on_packet(&d, at);
        if (moat_detector_on_failure(&d, at) == MOAT_DETECTOR_EVENT_ON)
            switched = at;
    }
    g_assert_cmpuint(switched, >, 0);
    g_assert_cmpuint(switched - flood_start, <, 100000);
    g_assert_true(moat_detector_enforcing(&d));
    g_assert_cmpint(d.last_anomaly, ==, MOAT_ANOMALY_AUTH_FAILURES);
    /* Flood over at 0.5 s; calm traffic: off after the hold, not before. */
    uint64_t flood_end = flood_start + 500000;
    on = off = 0;
    uint64_t after = feed(&d, flood_end, 1900000, 50, &on, &off);
    g_assert_cmpint(off, ==, 0);
    feed(&d, after, 1000000, 50, &on, &off);
    g_assert_cmpint(off, ==, 1);
    g_assert_false(moat_detector_enforcing(&d));
    g_assert_cmpuint(d.switches_on, ==, 1);
    g_assert_cmpuint(d.switches_off, ==, 1);
}

static void test_rate_anomaly(void)
{
    moat_detector d;
    moat_detector_config config = auto_config();
    moat_detector_init(&d, &config, 0);
    int on = 0, off = 0;
    uint64_t t = feed(&d, 0, 3 * 1000000u, 50, &on, &off);
    g_assert_cmpint(on, ==, 0);
    feed(&d, t, 200000, 5000, &on, &off); /* no failures, just volume */
    g_assert_cmpint(on, ==, 1);
    g_assert_cmpint(d.last_anomaly, ==, MOAT_ANOMALY_RATE);
}

static void test_modes(void)
{
    moat_detector d;
    moat_detector_config config = auto_config();
    config.mode = MOAT_DETECTOR_MODE_ALWAYS;
    moat_detector_init(&d, &config, 0);
    g_assert_true(moat_detector_enforcing(&d));
    int on = 0, off = 0;
    feed(&d, 0, 5 * 1000000u, 50, &on, &off);
    g_assert_true(moat_detector_enforcing(&d));
    config.mode = MOAT_DETECTOR_MODE_OFF;
    moat_detector_init(&d, &config, 0);
    for (int i = 0; i < 10000; i++)
        moat_detector_on_failure(&d, (uint64_t)i * 10);
    g_assert_false(moat_detector_enforcing(&d));
}

/* A stalled reader drains a 1.5 s backlog of a steady stream in one go,
 * after its timer already moved the detector to the present: each packet
 * carries its kernel arrival time, so the stream keeps its real spacing and
 * nothing looks like a burst. The same count really arriving at once does. */
static void test_backlog_read_late_is_not_a_burst(void)
{
    moat_detector d;
    moat_detector_config config = auto_config();
    moat_detector_init(&d, &config, 0);
    int on = 0, off = 0;
    uint64_t t = feed(&d, 0, 2000000, 100, &on, &off);
    g_assert_cmpint(on, ==, 0);
    uint64_t resumed = t + 1500000;
    g_assert_cmpint(moat_detector_tick(&d, resumed), ==, MOAT_DETECTOR_EVENT_NONE);
    for (uint64_t arrival = t; arrival < resumed; arrival += 10000)
        on += moat_detector_on_packet(&d, arrival) == MOAT_DETECTOR_EVENT_ON;
    g_assert_cmpint(on, ==, 0);
    g_assert_false(moat_detector_enforcing(&d));
    g_assert_cmpfloat(moat_detector_rate(&d), <=, 110.0);
    for (int i = 0; i < 150; i++)
        on += moat_detector_on_packet(&d, resumed) == MOAT_DETECTOR_EVENT_ON;
    g_assert_cmpint(on, ==, 1);
}

/* A publisher legitimately sending 2500 pkt/s where the SDP declared 480
 * (24 Mbit/s of video, under the session cap): the rate switches the
 * detector on, but with no failed authentication for the hold time that
 * rate is the peer's own. It becomes the baseline and the detector goes off
 * for good; it used to stay on for the rest of the session, learning
 * nothing while it enforced. */
static void test_failure_free_rate_becomes_the_baseline(void)
{
    moat_detector d;
    moat_detector_config config = auto_config();
    config.declared_pps = 480;
    moat_detector_init(&d, &config, 0);
    int on = 0, off = 0;
    uint64_t t = feed(&d, 0, 1000000, 2500, &on, &off);
    g_assert_cmpint(on, ==, 1);
    g_assert_true(moat_detector_enforcing(&d));
    g_assert_cmpint(d.last_anomaly, ==, MOAT_ANOMALY_RATE);
    t = feed(&d, t, 59 * 1000000u, 2500, &on, &off);
    g_assert_cmpint(on, ==, 1);
    g_assert_cmpint(off, ==, 1);
    g_assert_false(moat_detector_enforcing(&d));
    g_assert_cmpuint(d.switches_off, ==, 1);
    g_assert_cmpuint(d.rates_adopted, ==, 1);
    g_assert_cmpfloat_with_epsilon(d.baseline_pps, 2500.0, 100.0);
    g_assert_cmpuint(d.learned_slots, >=, 100);
    /* The learned rate is what a later flood is measured against. */
    for (int i = 0; i < 3000; i++) /* +30 000 pkt/s for 0.1 s */
        on += moat_detector_on_packet(&d, t + (uint64_t)i * 33) == MOAT_DETECTOR_EVENT_ON;
    g_assert_cmpint(on, ==, 2);
    g_assert_cmpint(d.last_anomaly, ==, MOAT_ANOMALY_RATE);
}

/* The hold time after the switch-on, to the tick. */
static void test_rate_is_adopted_after_the_hold(void)
{
    moat_detector d;
    moat_detector_config config = auto_config();
    config.declared_pps = 480;
    moat_detector_init(&d, &config, 0);
    int on = 0, off = 0;
    uint64_t t = feed(&d, 0, 500000, 2500, &on, &off);
    g_assert_cmpint(on, ==, 1);
    uint64_t switched_on = d.switched_on_us;
    t = feed(&d, t, switched_on + 1990000 - t, 2500, &on, &off);
    g_assert_cmpint(off, ==, 0);
    feed(&d, t, 30000, 2500, &on, &off);
    g_assert_cmpint(off, ==, 1);
}

/* A real flood of forgeries fails authentication all along: the failures
 * keep the detector on however long it lasts, even though the flood is also
 * a rate anomaly, and its rate is never learned. */
static void test_forgery_flood_keeps_it_on(void)
{
    moat_detector d;
    moat_detector_config config = auto_config();
    config.declared_pps = 480;
    moat_detector_init(&d, &config, 0);
    int on = 0, off = 0;
    uint64_t t = feed(&d, 0, 3 * 1000000u, 400, &on, &off);
    g_assert_cmpint(on, ==, 0);
    double calm = d.baseline_pps;
    /* 20 s of 10 000 forged pkt/s, every one failing, on top of the stream. */
    uint64_t next_tick = t;
    for (uint64_t at = t; at < t + 20 * 1000000u; at += 100) {
        while (next_tick <= at) {
            moat_detector_event e = moat_detector_tick(&d, next_tick);
            off += e == MOAT_DETECTOR_EVENT_OFF;
            next_tick += 10000;
        }
        on += moat_detector_on_packet(&d, at) == MOAT_DETECTOR_EVENT_ON;
        on += moat_detector_on_failure(&d, at) == MOAT_DETECTOR_EVENT_ON;
    }
    t += 20 * 1000000u;
    g_assert_cmpint(on, ==, 1);
    g_assert_cmpint(off, ==, 0);
    g_assert_true(moat_detector_enforcing(&d));
    g_assert_cmpuint(d.rates_adopted, ==, 0);
    g_assert_cmpfloat_with_epsilon(d.baseline_pps, calm, 5.0);
    /* The flood stops: off after the hold, with the calm baseline. */
    feed(&d, t, 3 * 1000000u, 400, &on, &off);
    g_assert_cmpint(off, ==, 1);
    g_assert_false(moat_detector_enforcing(&d));
    g_assert_cmpuint(d.rates_adopted, ==, 0);
    g_assert_cmpfloat_with_epsilon(d.baseline_pps, 400.0, 80.0);
}

/* A high-rate peer hit by a burst of forgeries: on while the failures come,
 * off the hold time after the last one, with the peer's own rate (measured
 * since that failure) as the baseline, not the burst's. */
static void test_rate_after_the_last_failure_is_adopted(void)
{
    moat_detector d;
    moat_detector_config config = auto_config();
    config.declared_pps = 480;
    moat_detector_init(&d, &config, 0);
    int on = 0, off = 0;
    uint64_t t = feed(&d, 0, 1000000, 2500, &on, &off);
    g_assert_cmpint(on, ==, 1);
    /* 1 s of forgeries at 5000 pkt/s, failing, beside the stream. */
    uint64_t last_failure = 0;
    for (uint64_t at = t; at < t + 1000000; at += 200) {
        if (at % 10000 < 200)
            off += moat_detector_tick(&d, at) == MOAT_DETECTOR_EVENT_OFF;
        moat_detector_on_packet(&d, at);
        moat_detector_on_failure(&d, at);
        last_failure = at;
    }
    g_assert_cmpint(off, ==, 0);
    t += 1000000;
    t = feed(&d, t, last_failure + 1900000 - t, 2500, &on, &off);
    g_assert_cmpint(off, ==, 0);
    g_assert_true(moat_detector_enforcing(&d));
    feed(&d, t, 1000000, 2500, &on, &off);
    g_assert_cmpint(off, ==, 1);
    g_assert_cmpuint(d.rates_adopted, ==, 1);
    g_assert_cmpfloat_with_epsilon(d.baseline_pps, 2500.0, 100.0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/detector/steady", test_steady_traffic_stays_off);
    g_test_add_func("/detector/keyframe-bursts", test_keyframe_bursts_stay_off);
    g_test_add_func("/detector/auth-failures",
                    test_auth_failures_switch_on_fast_and_off_after_hold);
    g_test_add_func("/detector/rate", test_rate_anomaly);
    g_test_add_func("/detector/modes", test_modes);
    g_test_add_func("/detector/backlog-read-late", test_backlog_read_late_is_not_a_burst);
    g_test_add_func("/detector/failure-free-rate-becomes-baseline",
                    test_failure_free_rate_becomes_the_baseline);
    g_test_add_func("/detector/rate-adopted-after-hold", test_rate_is_adopted_after_the_hold);
    g_test_add_func("/detector/forgery-flood-keeps-it-on", test_forgery_flood_keeps_it_on);
    g_test_add_func("/detector/rate-after-last-failure-adopted",
                    test_rate_after_the_last_failure_is_adopted);
    return g_test_run();
}
