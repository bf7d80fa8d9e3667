/* Whether a worker is genuinely overloaded, from what the worker itself sees:
 * wake-ups that end with the socket still not drained (full batches up to the
 * per-wake cap), the socket's receive-queue depth and the kernel's count of
 * datagrams it dropped for a full queue (SO_MEMINFO). Its output is the
 * admission chance the worker can afford for packets of flooded streams
 * (stream_guard.h): full while the worker keeps up; cut multiplicatively on
 * each tick that shows overload, raised additively on each calm one, so it
 * settles where the worker just keeps up. Pure state, one per worker. */
#ifndef MOAT_LOAD_MONITOR_H
#define MOAT_LOAD_MONITOR_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    uint32_t chance;           /* out of MOAT_GUARD_CHANCE_ALL */
    uint32_t backlogged_wakes; /* since the last tick */
    uint64_t wakes;
    uint64_t datagrams;
    uint64_t kernel_drops; /* last SK_MEMINFO_DROPS seen */
    bool drops_known;
    uint64_t overloaded_ticks;
} moat_load_monitor;

/* What the socket reported at a tick. */
typedef struct {
    uint32_t queued_bytes; /* SK_MEMINFO_RMEM_ALLOC */
    uint32_t buffer_bytes; /* SK_MEMINFO_RCVBUF */
    uint64_t drops;        /* SK_MEMINFO_DROPS, cumulative */
    bool valid;
} moat_socket_load;

void moat_load_monitor_init(moat_load_monitor *monitor);
/* After each wake-up's receive loop: datagrams read, and whether the socket
 * ran dry (false: the per-wake cap ended it with datagrams still queued). */
void moat_load_monitor_note_wake(moat_load_monitor *monitor, unsigned datagrams, bool drained);
/* Timer tick; returns true when this tick saw overload. */
bool moat_load_monitor_tick(moat_load_monitor *monitor, const moat_socket_load *socket);
uint32_t moat_load_monitor_chance(const moat_load_monitor *monitor);
/* Reads SO_MEMINFO of a socket (one syscall). */
moat_socket_load moat_socket_load_read(int fd);

#endif
