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
        g_assert_false(moat_load_monitor_tick(&monitor, &socket, 10000));
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
    g_assert_false(moat_load_monitor_tick(&monitor, &socket, 10000));
    /* Wake-ups that end with the socket not drained, the queue filling. */
    socket.queued_bytes = socket.buffer_bytes / 3;
    for (int tick = 0; tick < 5; tick++) {
        moat_load_monitor_note_wake(&monitor, 1024, false);
        g_assert_true(moat_load_monitor_tick(&monitor, &socket, 10000));
    }
    uint32_t cut = moat_load_monitor_chance(&monitor);
    g_assert_cmpuint(cut, <, MOAT_GUARD_CHANCE_ALL / 3);
    g_assert_cmpuint(cut, >, 0);
    /* A queue over half full at a tick is overload on its own. */
    socket.queued_bytes = socket.buffer_bytes / 2 + 1;
    g_assert_true(moat_load_monitor_tick(&monitor, &socket, 10000));
    /* Calm again: the chance climbs back to certainty. */
    socket.queued_bytes = 0;
    for (int tick = 0; tick < 40; tick++)
        g_assert_false(moat_load_monitor_tick(&monitor, &socket, 10000));
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
        g_assert_false(moat_load_monitor_tick(&monitor, &socket, 10000));
    }
    /* Drops with a filling queue are. */
    socket.drops += 1000;
    socket.queued_bytes = socket.buffer_bytes / 3;
    g_assert_true(moat_load_monitor_tick(&monitor, &socket, 10000));
}

static void test_polling_follows_the_arrival_rate(void)
{
    moat_load_monitor monitor;
    moat_load_monitor_init(&monitor);
    moat_socket_load socket = {.buffer_bytes = 1 << 20, .valid = true};
    /* A call's few packets per tick: woken per arrival. */
    moat_load_monitor_note_wake(&monitor, 2, true);
    moat_load_monitor_tick(&monitor, &socket, 10000);
    g_assert_false(moat_load_monitor_polling(&monitor));
    /* A flood spread over many wake-ups of a few datagrams each: polling. */
    for (int i = 0; i < 100; i++)
        moat_load_monitor_note_wake(&monitor, 2, true);
    moat_load_monitor_tick(&monitor, &socket, 10000);
    g_assert_true(moat_load_monitor_polling(&monitor));
    /* 200 datagrams per 10 ms: about 32 per read, every 1.6 ms, capped at 1 ms. */
    g_assert_cmpuint(moat_load_monitor_slice_us(&monitor), ==, MOAT_LOAD_POLL_MAX_SLICE_US);
    for (int i = 0; i < 100; i++)
        moat_load_monitor_note_wake(&monitor, 20, true);
    moat_load_monitor_tick(&monitor, &socket, 10000);
    g_assert_cmpuint(moat_load_monitor_slice_us(&monitor), ==, 160);
    /* Between the marks it stays; below the lower one it goes back. */
    moat_load_monitor_note_wake(&monitor, MOAT_LOAD_POLL_OFF_PER_TICK + 5, true);
    moat_load_monitor_tick(&monitor, &socket, 10000);
    g_assert_true(moat_load_monitor_polling(&monitor));
    moat_load_monitor_note_wake(&monitor, 3, true);
    moat_load_monitor_tick(&monitor, &socket, 10000);
    g_assert_false(moat_load_monitor_polling(&monitor));
}

/* Ticks come 10 to 15 ms apart: the thresholds are per 10 ms of time, not
 * per tick. */
static void test_polling_counts_a_late_tick_for_its_length(void)
{
    moat_load_monitor monitor;
    moat_load_monitor_init(&monitor);
    moat_socket_load socket = {.buffer_bytes = 1 << 20, .valid = true};
    /* 60 datagrams in 15 ms are 40 per 10 ms: below the mark, no polling. */
    moat_load_monitor_note_wake(&monitor, 60, true);
    moat_load_monitor_tick(&monitor, &socket, 15000);
    g_assert_false(moat_load_monitor_polling(&monitor));
    /* 60 in 10 ms are over it. */
    moat_load_monitor_note_wake(&monitor, 60, true);
    moat_load_monitor_tick(&monitor, &socket, 10000);
    g_assert_true(moat_load_monitor_polling(&monitor));
    /* 400 in 20 ms: 200 per 10 ms, a read every 1.6 ms, capped at 1 ms;
     * 400 in 5 ms: 800 per 10 ms, one read per 400 us. */
    moat_load_monitor_note_wake(&monitor, 400, true);
    moat_load_monitor_tick(&monitor, &socket, 20000);
    g_assert_cmpuint(moat_load_monitor_slice_us(&monitor), ==, MOAT_LOAD_POLL_MAX_SLICE_US);
    moat_load_monitor_note_wake(&monitor, 400, true);
    moat_load_monitor_tick(&monitor, &socket, 5000);
    g_assert_cmpuint(moat_load_monitor_slice_us(&monitor), ==, 400);
    /* A zero-length interval (two ticks in one microsecond) is no division
     * by zero. */
    moat_load_monitor_tick(&monitor, &socket, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/load-monitor/calm", test_calm_worker_admits_everything);
    g_test_add_func("/load-monitor/backlog", test_backlog_cuts_then_recovers);
    g_test_add_func("/load-monitor/filter-drops", test_filter_drops_are_no_overload);
    g_test_add_func("/load-monitor/polling", test_polling_follows_the_arrival_rate);
    g_test_add_func("/load-monitor/late-tick", test_polling_counts_a_late_tick_for_its_length);
    return g_test_run();
}
