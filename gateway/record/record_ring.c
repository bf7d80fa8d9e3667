/* The recorder's packet queue: a power-of-two array of fixed slots indexed
 * by two free-running counters (head written by the producer, tail by the
 * consumer). */
#include "record/record_ring.h"

#include <glib.h>
#include <stdatomic.h>
#include <string.h>

struct moat_record_ring {
    _Alignas(64) atomic_size_t head;
    _Alignas(64) atomic_size_t tail;
    size_t mask;
    moat_record_slot *slots;
};

moat_record_ring *moat_record_ring_new(size_t slots)
{
    size_t n = 1;
    while (n < slots)
        n <<= 1;
    moat_record_ring *ring = g_new0(moat_record_ring, 1);
    ring->mask = n - 1;
    ring->slots = g_new(moat_record_slot, n);
    atomic_init(&ring->head, 0);
    atomic_init(&ring->tail, 0);
    return ring;
}

void moat_record_ring_free(moat_record_ring *ring)
{
    if (!ring)
        return;
    g_free(ring->slots);
    g_free(ring);
}

bool moat_record_ring_push(moat_record_ring *ring, const uint8_t *packet, size_t length,
                           uint64_t arrival_us)
{
    size_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    size_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
    if (head - tail > ring->mask || length > MOAT_RECORD_RING_PACKET_MAX)
        return false;
    moat_record_slot *slot = &ring->slots[head & ring->mask];
    slot->arrival_us = arrival_us;
    slot->length = (uint16_t)length;
    memcpy(slot->data, packet, length);
    atomic_store_explicit(&ring->head, head + 1, memory_order_release);
    return true;
}

const moat_record_slot *moat_record_ring_peek(moat_record_ring *ring)
{
    size_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    size_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    return head == tail ? NULL : &ring->slots[tail & ring->mask];
}

void moat_record_ring_release(moat_record_ring *ring)
{
    size_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    atomic_store_explicit(&ring->tail, tail + 1, memory_order_release);
}
