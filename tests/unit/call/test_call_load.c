/* [ng] max_load's arithmetic (call_load.h): the workers' CPU time over a
 * window as a percentage of one core, averaged over the workers, each
 * capped at 100; a window shorter than MOAT_CALL_LOAD_WINDOW_NS keeps the
 * last sample. */
#include "call/call_load.h"

#include <glib.h>

static void test_percent(void)
{
    const uint64_t second = 1000000000ull;
    uint64_t before[] = {0, 0};
    uint64_t after[] = {second / 2, second / 10};
    g_assert_cmpuint(moat_call_load_percent(before, after, 2, second), ==, 30);
    g_assert_cmpuint(moat_call_load_percent(before, after, 1, second), ==, 50);
    /* A worker's clock cannot pass the wall clock: capped at 100. */
    uint64_t busy[] = {3 * second, 0};
    g_assert_cmpuint(moat_call_load_percent(before, busy, 2, second), ==, 50);
    /* A clock that went backwards (a restarted thread) counts as idle. */
    uint64_t later[] = {5, 5};
    uint64_t earlier[] = {1, 1};
    g_assert_cmpuint(moat_call_load_percent(later, earlier, 2, second), ==, 0);
    g_assert_cmpuint(moat_call_load_percent(before, after, 0, second), ==, 0);
    g_assert_cmpuint(moat_call_load_percent(before, after, 2, 0), ==, 0);
}

static void test_sampler_window(void)
{
    moat_call_load load;
    moat_call_load_init(&load, NULL, 0); /* no workers: always 0 */
    g_assert_cmpuint(moat_call_load_sample(&load, 1000), ==, 0);
    load.percent = 77; /* as if the last window had been busy */
    g_assert_cmpuint(moat_call_load_sample(&load, 1000 + MOAT_CALL_LOAD_WINDOW_NS - 1), ==, 77);
    g_assert_cmpuint(moat_call_load_sample(&load, 1000 + MOAT_CALL_LOAD_WINDOW_NS), ==, 0);
    moat_call_load_clear(&load);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/call/load/percent", test_percent);
    g_test_add_func("/call/load/window", test_sampler_window);
    return g_test_run();
}
