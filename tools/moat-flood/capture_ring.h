/* The last legitimate SRTP packets a session sent, kept for the replay
 * attack. The media loop stores, the attack thread copies out; a mutex
 * guards the slots. */
#ifndef CAPTURE_RING_H
#define CAPTURE_RING_H

#include <stddef.h>
#include <stdint.h>

#define CAPTURE_SLOTS      64
#define CAPTURE_MAX_PACKET 1500

typedef struct capture_ring capture_ring;

capture_ring *capture_ring_new(void);
void capture_ring_free(capture_ring *r);

/* Keeps a copy (longer packets are not kept), overwriting the oldest. */
void capture_ring_store(capture_ring *r, const uint8_t *packet, size_t length, uint64_t now_us);

/* Copies a packet captured at least min_age_us before now_us into out
 * (the receiver must already have authenticated the original). *cursor
 * walks the slots round-robin between calls. Returns the length, or 0 when
 * no packet is old enough or out is too small. */
size_t capture_ring_pick(capture_ring *r, uint64_t now_us, uint64_t min_age_us, unsigned *cursor,
                         uint8_t *out, size_t capacity);

#endif
