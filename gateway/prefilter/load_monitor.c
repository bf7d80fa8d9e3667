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
}

void moat_load_monitor_note_wake(moat_load_monitor *monitor, unsigned datagrams, bool drained)
{
    monitor->wakes++;
    monitor->datagrams += datagrams;
    if (!drained)
        monitor->backlogged_wakes++;
}

bool moat_load_monitor_tick(moat_load_monitor *monitor, const moat_socket_load *socket)
{
    bool overloaded = monitor->backlogged_wakes > 0;
    monitor->backlogged_wakes = 0;
    if (socket->valid) {
        /* sk_drops also counts what a socket filter (eBPF) dropped, which
         * costs the worker nothing: kernel drops mean overload only while
         * the queue is also filling. */
        if (monitor->drops_known && socket->drops > monitor->kernel_drops &&
            socket->queued_bytes > socket->buffer_bytes / 8)
            overloaded = true;
        monitor->kernel_drops = socket->drops;
        monitor->drops_known = true;
        /* A queue a quarter full at a tick is one the worker is not keeping up with. */
        if (socket->buffer_bytes && socket->queued_bytes > socket->buffer_bytes / 4)
            overloaded = true;
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
