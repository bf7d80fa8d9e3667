/* The worker's overload test and the admission chance it yields. */
#include "prefilter/load_monitor.h"
#include "prefilter/stream_guard.h"

#include <glib.h>

static void test_calm_worker_admits_everything(void)
{
    moat_load_monitor monitor;
    moat_load_monitor_init(&monitor);
    moat_socket_load socket = {.queued_bytes = 4096, .buffer_bytes = 1 << 20, .valid = true};
    for (int tick = 0; tick < 100; tick++) {
        moat_load_monitor_note_wake(&monitor, 3, true);
        g_assert_false(moat_load_monitor_tick(&monitor, &socket));
    }
    g_assert_cmpuint(moat_load_monitor_chance(&monitor), ==, MOAT_GUARD_CHANCE_ALL);
}

static void test_backlog_cuts_then_recovers(void)
{
    moat_load_monitor monitor;
    moat_load_monitor_init(&monitor);
    moat_socket_load socket = {.buffer_bytes = 1 << 20, .valid = true};
    /* Wake-ups that end with the socket not drained. */
    for (int tick = 0; tick < 5; tick++) {
        moat_load_monitor_note_wake(&monitor, 1024, false);
        g_assert_true(moat_load_monitor_tick(&monitor, &socket));
    }
    uint32_t cut = moat_load_monitor_chance(&monitor);
    g_assert_cmpuint(cut, <, MOAT_GUARD_CHANCE_ALL / 3);
    g_assert_cmpuint(cut, >, 0);
    /* A deep queue at a tick is overload too. */
    socket.queued_bytes = socket.buffer_bytes / 2;
    g_assert_true(moat_load_monitor_tick(&monitor, &socket));
    /* Calm again: the chance climbs back to certainty. */
    socket.queued_bytes = 0;
    for (int tick = 0; tick < 40; tick++)
        g_assert_false(moat_load_monitor_tick(&monitor, &socket));
    g_assert_cmpuint(moat_load_monitor_chance(&monitor), ==, MOAT_GUARD_CHANCE_ALL);
}

static void test_filter_drops_are_no_overload(void)
{
    moat_load_monitor monitor;
    moat_load_monitor_init(&monitor);
    /* sk_drops grows (a socket filter dropping), but the queue stays empty. */
    moat_socket_load socket = {.buffer_bytes = 1 << 20, .valid = true};
    for (uint64_t tick = 0; tick < 20; tick++) {
        socket.drops = tick * 1000;
        g_assert_false(moat_load_monitor_tick(&monitor, &socket));
    }
    /* Drops with a filling queue are. */
    socket.drops += 1000;
    socket.queued_bytes = socket.buffer_bytes / 5;
    g_assert_true(moat_load_monitor_tick(&monitor, &socket));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/load-monitor/calm", test_calm_worker_admits_everything);
    g_test_add_func("/load-monitor/backlog", test_backlog_cuts_then_recovers);
    g_test_add_func("/load-monitor/filter-drops", test_filter_drops_are_no_overload);
    return g_test_run();
}
