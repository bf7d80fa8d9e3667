/* Owns the overload test of a worker and the admission chance it yields. */
#include "prefilter/load_monitor.h"

#include "prefilter/stream_guard.h"

#include <linux/sock_diag.h>
#include <string.h>
#include <sys/socket.h>

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

/* The lowest chance: even at the worst, some of every stream gets through. */
#define MIN_CHANCE (MOAT_GUARD_CHANCE_ALL / 1024)

void moat_load_monitor_init(moat_load_monitor *monitor)
{
    memset(monitor, 0, sizeof *monitor);
    monitor->chance = MOAT_GUARD_CHANCE_ALL;
    monitor->slice_us = MOAT_LOAD_POLL_MAX_SLICE_US;
}

void moat_load_monitor_note_wake(moat_load_monitor *monitor, unsigned datagrams, bool drained)
{
    monitor->wakes++;
    monitor->datagrams += datagrams;
    if (!drained)
        monitor->backlogged_wakes++;
}

/* The rate since the last tick, as datagrams per 10 ms (the thresholds'
 * unit); a tick that came early or late counts for its real length. */
static uint64_t per_10ms(uint64_t datagrams, uint64_t elapsed_us)
{
    if (elapsed_us == 0)
        elapsed_us = 1;
    return datagrams * 10000u / elapsed_us;
}

static void update_polling(moat_load_monitor *monitor, uint64_t elapsed_us)
{
    uint64_t rate = per_10ms(monitor->datagrams - monitor->datagrams_at_tick, elapsed_us);
    monitor->datagrams_at_tick = monitor->datagrams;
    if (!monitor->polling && rate >= MOAT_LOAD_POLL_ON_PER_TICK)
        monitor->polling = true;
    else if (monitor->polling && rate <= MOAT_LOAD_POLL_OFF_PER_TICK)
        monitor->polling = false;
    /* rate datagrams arrive in 10000 us. */
    uint64_t slice = rate ? MOAT_LOAD_POLL_BATCH * 10000u / rate : MOAT_LOAD_POLL_MAX_SLICE_US;
    if (slice < MOAT_LOAD_POLL_MIN_SLICE_US)
        slice = MOAT_LOAD_POLL_MIN_SLICE_US;
    if (slice > MOAT_LOAD_POLL_MAX_SLICE_US)
        slice = MOAT_LOAD_POLL_MAX_SLICE_US;
    monitor->slice_us = (uint32_t)slice;
}

bool moat_load_monitor_tick(moat_load_monitor *monitor, const moat_socket_load *socket,
                            uint64_t elapsed_us)
{
    update_polling(monitor, elapsed_us);
    /* Shedding loses packets that would otherwise only be late: it engages
     * only when the queue is on its way to overflowing, not when a wake-up
     * merely found a backlog (a worker descheduled for a few milliseconds). */
    bool backlogged = monitor->backlogged_wakes > 0;
    monitor->backlogged_wakes = 0;
    bool overloaded = false;
    if (socket->valid) {
        uint32_t quarter = socket->buffer_bytes / 4;
        bool filling = socket->buffer_bytes && socket->queued_bytes > quarter;
        /* sk_drops also counts what a socket filter (eBPF) dropped, which
         * costs the worker nothing: drops mean overload only while the queue
         * is also filling. */
        bool dropping = monitor->drops_known && socket->drops > monitor->kernel_drops;
        monitor->kernel_drops = socket->drops;
        monitor->drops_known = true;
        overloaded = (filling && (backlogged || dropping)) ||
                     (socket->buffer_bytes && socket->queued_bytes > 2 * quarter);
    } else {
        overloaded = backlogged;
    }
    if (overloaded) {
        monitor->overloaded_ticks++;
        uint32_t cut = monitor->chance / 4 * 3;
        monitor->chance = cut > MIN_CHANCE ? cut : MIN_CHANCE;
    } else if (monitor->chance < MOAT_GUARD_CHANCE_ALL) {
        uint32_t raised = monitor->chance + MOAT_GUARD_CHANCE_ALL / 32;
        monitor->chance = raised < MOAT_GUARD_CHANCE_ALL ? raised : MOAT_GUARD_CHANCE_ALL;
    }
    return overloaded;
}

uint32_t moat_load_monitor_chance(const moat_load_monitor *monitor)
{
    return monitor->chance;
}

moat_socket_load moat_socket_load_read(int fd)
{
    moat_socket_load load = {0};
    uint32_t info[SK_MEMINFO_VARS];
    socklen_t length = sizeof info;
    if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info, &length) != 0 ||
        length < sizeof(uint32_t) * (SK_MEMINFO_DROPS + 1))
        return load;
    load.queued_bytes = info[SK_MEMINFO_RMEM_ALLOC];
    load.buffer_bytes = info[SK_MEMINFO_RCVBUF];
    load.drops = info[SK_MEMINFO_DROPS];
    load.valid = true;
    return load;
}
