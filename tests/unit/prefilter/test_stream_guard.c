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
    /* Far-off sequence numbers are implausible, authenticated ones replays. */
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 42, 1199 + 5000, &CALM, now, &index), ==,
                    MOAT_GUARD_DROP_INDEX);
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 42, 60000, &CALM, now, &index), ==,
                    MOAT_GUARD_DROP_INDEX);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/stream-guard/index", test_index_estimation);
    g_test_add_func("/stream-guard/unauthenticated", test_nothing_changes_before_authentication);
    g_test_add_func("/stream-guard/certain-failures-only", test_certain_failures_only);
    g_test_add_func("/stream-guard/fair-admission", test_fair_admission_under_overload);
    g_test_add_func("/stream-guard/window-accessor", test_window_accessor);
    g_test_add_func("/stream-guard/budget-clamped", test_budget_clamped_before_the_cast);
    return g_test_run();
}
