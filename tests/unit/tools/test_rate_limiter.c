/* The token bucket pacing each attack class, on a synthetic clock. */
#include "rate_limiter.h"

#include <glib.h>

static void test_rate_is_kept(void)
{
    rate_limiter l;
    rate_limiter_init(&l, 2000, 32, 0);
    g_assert_cmpuint(rate_limiter_take(&l, 32, 0), ==, 0); /* starts empty */
    size_t granted = 0;
    /* Ten seconds in 1 ms steps: exactly 2000 tokens per second. */
    for (uint64_t t = 1000; t <= 10000000; t += 1000)
        granted += rate_limiter_take(&l, 32, t);
    g_assert_cmpuint(granted, ==, 20000);
}

static void test_burst_caps_a_stall_and_refund_returns(void)
{
    rate_limiter l;
    rate_limiter_init(&l, 1000, 50, 0);
    /* A 1 s stall earns 1000 tokens, of which the burst keeps 50. */
    g_assert_cmpuint(rate_limiter_take(&l, 1000, 1000000), ==, 50);
    g_assert_cmpuint(rate_limiter_take(&l, 1000, 1000000), ==, 0);
    rate_limiter_refund(&l, 20);
    g_assert_cmpuint(rate_limiter_take(&l, 5, 1000000), ==, 5);
    g_assert_cmpuint(rate_limiter_take(&l, 100, 1000000), ==, 15);
}

static void test_wait_and_rate_change(void)
{
    rate_limiter l;
    rate_limiter_init(&l, 1000, 10, 0);
    uint64_t wait = rate_limiter_wait_us(&l, 4, 0);
    g_assert_cmpuint(wait, >=, 4000);
    g_assert_cmpuint(wait, <=, 4001);
    g_assert_cmpuint(rate_limiter_wait_us(&l, 100, 0), >=, 10000); /* clamped to the burst */
    g_assert_cmpuint(rate_limiter_take(&l, 10, wait), ==, 4);
    rate_limiter_set_rate(&l, 10000, 100, wait);
    g_assert_cmpuint(rate_limiter_take(&l, 100, wait + 5000), ==, 50);
    rate_limiter_set_rate(&l, 0, 10, wait + 5000);
    g_assert_cmpuint(rate_limiter_wait_us(&l, 1, wait + 5000), ==, UINT64_MAX);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rate_limiter/rate", test_rate_is_kept);
    g_test_add_func("/rate_limiter/burst_refund", test_burst_caps_a_stall_and_refund_returns);
    g_test_add_func("/rate_limiter/wait_change", test_wait_and_rate_change);
    return g_test_run();
}
