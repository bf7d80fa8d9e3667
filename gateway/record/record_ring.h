/* A bounded single-producer, single-consumer queue of RTP packets: the media
 * worker pushes (never blocks: a full queue drops), the recorder's thread
 * pops. Lock-free; the two threads share only the head and tail indexes. */
#ifndef MOAT_RECORD_RING_H
#define MOAT_RECORD_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_RECORD_RING_PACKET_MAX 1500

typedef struct {
    uint64_t arrival_us;
    uint16_t length;
    uint8_t data[MOAT_RECORD_RING_PACKET_MAX];
} moat_record_slot;

typedef struct moat_record_ring moat_record_ring;

/* `slots` is rounded up to a power of two. Any thread. */
moat_record_ring *moat_record_ring_new(size_t slots);
void moat_record_ring_free(moat_record_ring *ring);

/* Producer. False when the queue is full or the packet too long (dropped). */
bool moat_record_ring_push(moat_record_ring *ring, const uint8_t *packet, size_t length,
                           uint64_t arrival_us);
/* Consumer: the oldest packet, or NULL when empty; valid until release. */
const moat_record_slot *moat_record_ring_peek(moat_record_ring *ring);
void moat_record_ring_release(moat_record_ring *ring);

#endif
