/* The run's time series: echoes are filed by send time, intervals close
 * with the attack packets sent meanwhile, a partial last interval keeps its
 * real length. */
#include "timeline.h"

#include <glib.h>

static void test_echoes_filed_by_send_time(void)
{
    timeline t;
    timeline_init(&t, 1000000, 1.0);
    uint64_t totals[ATTACK_KIND_COUNT] = {0};
    for (int i = 0; i < 50; i++)
        timeline_on_sent(&t, 1000000 + (uint64_t)i * 20000);
    totals[ATTACK_REPLAY] = 700;
    g_assert_cmpuint(timeline_close(&t, 2000100, false, totals, 1000, 0.5), ==, 1);
    /* Echoes of the first second arrive after it closed: still counted there. */
    for (int i = 0; i < 45; i++)
        timeline_on_echo(&t, 1000000 + (uint64_t)i * 20000, 2.0);
    timeline_on_sent(&t, 2100000);
    totals[ATTACK_REPLAY] = 1000;
    g_assert_cmpuint(timeline_close(&t, 2600000, true, totals, 600, 0.25), ==, 1);
    g_assert_cmpuint(t.n_intervals, ==, 2);
    const timeline_interval *first = &t.intervals[0], *last = &t.intervals[1];
    g_assert_cmpuint(first->legit_sent, ==, 50);
    g_assert_cmpuint(first->legit_received, ==, 45);
    g_assert_cmpfloat_with_epsilon(timeline_interval_loss(first), 0.1, 1e-9);
    g_assert_cmpfloat_with_epsilon(timeline_interval_rtt_ms(first), 2.0, 1e-9);
    g_assert_cmpuint(first->attack_sent[ATTACK_REPLAY], ==, 700);
    g_assert_cmpfloat_with_epsilon(timeline_interval_attack_pps(first), 700, 1e-9);
    g_assert_cmpfloat_with_epsilon(last->length_s, 0.6, 1e-9);
    g_assert_cmpuint(last->attack_sent[ATTACK_REPLAY], ==, 300);
    g_assert_cmpfloat_with_epsilon(timeline_interval_attack_pps(last), 500, 1e-6);
    g_assert_cmpfloat(timeline_interval_rtt_ms(last), <, 0);
    g_assert_cmpfloat_with_epsilon(timeline_interval_loss(last), 1.0, 1e-9);
    timeline_free(&t);
}

static void test_many_intervals_and_early_events(void)
{
    timeline t;
    timeline_init(&t, 5000000, 0.1);
    uint64_t totals[ATTACK_KIND_COUNT] = {0};
    g_assert_cmpuint(timeline_index(&t, 4000000), ==, SIZE_MAX);
    timeline_on_sent(&t, 4000000); /* before the start: ignored */
    g_assert_cmpuint(timeline_close(&t, 4000000, false, totals, 0, 0), ==, 0);
    /* 200 intervals close at once (the table grows while pointers are kept). */
    totals[ATTACK_MALFORMED] = 123;
    g_assert_cmpuint(timeline_close(&t, 25000000, false, totals, 10, 0), ==, 200);
    g_assert_cmpuint(t.intervals[199].attack_sent[ATTACK_MALFORMED], ==, 123);
    g_assert_cmpuint(t.intervals[0].attack_sent[ATTACK_MALFORMED], ==, 0);
    g_assert_cmpfloat(timeline_interval_loss(&t.intervals[3]), <, 0);
    timeline_free(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/timeline/echoes_by_send_time", test_echoes_filed_by_send_time);
    g_test_add_func("/timeline/many_intervals", test_many_intervals_and_early_events);
    return g_test_run();
}
