/* Whether a worker is genuinely overloaded, from what the worker itself sees:
 * the socket's receive-queue depth (SO_MEMINFO), corroborated by wake-ups
 * that end with the socket still not drained (full batches up to the
 * per-wake cap) or by the kernel's count of dropped datagrams: overloaded
 * when the queue is over half full, or over a quarter full and growing. Its output is the
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
    uint64_t datagrams_at_tick; /* datagrams when the last tick ran */
    bool polling;               /* read the socket on a timer, not per arrival */
    uint32_t slice_us;          /* the timer's period while polling */
} moat_load_monitor;

/* Interrupt moderation: above this many datagrams per 10 ms the
 * worker stops waking up per arrival and reads the socket on a timer instead
 * (a flood arrives spread out, so waking per arrival costs a wake-up per few
 * packets); below the lower mark it goes back. The period is chosen for about
 * MOAT_LOAD_POLL_BATCH datagrams per read, within the bounds below: a
 * legitimate packet waits at most MOAT_LOAD_POLL_MAX_SLICE_US more. */
#define MOAT_LOAD_POLL_ON_PER_TICK  50
#define MOAT_LOAD_POLL_OFF_PER_TICK 20
#define MOAT_LOAD_POLL_BATCH        32
#define MOAT_LOAD_POLL_MIN_SLICE_US 100
#define MOAT_LOAD_POLL_MAX_SLICE_US 1000

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
/* Timer tick, elapsed_us after the last (ticks are 10 to 15 ms apart);
 * returns true when this tick saw overload. */
bool moat_load_monitor_tick(moat_load_monitor *monitor, const moat_socket_load *socket,
                            uint64_t elapsed_us);
uint32_t moat_load_monitor_chance(const moat_load_monitor *monitor);
/* Whether the worker should poll its socket on a timer (updated each tick). */
static inline bool moat_load_monitor_polling(const moat_load_monitor *monitor)
{
    return monitor->polling;
}
static inline uint32_t moat_load_monitor_slice_us(const moat_load_monitor *monitor)
{
    return monitor->slice_us;
}
/* Reads SO_MEMINFO of a socket (one syscall). */
moat_socket_load moat_socket_load_read(int fd);

#endif
