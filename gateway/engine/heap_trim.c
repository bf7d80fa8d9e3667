/* The worker's heap-trim pacing (heap_trim.h) and the trim itself. */
#include "engine/heap_trim.h"

#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

bool moat_heap_trim_due(moat_heap_trim *trim, uint64_t events, uint64_t now_us)
{
    if (events != trim->events_seen) {
        trim->events_seen = events;
        if (!trim->pending)
            trim->first_event_us = now_us;
        trim->pending = true;
        trim->last_event_us = now_us;
    }
    if (!trim->pending)
        return false;
    if (trim->last_trim_us != 0 && now_us - trim->last_trim_us < MOAT_HEAP_TRIM_INTERVAL_US)
        return false;
    if (now_us - trim->last_event_us < MOAT_HEAP_TRIM_QUIET_US &&
        now_us - trim->first_event_us < MOAT_HEAP_TRIM_MAX_WAIT_US)
        return false;
    trim->pending = false;
    trim->last_trim_us = now_us;
    return true;
}

uint64_t moat_heap_trim_run(void)
{
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
    clock_gettime(CLOCK_MONOTONIC, &end);
    return (uint64_t)(end.tv_sec - start.tv_sec) * 1000000000ull + (uint64_t)end.tv_nsec -
           (uint64_t)start.tv_nsec;
}
