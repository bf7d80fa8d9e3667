/* Receiver-side NACK decisions (rtp/nack_tracker.h): gaps NACKed at once
 * and again after about 1.5 round trips, repairs and duplicates told
 * apart, the round trip learned from answers, sequence wraparound, stream
 * restarts, and giving up (tries, age, room) so a keyframe can be asked. */
#include <glib.h>

#include "rtp/nack_tracker.h"

static size_t due(moat_nack_tracker *t, uint64_t now, uint16_t *out, size_t *gave_up)
{
    return moat_nack_due(t, now, out, 64, gave_up);
}

static void test_gap_and_retry(void)
{
    moat_nack_tracker t;
    moat_nack_init(&t);
    uint16_t out[64];
    size_t gave_up;
    uint64_t now = 1000000;
    g_assert_cmpint(moat_nack_on_packet(&t, 100, now), ==, MOAT_NACK_NEW);
    g_assert_cmpint(moat_nack_on_packet(&t, 101, now), ==, MOAT_NACK_NEW);
    g_assert_cmpuint(due(&t, now, out, &gave_up), ==, 0);
    /* 102 and 103 lost: NACKed at once, not again within 1.5 RTT. */
    g_assert_cmpint(moat_nack_on_packet(&t, 104, now), ==, MOAT_NACK_NEW);
    g_assert_cmpuint(due(&t, now, out, &gave_up), ==, 2);
    g_assert_cmpuint(out[0], ==, 102);
    g_assert_cmpuint(out[1], ==, 103);
    g_assert_cmpuint(due(&t, now + 100000, out, &gave_up), ==, 0);
    /* 102 answered after 40 ms: repaired, a round trip sample. */
    g_assert_cmpint(moat_nack_on_packet(&t, 102, now + 40000), ==, MOAT_NACK_REPAIRED);
    g_assert_cmpuint(moat_nack_rtt_us(&t), <, MOAT_NACK_INITIAL_RTT);
    g_assert_cmpint(moat_nack_on_packet(&t, 102, now + 41000), ==, MOAT_NACK_DUPLICATE);
    g_assert_cmpint(moat_nack_on_packet(&t, 104, now + 41000), ==, MOAT_NACK_DUPLICATE);
    /* 103 again once 1.5 RTT passed. */
    uint64_t retry = moat_nack_rtt_us(&t) * 3 / 2;
    g_assert_cmpuint(due(&t, now + retry + 1000, out, &gave_up), ==, 1);
    g_assert_cmpuint(out[0], ==, 103);
    g_assert_cmpuint(t.counters.repaired, ==, 1);
    g_assert_cmpuint(t.counters.duplicates, ==, 2);
    g_assert_cmpuint(t.counters.nacked, ==, 3);
    /* A late first arrival of a packet never missing (reordered within the
     * window, after the gap was recorded and repaired) is new. */
    g_assert_cmpint(moat_nack_on_packet(&t, 103, now + 200000), ==, MOAT_NACK_REPAIRED);
    g_assert_cmpuint(t.n_missing, ==, 0);
}

static void test_give_up(void)
{
    moat_nack_tracker t;
    moat_nack_init(&t);
    uint16_t out[64];
    size_t gave_up;
    uint64_t now = 5000000;
    moat_nack_on_packet(&t, 10, now);
    moat_nack_on_packet(&t, 12, now);
    size_t tries = 0;
    uint64_t at = now;
    for (; at < now + 2 * MOAT_NACK_MAX_AGE_US; at += 10000) {
        tries += due(&t, at, out, &gave_up);
        if (gave_up)
            break;
    }
    /* Given up before the answer could come later than the age limit;
     * tried several times meanwhile, never more than allowed. */
    g_assert_cmpuint(gave_up, ==, 1);
    g_assert_cmpuint(at - now + MOAT_NACK_INITIAL_RTT, >, MOAT_NACK_MAX_AGE_US);
    g_assert_cmpuint(at - now, <=, MOAT_NACK_MAX_AGE_US);
    g_assert_cmpuint(tries, >=, 3);
    g_assert_cmpuint(tries, <=, MOAT_NACK_MAX_TRIES);
    g_assert_cmpuint(t.n_missing, ==, 0);
    g_assert_cmpuint(t.counters.given_up, ==, 1);
    /* Arriving after all, it is relayed as new (nothing to repair). */
    g_assert_cmpint(moat_nack_on_packet(&t, 11, at), ==, MOAT_NACK_NEW);
}

static void test_wrap_restart_old(void)
{
    moat_nack_tracker t;
    moat_nack_init(&t);
    uint16_t out[64];
    size_t gave_up;
    uint64_t now = 1000000;
    moat_nack_on_packet(&t, 65534, now);
    g_assert_cmpint(moat_nack_on_packet(&t, 1, now), ==, MOAT_NACK_NEW);
    g_assert_cmpuint(due(&t, now, out, &gave_up), ==, 2);
    g_assert_cmpuint(out[0], ==, 65535);
    g_assert_cmpuint(out[1], ==, 0);
    g_assert_cmpint(moat_nack_on_packet(&t, 0, now + 30000), ==, MOAT_NACK_REPAIRED);
    /* A jump past MOAT_NACK_MAX_GAP is a restart: nothing NACKed, the
     * old losses dropped. */
    g_assert_cmpint(moat_nack_on_packet(&t, 20000, now + 40000), ==, MOAT_NACK_NEW);
    g_assert_cmpuint(t.n_missing, ==, 0);
    g_assert_cmpuint(t.counters.restarts, ==, 1);
    g_assert_cmpuint(due(&t, now + 40000, out, &gave_up), ==, 0);
    /* Older than the window: too old to tell, of no use. */
    g_assert_cmpint(moat_nack_on_packet(&t, (uint16_t)(20000 - MOAT_NACK_WINDOW - 5), now), ==,
                    MOAT_NACK_TOO_OLD);
}

static void test_bounded(void)
{
    moat_nack_tracker t;
    moat_nack_init(&t);
    uint16_t out[64];
    size_t gave_up;
    uint64_t now = 1000000;
    /* Gaps just under a restart, twice: the list holds MOAT_NACK_MAX_MISSING,
     * the oldest are given up (and reported once), a call writes at most
     * `max`. */
    moat_nack_on_packet(&t, 0, now);
    moat_nack_on_packet(&t, 400, now);
    g_assert_cmpuint(t.n_missing, ==, MOAT_NACK_MAX_MISSING);
    size_t n = due(&t, now, out, &gave_up);
    g_assert_cmpuint(n, ==, 64);
    g_assert_cmpuint(gave_up, ==, 399 - MOAT_NACK_MAX_MISSING);
    g_assert_cmpuint(out[0], ==, 400 - MOAT_NACK_MAX_MISSING);
    g_assert_cmpuint(due(&t, now, out, &gave_up), ==, 64); /* the next ones */
    g_assert_cmpuint(gave_up, ==, 0);
}

/* Gaps that overflow the list again and again (a sender jumping by 499
 * each packet): the list is always the newest MOAT_NACK_MAX_MISSING, in
 * order, everything older given up; a partly kept old list too. */
static void test_overflow_keeps_the_newest(void)
{
    moat_nack_tracker t;
    moat_nack_init(&t);
    uint64_t now = 1000000;
    uint16_t seq = 65000; /* across the wrap */
    moat_nack_on_packet(&t, seq, now);
    uint64_t missing_total = 0;
    for (int i = 0; i < 50; i++) {
        seq = (uint16_t)(seq + 499);
        missing_total += 498;
        g_assert_cmpint(moat_nack_on_packet(&t, seq, now), ==, MOAT_NACK_NEW);
        g_assert_cmpuint(t.n_missing, ==, MOAT_NACK_MAX_MISSING);
        for (size_t k = 0; k < t.n_missing; k++)
            g_assert_cmpuint(t.missing[k].seq, ==, (uint16_t)(seq - MOAT_NACK_MAX_MISSING + k));
    }
    g_assert_cmpuint(t.counters.given_up, ==, missing_total - MOAT_NACK_MAX_MISSING);
    /* 100 missing, then 200 more: the oldest 44 go, 56 stay in front. */
    moat_nack_init(&t);
    moat_nack_on_packet(&t, 0, now);
    moat_nack_on_packet(&t, 101, now);
    moat_nack_on_packet(&t, 302, now);
    g_assert_cmpuint(t.n_missing, ==, MOAT_NACK_MAX_MISSING);
    g_assert_cmpuint(t.missing[0].seq, ==, 45);
    g_assert_cmpuint(t.missing[55].seq, ==, 100);
    g_assert_cmpuint(t.missing[56].seq, ==, 102);
    g_assert_cmpuint(t.missing[255].seq, ==, 301);
    g_assert_cmpuint(t.counters.given_up, ==, 44);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/nack-tracker/gap-and-retry", test_gap_and_retry);
    g_test_add_func("/nack-tracker/give-up", test_give_up);
    g_test_add_func("/nack-tracker/wrap-restart-old", test_wrap_restart_old);
    g_test_add_func("/nack-tracker/bounded", test_bounded);
    g_test_add_func("/nack-tracker/overflow-keeps-the-newest", test_overflow_keeps_the_newest);
    return g_test_run();
}
