/* A fast non-cryptographic generator for packet contents (forged payloads,
 * packet sizes, SSRCs), seeded from the kernel. Attack traffic needs volume,
 * not secrecy; keys and ICE credentials come from the CSPRNG instead. */
#ifndef FLOOD_RANDOM_H
#define FLOOD_RANDOM_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t state;
} flood_random;

/* Seeds from getrandom; falls back to the clock and the address of r. */
void flood_random_seed(flood_random *r);
uint32_t flood_random_u32(flood_random *r);
/* Uniform in [low, high]. */
uint32_t flood_random_range(flood_random *r, uint32_t low, uint32_t high);
void flood_random_fill(flood_random *r, uint8_t *out, size_t length);

#endif
