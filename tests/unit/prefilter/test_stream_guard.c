/* The structural stages for peers without SRTP+. */
#include "prefilter/stream_guard.h"

#include <glib.h>

static moat_stream_guard_config config(void)
{
    moat_stream_guard_config c = {.window_behind = 1024,
                                  .window_ahead = 4096,
                                  .budget_factor = 2.0,
                                  .budget_min_pps = 20,
                                  .default_pps = 0};
    return c;
}

static void test_index_estimation(void)
{
    g_assert_cmpuint(moat_estimate_index(100, 101), ==, 101);
    g_assert_cmpuint(moat_estimate_index(65535, 0), ==, 65536);         /* wrap forward */
    g_assert_cmpuint(moat_estimate_index(65536 + 2, 65534), ==, 65534); /* late, before wrap */
    g_assert_cmpuint(moat_estimate_index(5 * 65536 + 40000, 39000), ==, 5 * 65536 + 39000);
    g_assert_cmpuint(moat_estimate_index(10, 65000), ==, 65000); /* ROC 0 cannot go back */
}

static const moat_guard_load OFF = {.enforcing = false, .chance = MOAT_GUARD_CHANCE_ALL};
static const moat_guard_load CALM = {.enforcing = true, .chance = MOAT_GUARD_CHANCE_ALL};

static void test_nothing_changes_before_authentication(void)
{
    moat_stream_guard guard;
    moat_stream_guard_config c = config();
    moat_stream_guard_init(&guard, &c);
    uint64_t index;
    /* Not enforcing: everything passes, nothing is created. */
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 0xdead, 5, &OFF, 0, &index), ==,
                    MOAT_GUARD_PASS);
    g_assert_cmpuint(guard.n_streams, ==, 0);
    /* Enforcing: unknown SSRCs spend a small allowance of their own, then are dropped. */
    int passed = 0, dropped = 0;
    for (int i = 0; i < 1000; i++) {
        moat_guard_verdict v =
            moat_stream_guard_check_rtp(&guard, 0x1000 + (uint32_t)i, 1, &CALM, 1000, &index);
        passed += v == MOAT_GUARD_PASS;
        dropped += v == MOAT_GUARD_DROP_UNKNOWN_SSRC;
    }
    g_assert_cmpint(passed, <=, 21);
    g_assert_cmpint(dropped, >=, 979);
    g_assert_cmpuint(guard.n_streams, ==, 0);
}

/* Two seconds of a legitimate 100 pkt/s stream on SSRC 42 from seq 1000. */
static uint64_t learn(moat_stream_guard *guard)
{
    moat_stream_guard_config c = config();
    moat_stream_guard_init(guard, &c);
    moat_stream_guard_declare(guard, 42, 0);
    uint64_t now = 0, index;
    for (uint16_t seq = 1000; seq < 1200; seq++, now += 10000) {
        g_assert_cmpint(moat_stream_guard_check_rtp(guard, 42, seq, &OFF, now, &index), ==,
                        MOAT_GUARD_PASS);
        moat_stream_guard_confirm_rtp(guard, 42, index, now);
    }
    g_assert_cmpuint(guard->streams[0].highest_index, ==, 1199);
    g_assert_cmpfloat_with_epsilon(guard->streams[0].learned_pps, 100.0, 5.0);
    return now;
}

static void test_certain_failures_only(void)
{
    moat_stream_guard guard;
    uint64_t now = learn(&guard), index;
    /* Further behind than libsrtp's replay window (1024) is a certain
     * failure, an authenticated index a replay. (Far ahead is not certain:
     * /stream-guard/jump-ahead.) */
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 42, 1199 - 1025, &CALM, now, &index), ==,
                    MOAT_GUARD_DROP_INDEX);
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 42, 100, &CALM, now, &index), ==,
                    MOAT_GUARD_DROP_INDEX);
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 42, 1199 - 1024, &CALM, now, &index), ==,
                    MOAT_GUARD_PASS);
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 42, 1199, &CALM, now, &index), ==,
                    MOAT_GUARD_DROP_REPLAY);
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 42, 1150, &CALM, now, &index), ==,
                    MOAT_GUARD_DROP_REPLAY);
    /* While the worker keeps up, a flood just ahead of the stream (where the
     * next legitimate packets go) is all authenticated: no budget, so the
     * legitimate packets among it all pass. */
    int legit = 0, forged = 0;
    uint16_t next = 1200;
    for (int i = 0; i < 20000; i++, now += 50) {
        if (moat_stream_guard_check_rtp(&guard, 42, (uint16_t)(next + 1 + i % 24), &CALM, now,
                                        &index) == MOAT_GUARD_PASS)
            forged++;
        if (i % 200 == 0) {
            g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 42, next, &CALM, now, &index), ==,
                            MOAT_GUARD_PASS);
            moat_stream_guard_confirm_rtp(&guard, 42, index, now);
            legit++;
            next++;
        }
    }
    g_assert_cmpint(forged, ==, 20000);
    g_assert_cmpint(legit, ==, 100);
}

static void test_fair_admission_under_overload(void)
{
    moat_stream_guard guard;
    uint64_t now = learn(&guard), index;
    /* The worker can afford one packet in eight of a flooded stream: every
     * packet of the stream, forged or legitimate, has that same chance. */
    moat_guard_load overloaded = {.enforcing = true, .chance = MOAT_GUARD_CHANCE_ALL / 8};
    int legit = 0, legit_passed = 0, forged = 0, forged_passed = 0;
    uint16_t next = 1200;
    for (int i = 0; i < 200000; i++, now += 50) {
        forged++;
        if (moat_stream_guard_check_rtp(&guard, 42, (uint16_t)(next + 1 + i % 24), &overloaded, now,
                                        &index) == MOAT_GUARD_PASS)
            forged_passed++;
        if (i % 200 == 0) {
            legit++;
            if (moat_stream_guard_check_rtp(&guard, 42, next, &overloaded, now, &index) ==
                MOAT_GUARD_PASS) {
                legit_passed++;
                moat_stream_guard_confirm_rtp(&guard, 42, index, now);
            }
            next++;
        }
    }
    double forged_share = (double)forged_passed / forged;
    double legit_share = (double)legit_passed / legit;
    g_assert_cmpfloat(forged_share, >, 0.10);
    g_assert_cmpfloat(forged_share, <, 0.15);
    /* A legitimate packet keeps at least its share (binomial over 1000). */
    g_assert_cmpfloat(legit_share, >, 0.09);

    /* A stream within its share is not touched, overload or not. */
    moat_stream_guard quiet;
    now = learn(&quiet);
    for (uint16_t seq = 1200; seq < 1400; seq++, now += 10000) {
        g_assert_cmpint(moat_stream_guard_check_rtp(&quiet, 42, seq, &overloaded, now, &index), ==,
                        MOAT_GUARD_PASS);
        moat_stream_guard_confirm_rtp(&quiet, 42, index, now);
    }
}

static void test_window_accessor(void)
{
    moat_stream_guard guard;
    learn(&guard);
    g_assert_cmpuint(moat_stream_guard_count(&guard), ==, 1);
    moat_guard_window window;
    moat_stream_guard_window(&guard, 0, &window);
    g_assert_true(window.known);
    g_assert_cmpuint(window.ssrc, ==, 42);
    g_assert_cmpuint(window.authentic, ==, 1199);
    g_assert_cmpuint(window.lowest, ==, 1199 - 1024);
    g_assert_cmpuint(window.highest, ==, 1199 + 4096);
    uint64_t highest = 0;
    g_assert_true(moat_stream_guard_highest(&guard, 42, &highest));
    g_assert_cmpuint(highest, ==, 1199);
    g_assert_false(moat_stream_guard_highest(&guard, 43, &highest));
}

/* A budget past UINT32_MAX (a huge legacy_budget_factor) was cast to
 * uint32_t as it came: undefined, in practice 0. Now clamped. */
static void test_budget_clamped_before_the_cast(void)
{
    moat_stream_guard guard;
    moat_stream_guard_config c = config();
    c.budget_factor = 1e300;
    moat_stream_guard_init(&guard, &c);
    moat_stream_guard_declare(&guard, 0x1234, 50);
    g_assert_cmpuint(guard.n_streams, ==, 1);
    g_assert_cmpuint(guard.streams[0].budget_rate, ==, UINT32_MAX);
    g_assert_cmpuint(guard.streams[0].admission.allowance, >, 0);
    c.budget_factor = 2.0;
    moat_stream_guard_init(&guard, &c);
    moat_stream_guard_declare(&guard, 0x1234, 50);
    g_assert_cmpuint(guard.streams[0].budget_rate, ==, 100);
}

/* The review's gap case: a 400 pkt/s stream whose sequence jumps 5000 ahead
 * (a 12.5 s outage) while the detector enforces. libsrtp accepts the jump
 * (same roll-over counter, less than 2^15 ahead); the guard dropped every
 * packet after it as `index` for good, since only an authenticated packet
 * moves the window. Now the first one reaches srtp_unprotect through the
 * jump probe and, authenticated, re-centres the window. */
static void test_jump_ahead_recovers(void)
{
    moat_stream_guard guard;
    moat_stream_guard_config c = config();
    c.default_pps = 100;
    moat_stream_guard_init(&guard, &c);
    moat_stream_guard_declare(&guard, 0x1234, 400);
    uint64_t now = 1000000, index;
    uint16_t seq = 100;
    for (int i = 0; i < 400; i++, seq++, now += 2500) {
        moat_stream_guard_check_rtp(&guard, 0x1234, seq, &OFF, now, &index);
        moat_stream_guard_confirm_rtp(&guard, 0x1234, index, now);
    }
    seq += 5000; /* 5000 packets sent, none arrived */
    int passed = 0, dropped_index = 0;
    for (int i = 0; i < 4000; i++, seq++, now += 2500) { /* 10 s, enforcing */
        moat_guard_verdict v = moat_stream_guard_check_rtp(&guard, 0x1234, seq, &CALM, now, &index);
        if (v == MOAT_GUARD_PASS) {
            passed++;
            moat_stream_guard_confirm_rtp(&guard, 0x1234, index, now);
        }
        dropped_index += v == MOAT_GUARD_DROP_INDEX;
    }
    g_assert_cmpint(dropped_index, ==, 0);
    g_assert_cmpint(passed, ==, 4000);
    g_assert_cmpuint(guard.streams[0].highest_index, ==, (uint64_t)(100 + 400 + 5000 + 4000 - 1));
    /* Behind the window after the jump: still a certain failure. */
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 0x1234, 600, &CALM, now, &index), ==,
                    MOAT_GUARD_DROP_INDEX);
}

/* Forgeries of a known SSRC ahead of its window (where a flood with random
 * sequence numbers mostly lands): the jump probe lets about 20 a second
 * reach srtp_unprotect, the rest are dropped as `index`, so the cost of
 * such a flood stays that of the window; a legitimate stream after a gap
 * amid it gets its share of the probe (each packet the same chance) and
 * recovers. */
static void test_forgeries_ahead_cost_the_probe_only(void)
{
    moat_stream_guard guard;
    uint64_t now = learn(&guard), index;
    guard.random = 0x2545f491u; /* its draws, not the guard's address, seed the run */
    GRand *rand = g_rand_new_with_seed(7);
    int passed = 0, dropped = 0;
    for (int i = 0; i < 20000; i++, now += 100) { /* 10 000 pkt/s for 2 s */
        uint16_t seq = (uint16_t)(1199 + 4097 + g_rand_int_range(rand, 0, 20000));
        moat_guard_verdict v = moat_stream_guard_check_rtp(&guard, 42, seq, &CALM, now, &index);
        passed += v == MOAT_GUARD_PASS;
        dropped += v == MOAT_GUARD_DROP_INDEX;
    }
    g_test_message("forgeries ahead: %d of 20000 passed", passed);
    /* About 2 a 100 ms window, and 2 (1 + ln 500) in the flood's first
     * window, which has no window before it to judge by: about 52. */
    g_assert_cmpint(passed, <=, 80);
    g_assert_cmpint(passed, >=, 20);
    g_assert_cmpint(dropped, ==, 20000 - passed);
    g_assert_cmpuint(guard.streams[0].highest_index, ==, 1199); /* none authenticated */
    /* The legitimate stream jumps 6000 ahead amid the flood: it recovers. */
    uint16_t next = 1200 + 6000;
    uint64_t recovered = 0, start = now;
    for (int i = 0; i < 100000 && !recovered; i++, now += 100) {
        if (i % 25 == 0) { /* 400 pkt/s: 4 % of what lands ahead */
            if (moat_stream_guard_check_rtp(&guard, 42, next, &CALM, now, &index) ==
                MOAT_GUARD_PASS) {
                moat_stream_guard_confirm_rtp(&guard, 42, index, now);
                recovered = now;
            }
            next++;
        }
        uint16_t seq = (uint16_t)(next + 4097 + g_rand_int_range(rand, 0, 20000));
        moat_stream_guard_check_rtp(&guard, 42, seq, &CALM, now + g_rand_int_range(rand, 1, 100),
                                    &index);
    }
    g_rand_free(rand);
    g_test_message("recovered after %.3f s", (recovered - start) / 1e6);
    g_assert_cmpuint(recovered, >, 0);
    g_assert_cmpuint(recovered - start, <, 10 * 1000000u);
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 42, next, &CALM, now, &index), ==,
                    MOAT_GUARD_PASS);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/stream-guard/index", test_index_estimation);
    g_test_add_func("/stream-guard/unauthenticated", test_nothing_changes_before_authentication);
    g_test_add_func("/stream-guard/certain-failures-only", test_certain_failures_only);
    g_test_add_func("/stream-guard/fair-admission", test_fair_admission_under_overload);
    g_test_add_func("/stream-guard/window-accessor", test_window_accessor);
    g_test_add_func("/stream-guard/budget-clamped", test_budget_clamped_before_the_cast);
    g_test_add_func("/stream-guard/jump-ahead", test_jump_ahead_recovers);
    g_test_add_func("/stream-guard/forgeries-ahead-cost-the-probe-only",
                    test_forgeries_ahead_cost_the_probe_only);
    return g_test_run();
}
