/* The one clock moat-flood schedules, paces and measures with: monotonic
 * microseconds. */
#ifndef FLOOD_CLOCK_H
#define FLOOD_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t flood_now_us(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

#endif
