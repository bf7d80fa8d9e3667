/* Fan-out subscribers' loss counting: gaps per SSRC, wrap-around,
 * duplicates and late packets, a sender's jump (RFC 3550 A.1: a resync
 * after two sequential packets, a lone stray ignored), streams beyond the
 * table, and nothing counted before the run starts. */
#include "sfu_loss.h"

#include <glib.h>
#include <string.h>

static void test_nothing_before_counting(void)
{
    sfu_loss l;
    memset(&l, 0, sizeof l);
    sfu_loss_on_rtp(&l, 1, 10);
    g_assert_cmpuint(sfu_loss_received(&l), ==, 0);
    g_assert_cmpuint(l.n_streams, ==, 0);
}

static void test_gaps_per_ssrc(void)
{
    sfu_loss l;
    memset(&l, 0, sizeof l);
    l.counting = true;
    for (uint16_t s = 100; s < 200; s++) {
        if (s % 10 != 3) /* ten lost on the first stream */
            sfu_loss_on_rtp(&l, 0xA, s);
        sfu_loss_on_rtp(&l, 0xB, (uint16_t)(s + 5000)); /* none on the second */
    }
    g_assert_cmpuint(l.n_streams, ==, 2);
    g_assert_cmpuint(sfu_loss_received(&l), ==, 190);
    g_assert_cmpuint(sfu_loss_gaps(&l), ==, 10);
}

static void test_wrap_duplicates_and_late(void)
{
    sfu_loss l;
    memset(&l, 0, sizeof l);
    l.counting = true;
    for (uint32_t i = 0; i < 100; i++) {
        uint16_t s = (uint16_t)(65500 + i); /* wraps after 36 */
        if (i == 50)
            continue; /* lost */
        sfu_loss_on_rtp(&l, 7, s);
    }
    sfu_loss_on_rtp(&l, 7, (uint16_t)(65500 + 98)); /* duplicate */
    sfu_loss_on_rtp(&l, 7, (uint16_t)(65500 + 10)); /* very late */
    g_assert_cmpuint(l.streams[0].highest - l.streams[0].first, ==, 99);
    /* Duplicates count as received, so they hide as many gaps. */
    g_assert_cmpuint(sfu_loss_received(&l), ==, 101);
    g_assert_cmpuint(sfu_loss_gaps(&l), ==, 0);
}

/* A sender that jumps 20000 ahead (a restart, a switched source) and goes
 * on from there: a resync, not 20000 lost (before, any jump of up to 29767
 * counted as loss); the gaps on either side still count. */
static void test_large_jump_resyncs(void)
{
    sfu_loss l;
    memset(&l, 0, sizeof l);
    l.counting = true;
    for (uint16_t s = 1000; s < 1100; s++)
        if (s != 1042)
            sfu_loss_on_rtp(&l, 9, s);
    for (uint16_t s = 21100; s < 21200; s++)
        if (s != 21150)
            sfu_loss_on_rtp(&l, 9, s);
    g_assert_cmpuint(l.streams[0].resyncs, ==, 1);
    g_assert_cmpuint(sfu_loss_received(&l), ==, 198);
    g_assert_cmpuint(sfu_loss_gaps(&l), ==, 2);
}

/* One packet far ahead in a steady stream, and one just past
 * SFU_LOSS_MAX_MISORDER behind: strays, no resync, no loss. */
static void test_lone_stray_is_not_loss(void)
{
    sfu_loss l;
    memset(&l, 0, sizeof l);
    l.counting = true;
    for (uint16_t s = 1000; s < 1300; s++) {
        sfu_loss_on_rtp(&l, 9, s);
        if (s == 1050)
            sfu_loss_on_rtp(&l, 9, 30000);
        if (s == 1250)
            sfu_loss_on_rtp(&l, 9, (uint16_t)(s - SFU_LOSS_MAX_MISORDER - 1));
    }
    g_assert_cmpuint(l.streams[0].resyncs, ==, 0);
    g_assert_cmpuint(l.streams[0].highest - l.streams[0].first, ==, 299);
    g_assert_cmpuint(sfu_loss_received(&l), ==, 302);
    g_assert_cmpuint(sfu_loss_gaps(&l), ==, 0);
}

/* A jump within SFU_LOSS_MAX_DROPOUT is new: the numbers between are lost. */
static void test_gap_within_dropout_is_loss(void)
{
    sfu_loss l;
    memset(&l, 0, sizeof l);
    l.counting = true;
    sfu_loss_on_rtp(&l, 9, 100);
    sfu_loss_on_rtp(&l, 9, (uint16_t)(100 + SFU_LOSS_MAX_DROPOUT - 1));
    g_assert_cmpuint(l.streams[0].resyncs, ==, 0);
    g_assert_cmpuint(sfu_loss_gaps(&l), ==, SFU_LOSS_MAX_DROPOUT - 2);
}

static void test_too_many_streams(void)
{
    sfu_loss l;
    memset(&l, 0, sizeof l);
    l.counting = true;
    for (uint32_t ssrc = 1; ssrc <= SFU_LOSS_MAX_STREAMS + 3; ssrc++)
        sfu_loss_on_rtp(&l, ssrc, 1);
    g_assert_cmpuint(l.n_streams, ==, SFU_LOSS_MAX_STREAMS);
    g_assert_cmpuint(l.other_ssrcs, ==, 3);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tools/sfu-loss/nothing-before-counting", test_nothing_before_counting);
    g_test_add_func("/tools/sfu-loss/gaps-per-ssrc", test_gaps_per_ssrc);
    g_test_add_func("/tools/sfu-loss/wrap-duplicates-late", test_wrap_duplicates_and_late);
    g_test_add_func("/tools/sfu-loss/large-jump-resyncs", test_large_jump_resyncs);
    g_test_add_func("/tools/sfu-loss/lone-stray-is-not-loss", test_lone_stray_is_not_loss);
    g_test_add_func("/tools/sfu-loss/gap-within-dropout-is-loss", test_gap_within_dropout_is_loss);
    g_test_add_func("/tools/sfu-loss/too-many-streams", test_too_many_streams);
    return g_test_run();
}
