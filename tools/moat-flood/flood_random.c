/* A fast non-cryptographic generator (seeded from getrandom) for forged
 * payloads, sizes and SSRCs; keys and ICE credentials come from the CSPRNG. */
#include "flood_random.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>

void flood_random_seed(flood_random *r)
{
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        seed = (uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 32) ^ (uint64_t)(uintptr_t)r;
    }
    /* xorshift64* must not start from zero. */
    r->state = seed != 0 ? seed : 0x9E3779B97F4A7C15ull;
}

static uint64_t next(flood_random *r)
{
    uint64_t x = r->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

uint32_t flood_random_u32(flood_random *r)
{
    return (uint32_t)(next(r) >> 32);
}

uint32_t flood_random_range(flood_random *r, uint32_t low, uint32_t high)
{
    if (high <= low)
        return low;
    uint64_t span = (uint64_t)high - low + 1;
    return low + (uint32_t)(((next(r) >> 32) * span) >> 32);
}

void flood_random_fill(flood_random *r, uint8_t *out, size_t length)
{
    while (length >= 8) {
        uint64_t v = next(r);
        memcpy(out, &v, 8);
        out += 8;
        length -= 8;
    }
    if (length > 0) {
        uint64_t v = next(r);
        memcpy(out, &v, length);
    }
}
