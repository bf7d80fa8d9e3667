/* moat-flood's reception report on the echoed stream: no block before the
 * first echo, LSR/DLSR from the endpoint's sender report on the echoed
 * SSRC (and none from another SSRC), loss over the reporting interval. */
#include "echo_stats.h"

#include <glib.h>

#define ECHO_SSRC 0x11223344u
#define NTP_SR    0x0000ABCD12345678ull /* middle 32 bits: 0xABCD1234 */

static void echo(echo_stats *e, uint16_t sequence, uint64_t now_us)
{
    echo_stats_on_echo(e, ECHO_SSRC, sequence, sequence * 3000u, now_us - 500, now_us);
}

static void test_no_block_before_an_echo(void)
{
    echo_stats e;
    echo_stats_init(&e, 90000);
    moat_rtcp_report_block block;
    g_assert_false(echo_stats_report_block(&e, 1000000, &block));
    /* A sender report before any echo names no stream we know yet. */
    g_assert_false(echo_stats_on_sender_report(&e, ECHO_SSRC, NTP_SR, 1000000));
    g_assert_cmpuint(e.sender_reports, ==, 0);
}

static void test_lsr_and_dlsr_from_the_echoed_stream(void)
{
    echo_stats e;
    echo_stats_init(&e, 90000);
    for (uint16_t s = 1; s <= 10; s++)
        echo(&e, s, 1000000 + s * 1000u);
    moat_rtcp_report_block block;
    g_assert_true(echo_stats_report_block(&e, 1100000, &block));
    g_assert_cmpuint(block.ssrc, ==, ECHO_SSRC);
    g_assert_cmpuint(block.last_sr, ==, 0); /* no SR yet */
    g_assert_cmpuint(block.delay_since_last_sr, ==, 0);

    g_assert_false(echo_stats_on_sender_report(&e, 0x55555555u, NTP_SR, 1200000));
    g_assert_true(echo_stats_on_sender_report(&e, ECHO_SSRC, NTP_SR, 1200000));
    g_assert_cmpuint(e.sender_reports, ==, 1);
    for (uint16_t s = 11; s <= 20; s++)
        if (s != 15) /* one lost in this interval */
            echo(&e, s, 1200000 + s * 1000u);
    g_assert_true(echo_stats_report_block(&e, 1700000, &block)); /* half a second later */
    g_assert_cmpuint(block.last_sr, ==, 0xABCD1234u);
    g_assert_cmpuint(block.delay_since_last_sr, ==, 32768); /* 0.5 s in 1/65536 s */
    g_assert_cmpuint(block.highest_sequence, ==, 20);
    g_assert_cmpint(block.cumulative_lost, ==, 1);
    g_assert_cmpuint(block.fraction_lost, ==, 256 / 10);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/echo_stats/no_block_before_an_echo", test_no_block_before_an_echo);
    g_test_add_func("/echo_stats/lsr_and_dlsr", test_lsr_and_dlsr_from_the_echoed_stream);
    return g_test_run();
}
