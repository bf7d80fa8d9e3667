/* Fan-out subscribers' loss counting: gaps per SSRC, wrap-around,
 * duplicates and late packets, streams beyond the table, and nothing
 * counted before the run starts. */
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
    g_test_add_func("/tools/sfu-loss/too-many-streams", test_too_many_streams);
    return g_test_run();
}
