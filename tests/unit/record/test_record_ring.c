/* The recorder's queue: order, a full queue drops instead of blocking,
 * oversized packets are refused, and one producer and one consumer thread
 * see every accepted packet intact and in order. */
#include "record/record_ring.h"

#include <glib.h>
#include <string.h>

static void test_order_and_full(void)
{
    moat_record_ring *ring = moat_record_ring_new(5); /* rounded up to 8 */
    uint8_t packet[12] = {0x80};
    for (int i = 0; i < 8; i++) {
        packet[3] = (uint8_t)i;
        g_assert_true(moat_record_ring_push(ring, packet, sizeof packet, (uint64_t)i));
    }
    g_assert_false(moat_record_ring_push(ring, packet, sizeof packet, 99)); /* full: dropped */
    for (int i = 0; i < 8; i++) {
        const moat_record_slot *slot = moat_record_ring_peek(ring);
        g_assert_nonnull(slot);
        g_assert_cmpuint(slot->arrival_us, ==, (uint64_t)i);
        g_assert_cmpuint(slot->length, ==, sizeof packet);
        g_assert_cmpuint(slot->data[3], ==, (unsigned)i);
        moat_record_ring_release(ring);
    }
    g_assert_null(moat_record_ring_peek(ring));
    g_assert_true(moat_record_ring_push(ring, packet, sizeof packet, 8)); /* room again */
    moat_record_ring_free(ring);
}

static void test_oversized(void)
{
    moat_record_ring *ring = moat_record_ring_new(4);
    static uint8_t big[MOAT_RECORD_RING_PACKET_MAX + 1];
    g_assert_false(moat_record_ring_push(ring, big, sizeof big, 0));
    g_assert_true(moat_record_ring_push(ring, big, MOAT_RECORD_RING_PACKET_MAX, 0));
    moat_record_ring_free(ring);
}

#define THREAD_PACKETS 200000

static gpointer producer(gpointer data)
{
    moat_record_ring *ring = data;
    uint8_t packet[64];
    for (uint32_t i = 0; i < THREAD_PACKETS;) {
        memset(packet, (int)(i & 0xff), sizeof packet);
        memcpy(packet, &i, sizeof i);
        if (moat_record_ring_push(ring, packet, 16 + i % 48, i))
            i++;
        else
            g_thread_yield();
    }
    return NULL;
}

static void test_two_threads(void)
{
    moat_record_ring *ring = moat_record_ring_new(64);
    GThread *thread = g_thread_new("producer", producer, ring);
    for (uint32_t expected = 0; expected < THREAD_PACKETS;) {
        const moat_record_slot *slot = moat_record_ring_peek(ring);
        if (!slot) {
            g_thread_yield();
            continue;
        }
        uint32_t got;
        memcpy(&got, slot->data, sizeof got);
        g_assert_cmpuint(got, ==, expected);
        g_assert_cmpuint(slot->arrival_us, ==, expected);
        g_assert_cmpuint(slot->length, ==, 16 + expected % 48);
        g_assert_cmpuint(slot->data[slot->length - 1], ==, expected & 0xff);
        moat_record_ring_release(ring);
        expected++;
    }
    g_thread_join(thread);
    moat_record_ring_free(ring);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/record_ring/order_and_full", test_order_and_full);
    g_test_add_func("/record_ring/oversized", test_oversized);
    g_test_add_func("/record_ring/two_threads", test_two_threads);
    return g_test_run();
}
