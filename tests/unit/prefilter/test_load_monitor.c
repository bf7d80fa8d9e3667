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
    /* A backlog alone (the worker was descheduled a moment) is no overload. */
    moat_load_monitor_note_wake(&monitor, 1024, false);
    g_assert_false(moat_load_monitor_tick(&monitor, &socket));
    /* Wake-ups that end with the socket not drained, the queue filling. */
    socket.queued_bytes = socket.buffer_bytes / 3;
    for (int tick = 0; tick < 5; tick++) {
        moat_load_monitor_note_wake(&monitor, 1024, false);
        g_assert_true(moat_load_monitor_tick(&monitor, &socket));
    }
    uint32_t cut = moat_load_monitor_chance(&monitor);
    g_assert_cmpuint(cut, <, MOAT_GUARD_CHANCE_ALL / 3);
    g_assert_cmpuint(cut, >, 0);
    /* A queue over half full at a tick is overload on its own. */
    socket.queued_bytes = socket.buffer_bytes / 2 + 1;
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
    socket.queued_bytes = socket.buffer_bytes / 3;
    g_assert_true(moat_load_monitor_tick(&monitor, &socket));
}

static void test_polling_follows_the_arrival_rate(void)
{
    moat_load_monitor monitor;
    moat_load_monitor_init(&monitor);
    moat_socket_load socket = {.buffer_bytes = 1 << 20, .valid = true};
    /* A call's few packets per tick: woken per arrival. */
    moat_load_monitor_note_wake(&monitor, 2, true);
    moat_load_monitor_tick(&monitor, &socket);
    g_assert_false(moat_load_monitor_polling(&monitor));
    /* A flood spread over many wake-ups of a few datagrams each: polling. */
    for (int i = 0; i < 100; i++)
        moat_load_monitor_note_wake(&monitor, 2, true);
    moat_load_monitor_tick(&monitor, &socket);
    g_assert_true(moat_load_monitor_polling(&monitor));
    /* 200 datagrams per 10 ms: about 32 per read, every 1.6 ms, capped at 1 ms. */
    g_assert_cmpuint(moat_load_monitor_slice_us(&monitor), ==, MOAT_LOAD_POLL_MAX_SLICE_US);
    for (int i = 0; i < 100; i++)
        moat_load_monitor_note_wake(&monitor, 20, true);
    moat_load_monitor_tick(&monitor, &socket);
    g_assert_cmpuint(moat_load_monitor_slice_us(&monitor), ==, 160);
    /* Between the marks it stays; below the lower one it goes back. */
    moat_load_monitor_note_wake(&monitor, MOAT_LOAD_POLL_OFF_PER_TICK + 5, true);
    moat_load_monitor_tick(&monitor, &socket);
    g_assert_true(moat_load_monitor_polling(&monitor));
    moat_load_monitor_note_wake(&monitor, 3, true);
    moat_load_monitor_tick(&monitor, &socket);
    g_assert_false(moat_load_monitor_polling(&monitor));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/load-monitor/calm", test_calm_worker_admits_everything);
    g_test_add_func("/load-monitor/backlog", test_backlog_cuts_then_recovers);
    g_test_add_func("/load-monitor/filter-drops", test_filter_drops_are_no_overload);
    g_test_add_func("/load-monitor/polling", test_polling_follows_the_arrival_rate);
    return g_test_run();
}
