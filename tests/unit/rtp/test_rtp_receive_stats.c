/* RFC 3550 appendix A receiver statistics: probation, loss, reordering,
 * duplicates, wrap-around, restarts, jitter, LSR/DLSR and the NACK list. */
#include <glib.h>
#include <string.h>

#include "rtp/rtp_receive_stats.h"

/* Feeds seq with a timestamp and arrival that give zero jitter. */
static moat_rtp_seq_result feed(moat_rtp_receive_stats *s, uint16_t seq)
{
    return moat_rtp_receive_stats_update(s, seq, (uint32_t)seq * 960, (uint32_t)seq * 960 + 77);
}

static void test_probation(void)
{
    moat_rtp_receive_stats s;
    moat_rtcp_report_block rb;
    moat_rtp_receive_stats_init(&s, 0x1234, MOAT_RTP_MIN_SEQUENTIAL);
    g_assert_false(moat_rtp_receive_stats_fill_report(&s, 0, &rb));
    g_assert_cmpint(feed(&s, 500), ==, MOAT_RTP_SEQ_PROBATION);
    /* Out of sequence: probation starts over from this packet. */
    g_assert_cmpint(feed(&s, 900), ==, MOAT_RTP_SEQ_PROBATION);
    g_assert_cmpint(feed(&s, 901), ==, MOAT_RTP_SEQ_VALID);
    g_assert_cmpint(feed(&s, 902), ==, MOAT_RTP_SEQ_VALID);
    g_assert_true(moat_rtp_receive_stats_fill_report(&s, 0, &rb));
    g_assert_cmpuint(rb.ssrc, ==, 0x1234);
    g_assert_cmpuint(rb.highest_sequence, ==, 902);
    g_assert_cmpint(rb.cumulative_lost, ==, 0);
    g_assert_cmpuint(s.base_seq, ==, 901);
    g_assert_cmpuint(s.received, ==, 2);

    /* Without probation the first packet counts. */
    moat_rtp_receive_stats_init(&s, 1, 0);
    g_assert_cmpint(feed(&s, 7), ==, MOAT_RTP_SEQ_VALID);
    g_assert_cmpuint(s.received, ==, 1);
    g_assert_cmpuint(s.base_seq, ==, 7);
}

static void test_loss_and_fraction(void)
{
    moat_rtp_receive_stats s;
    moat_rtcp_report_block rb;
    moat_rtp_receive_stats_init(&s, 1, 0);
    /* 1000..1099 with every tenth missing: 100 expected, 90 received. */
    for (uint16_t seq = 1000; seq < 1100; seq++) {
        if (seq % 10 != 5)
            feed(&s, seq);
    }
    g_assert_true(moat_rtp_receive_stats_fill_report(&s, 0, &rb));
    g_assert_cmpuint(rb.highest_sequence, ==, 1099);
    g_assert_cmpint(rb.cumulative_lost, ==, 10);
    g_assert_cmpuint(rb.fraction_lost, ==, 10 * 256 / 100); /* 25 */

    /* A clean interval: fraction back to 0, cumulative unchanged. */
    for (uint16_t seq = 1100; seq < 1150; seq++)
        feed(&s, seq);
    g_assert_true(moat_rtp_receive_stats_fill_report(&s, 0, &rb));
    g_assert_cmpint(rb.cumulative_lost, ==, 10);
    g_assert_cmpuint(rb.fraction_lost, ==, 0);

    /* An interval with 3 of 4 lost. */
    feed(&s, 1153);
    g_assert_true(moat_rtp_receive_stats_fill_report(&s, 0, &rb));
    g_assert_cmpint(rb.cumulative_lost, ==, 13);
    g_assert_cmpuint(rb.fraction_lost, ==, 3 * 256 / 4);
}

static void test_reorder_and_duplicate(void)
{
    moat_rtp_receive_stats s;
    moat_rtcp_report_block rb;
    uint16_t missing[16];
    moat_rtp_receive_stats_init(&s, 1, 0);
    feed(&s, 1);
    feed(&s, 2);
    feed(&s, 4);
    g_assert_cmpuint(moat_rtp_receive_stats_missing(&s, missing, 16), ==, 1);
    g_assert_cmpuint(missing[0], ==, 3);
    g_assert_cmpint(feed(&s, 3), ==, MOAT_RTP_SEQ_VALID);
    g_assert_cmpuint(moat_rtp_receive_stats_missing(&s, missing, 16), ==, 0);
    feed(&s, 5);
    g_assert_true(moat_rtp_receive_stats_fill_report(&s, 0, &rb));
    g_assert_cmpuint(rb.highest_sequence, ==, 5);
    g_assert_cmpint(rb.cumulative_lost, ==, 0);
    /* A duplicate counts as received, so the loss goes negative (A.3). */
    feed(&s, 5);
    g_assert_true(moat_rtp_receive_stats_fill_report(&s, 0, &rb));
    g_assert_cmpint(rb.cumulative_lost, ==, -1);
    g_assert_cmpuint(rb.fraction_lost, ==, 0);
}

static void test_wrap(void)
{
    moat_rtp_receive_stats s;
    moat_rtcp_report_block rb;
    uint16_t missing[16];
    moat_rtp_receive_stats_init(&s, 1, 0);
    /* 65530..65535, then 0..5 with 65534 late and 1 lost. */
    for (uint32_t seq = 65530; seq <= 65535; seq++) {
        if (seq != 65534)
            feed(&s, (uint16_t)seq);
    }
    feed(&s, 0);
    g_assert_cmpuint(moat_rtp_receive_stats_extended_max(&s), ==, 65536);
    g_assert_cmpuint(moat_rtp_receive_stats_missing(&s, missing, 16), ==, 1);
    g_assert_cmpuint(missing[0], ==, 65534);
    /* The late packet from the previous cycle. */
    g_assert_cmpint(feed(&s, 65534), ==, MOAT_RTP_SEQ_VALID);
    g_assert_cmpuint(moat_rtp_receive_stats_extended_max(&s), ==, 65536);
    for (uint16_t seq = 2; seq <= 5; seq++)
        feed(&s, seq);
    g_assert_cmpuint(moat_rtp_receive_stats_missing(&s, missing, 16), ==, 1);
    g_assert_cmpuint(missing[0], ==, 1);
    g_assert_true(moat_rtp_receive_stats_fill_report(&s, 0, &rb));
    g_assert_cmpuint(rb.highest_sequence, ==, 65536 + 5);
    g_assert_cmpuint(s.cycles, ==, 65536);
    g_assert_cmpint(rb.cumulative_lost, ==, 1);
}

static void test_bad_seq_restart(void)
{
    moat_rtp_receive_stats s;
    moat_rtcp_report_block rb;
    moat_rtp_receive_stats_init(&s, 1, 0);
    for (uint16_t seq = 100; seq < 110; seq++)
        feed(&s, seq);
    /* A jump of 5000: ignored once... */
    g_assert_cmpint(feed(&s, 5109), ==, MOAT_RTP_SEQ_BAD);
    g_assert_cmpuint(s.received, ==, 10);
    g_assert_cmpuint(moat_rtp_receive_stats_extended_max(&s), ==, 109);
    /* ...a lone stray afterwards is ignored too... */
    g_assert_cmpint(feed(&s, 20000), ==, MOAT_RTP_SEQ_BAD);
    g_assert_cmpint(feed(&s, 110), ==, MOAT_RTP_SEQ_VALID);
    /* ...but two in sequence restart the statistics. */
    g_assert_cmpint(feed(&s, 30000), ==, MOAT_RTP_SEQ_BAD);
    g_assert_cmpint(feed(&s, 30001), ==, MOAT_RTP_SEQ_RESTARTED);
    g_assert_cmpint(feed(&s, 30002), ==, MOAT_RTP_SEQ_VALID);
    g_assert_true(moat_rtp_receive_stats_fill_report(&s, 0, &rb));
    g_assert_cmpuint(rb.highest_sequence, ==, 30002);
    g_assert_cmpint(rb.cumulative_lost, ==, 0);
    g_assert_cmpuint(s.received, ==, 2);
    /* A gap below MAX_DROPOUT is loss, not a restart. */
    g_assert_cmpint(feed(&s, 30002 + 2999), ==, MOAT_RTP_SEQ_VALID);
}

static void test_jitter_hand_computed(void)
{
    /* 90 kHz video, a frame every 3000 ticks. Transit times (arrival minus
     * timestamp) are 1000, 1100, 900, 1200, so |D| = 100, 200, 300. With
     * A.8's integer form J16 += |D| - ((J16 + 8) >> 4):
     *   J16 = 0 + 100 - 0 = 100
     *   J16 = 100 + 200 - (108 >> 4 = 6) = 294
     *   J16 = 294 + 300 - (302 >> 4 = 18) = 576, jitter = 576 >> 4 = 36.
     * The floating-point recurrence gives 35.96. */
    moat_rtp_receive_stats s;
    moat_rtcp_report_block rb;
    moat_rtp_receive_stats_init(&s, 1, 0);
    const uint32_t ts[] = {0, 3000, 6000, 9000};
    const uint32_t arrival[] = {1000, 4100, 6900, 10200};
    const uint32_t want[] = {0, 100 >> 4, 294 >> 4, 576 >> 4};
    for (size_t i = 0; i < 4; i++) {
        moat_rtp_receive_stats_update(&s, (uint16_t)(10 + i), ts[i], arrival[i]);
        g_assert_cmpuint(moat_rtp_receive_stats_jitter(&s), ==, want[i]);
    }
    g_assert_true(moat_rtp_receive_stats_fill_report(&s, 0, &rb));
    g_assert_cmpuint(rb.jitter, ==, 36);

    /* Arrival clock and timestamps wrapping modulo 2^32 change nothing. */
    moat_rtp_receive_stats_init(&s, 1, 0);
    for (size_t i = 0; i < 4; i++)
        moat_rtp_receive_stats_update(&s, (uint16_t)(65534 + i), ts[i] - 4500, arrival[i] - 2000);
    g_assert_cmpuint(moat_rtp_receive_stats_jitter(&s), ==, 36);
}

static void test_last_sr(void)
{
    moat_rtp_receive_stats s;
    moat_rtcp_report_block rb;
    moat_rtp_receive_stats_init(&s, 1, 0);
    feed(&s, 1);
    g_assert_true(moat_rtp_receive_stats_fill_report(&s, 5000000, &rb));
    g_assert_cmpuint(rb.last_sr, ==, 0);
    g_assert_cmpuint(rb.delay_since_last_sr, ==, 0);
    moat_rtp_receive_stats_on_sr(&s, 0x0123456789ABCDEFull, 1000000);
    /* Half a second later: DLSR = 0.5 * 65536. */
    g_assert_true(moat_rtp_receive_stats_fill_report(&s, 1500000, &rb));
    g_assert_cmpuint(rb.last_sr, ==, 0x456789AB);
    g_assert_cmpuint(rb.delay_since_last_sr, ==, 32768);
}

static void test_missing_list(void)
{
    moat_rtp_receive_stats s;
    uint16_t missing[600];
    moat_rtp_receive_stats_init(&s, 1, 0);
    for (uint16_t seq = 10; seq <= 20; seq++) {
        if (seq != 12 && seq != 15 && seq != 16)
            feed(&s, seq);
    }
    g_assert_cmpuint(moat_rtp_receive_stats_missing(&s, missing, 600), ==, 3);
    g_assert_cmpuint(missing[0], ==, 12);
    g_assert_cmpuint(missing[1], ==, 15);
    g_assert_cmpuint(missing[2], ==, 16);
    /* Bounded by the caller's room, oldest first. */
    g_assert_cmpuint(moat_rtp_receive_stats_missing(&s, missing, 2), ==, 2);
    g_assert_cmpuint(missing[1], ==, 15);
    /* Given up on 15. */
    moat_rtp_receive_stats_forget_missing(&s, 15);
    g_assert_cmpuint(moat_rtp_receive_stats_missing(&s, missing, 600), ==, 2);
    g_assert_cmpuint(missing[0], ==, 12);
    g_assert_cmpuint(missing[1], ==, 16);
    /* Nothing before the first packet is reported. */
    moat_rtp_receive_stats_forget_missing(&s, 3);
    g_assert_cmpuint(moat_rtp_receive_stats_missing(&s, missing, 600), ==, 2);

    /* Losses older than the window drop out of the list. */
    for (uint32_t seq = 21; seq < 21 + MOAT_RTP_MISSING_WINDOW; seq++)
        feed(&s, (uint16_t)seq);
    g_assert_cmpuint(moat_rtp_receive_stats_missing(&s, missing, 600), ==, 0);

    /* A gap of 1000 leaves exactly the window's worth missing. */
    uint16_t high = (uint16_t)moat_rtp_receive_stats_extended_max(&s);
    feed(&s, (uint16_t)(high + 1000));
    size_t n = moat_rtp_receive_stats_missing(&s, missing, 600);
    g_assert_cmpuint(n, ==, MOAT_RTP_MISSING_WINDOW - 1);
    g_assert_cmpuint(missing[n - 1], ==, (uint16_t)(high + 999));
    g_assert_cmpuint(missing[0], ==, (uint16_t)(high + 1000 - (MOAT_RTP_MISSING_WINDOW - 1)));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rtp/receive-stats/probation", test_probation);
    g_test_add_func("/rtp/receive-stats/loss-and-fraction", test_loss_and_fraction);
    g_test_add_func("/rtp/receive-stats/reorder-and-duplicate", test_reorder_and_duplicate);
    g_test_add_func("/rtp/receive-stats/wrap", test_wrap);
    g_test_add_func("/rtp/receive-stats/bad-seq-restart", test_bad_seq_restart);
    g_test_add_func("/rtp/receive-stats/jitter-hand-computed", test_jitter_hand_computed);
    g_test_add_func("/rtp/receive-stats/last-sr", test_last_sr);
    g_test_add_func("/rtp/receive-stats/missing-list", test_missing_list);
    return g_test_run();
}
