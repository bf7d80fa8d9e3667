/* The worker's heap-trim pacing: a trim once a burst of handshakes has been
 * quiet for a while, never more often than the interval, and not held off
 * for ever by steady arrivals. */
#include "engine/heap_trim.h"

#include <glib.h>

#define MS 1000ull

static void test_nothing_without_events(void)
{
    moat_heap_trim trim = {0};
    for (uint64_t now = 1000 * MS; now < 60000 * MS; now += 10 * MS)
        g_assert_false(moat_heap_trim_due(&trim, 0, now));
}

static void test_once_after_a_quiet_burst(void)
{
    moat_heap_trim trim = {0};
    uint64_t now = 1000 * MS, events = 0;
    /* 20 handshakes 100 ms apart: no trim while they arrive. */
    for (int i = 0; i < 20; i++, now += 100 * MS)
        g_assert_false(moat_heap_trim_due(&trim, ++events, now));
    uint64_t last_event = now - 100 * MS;
    /* Then quiet: due once, at the end of the quiet period. */
    int trims = 0;
    uint64_t trimmed_at = 0;
    for (; now < last_event + 20000 * MS; now += 10 * MS) {
        if (moat_heap_trim_due(&trim, events, now)) {
            trims++;
            trimmed_at = now;
        }
    }
    g_assert_cmpint(trims, ==, 1);
    g_assert_cmpuint(trimmed_at - last_event, >=, MOAT_HEAP_TRIM_QUIET_US);
    g_assert_cmpuint(trimmed_at - last_event, <, MOAT_HEAP_TRIM_QUIET_US + 20 * MS);
}

static void test_steady_arrivals_bounded_by_max_wait_and_interval(void)
{
    moat_heap_trim trim = {0};
    uint64_t start = 1000 * MS, events = 0;
    int trims = 0;
    uint64_t first = 0, previous = 0;
    /* A handshake every 200 ms for 60 s: never quiet. */
    for (uint64_t now = start; now < start + 60000 * MS; now += 10 * MS) {
        if ((now - start) % (200 * MS) == 0)
            events++;
        if (moat_heap_trim_due(&trim, events, now)) {
            if (previous)
                g_assert_cmpuint(now - previous, >=, MOAT_HEAP_TRIM_MAX_WAIT_US);
            if (!first)
                first = now;
            previous = now;
            trims++;
        }
    }
    g_assert_cmpuint(first - start, >=, MOAT_HEAP_TRIM_MAX_WAIT_US);
    g_assert_cmpuint(first - start, <, MOAT_HEAP_TRIM_MAX_WAIT_US + 20 * MS);
    /* Then one per MAX_WAIT (the longer of the two waits) or a little
     * more: at least 4 more in the remaining 50 s, never closer. */
    g_assert_cmpint(trims, >=, 5);
    g_assert_cmpint(trims, <=, 6);
}

static void test_interval_between_bursts(void)
{
    moat_heap_trim trim = {0};
    uint64_t now = 1000 * MS;
    g_assert_false(moat_heap_trim_due(&trim, 1, now));
    now += MOAT_HEAP_TRIM_QUIET_US;
    g_assert_true(moat_heap_trim_due(&trim, 1, now));
    /* A second burst right after: waits for the interval, then trims. */
    now += 100 * MS;
    g_assert_false(moat_heap_trim_due(&trim, 2, now));
    now += MOAT_HEAP_TRIM_QUIET_US;
    g_assert_false(moat_heap_trim_due(&trim, 2, now));
    uint64_t trimmed = 1000 * MS + MOAT_HEAP_TRIM_QUIET_US;
    while (!moat_heap_trim_due(&trim, 2, now))
        now += 10 * MS;
    g_assert_cmpuint(now - trimmed, >=, MOAT_HEAP_TRIM_INTERVAL_US);
    g_assert_cmpuint(now - trimmed, <, MOAT_HEAP_TRIM_INTERVAL_US + 20 * MS);
    /* Nothing new: no further trim. */
    for (uint64_t end = now + 30000 * MS; now < end; now += 10 * MS)
        g_assert_false(moat_heap_trim_due(&trim, 2, now));
}

static void test_run_returns(void)
{
    /* The trim itself is safe to call on any thread at any time. */
    g_assert_cmpuint(moat_heap_trim_run(), <, 10ull * 1000 * 1000 * 1000);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/heap-trim/nothing-without-events", test_nothing_without_events);
    g_test_add_func("/heap-trim/once-after-a-quiet-burst", test_once_after_a_quiet_burst);
    g_test_add_func("/heap-trim/steady-arrivals",
                    test_steady_arrivals_bounded_by_max_wait_and_interval);
    g_test_add_func("/heap-trim/interval-between-bursts", test_interval_between_bursts);
    g_test_add_func("/heap-trim/run", test_run_returns);
    return g_test_run();
}
