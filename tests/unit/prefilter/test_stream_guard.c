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

static void test_nothing_changes_before_authentication(void)
{
    moat_stream_guard guard;
    moat_stream_guard_config c = config();
    moat_stream_guard_init(&guard, &c);
    uint64_t index;
    /* Not enforcing: everything passes, nothing is created. */
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 0xdead, 5, false, 0, &index), ==,
                    MOAT_GUARD_PASS);
    g_assert_cmpuint(guard.n_streams, ==, 0);
    /* Enforcing: unknown SSRCs spend a small shared budget, then are dropped. */
    int passed = 0, dropped = 0;
    for (int i = 0; i < 1000; i++) {
        moat_guard_verdict v =
            moat_stream_guard_check_rtp(&guard, 0x1000 + (uint32_t)i, 1, true, 1000, &index);
        passed += v == MOAT_GUARD_PASS;
        dropped += v == MOAT_GUARD_DROP_UNKNOWN_SSRC;
    }
    g_assert_cmpint(passed, <=, 21);
    g_assert_cmpint(dropped, >=, 979);
    g_assert_cmpuint(guard.n_streams, ==, 0);
}

static void test_window_and_budget(void)
{
    moat_stream_guard guard;
    moat_stream_guard_config c = config();
    moat_stream_guard_init(&guard, &c);
    moat_stream_guard_declare(&guard, 42, 0);
    uint64_t now = 0, index;
    /* Two seconds of a legitimate 100 pkt/s stream teach its rate. */
    for (uint16_t seq = 1000; seq < 1200; seq++, now += 10000) {
        g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 42, seq, false, now, &index), ==,
                        MOAT_GUARD_PASS);
        moat_stream_guard_confirm_rtp(&guard, 42, index, now);
    }
    g_assert_cmpuint(guard.streams[0].highest_index, ==, 1199);
    g_assert_cmpfloat_with_epsilon(guard.streams[0].learned_pps, 100.0, 5.0);
    /* Enforcing: far-off sequence numbers are implausible. */
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 42, 1199 + 5000, true, now, &index), ==,
                    MOAT_GUARD_DROP_INDEX);
    g_assert_cmpint(moat_stream_guard_check_rtp(&guard, 42, 60000, true, now, &index), ==,
                    MOAT_GUARD_DROP_INDEX);
    /* A flood far from the stream's position gets the small tier only: a
     * quarter of 2 x 100 pkt/s over one second, plus its burst. */
    int passed = 0;
    for (int i = 0; i < 10000; i++) {
        if (moat_stream_guard_check_rtp(&guard, 42, (uint16_t)(1400 + i % 2000), true,
                                        now + (uint64_t)i * 100, &index) == MOAT_GUARD_PASS)
            passed++;
    }
    g_assert_cmpint(passed, >=, 40);
    g_assert_cmpint(passed, <=, 70);
    /* ...and leaves the near tier to the next legitimate packets. */
    now += 1000000;
    int legit = 0;
    for (uint16_t seq = 1200; seq < 1300; seq++, now += 10000) {
        if (moat_stream_guard_check_rtp(&guard, 42, seq, true, now, &index) == MOAT_GUARD_PASS) {
            legit++;
            moat_stream_guard_confirm_rtp(&guard, 42, index, now);
        }
    }
    g_assert_cmpint(legit, ==, 100);
    /* A flood near the position is bounded by ~2 x the learned rate. */
    passed = 0;
    for (int i = 0; i < 10000; i++) {
        if (moat_stream_guard_check_rtp(&guard, 42, (uint16_t)(1300 + i % 32), true,
                                        now + (uint64_t)i * 100, &index) == MOAT_GUARD_PASS)
            passed++;
    }
    g_assert_cmpint(passed, >=, 150);
    g_assert_cmpint(passed, <=, 260);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/stream-guard/index", test_index_estimation);
    g_test_add_func("/stream-guard/unauthenticated", test_nothing_changes_before_authentication);
    g_test_add_func("/stream-guard/window-budget", test_window_and_budget);
    return g_test_run();
}
