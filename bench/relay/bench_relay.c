/* bench/relay: the routing core's costs.
 *  1. The echo plugin's per-packet path on plugin API v2 (core demux,
 *     on_media) in ns/packet; the same source built against the tree before
 *     the routing core gives the v1 figure (README: bench/relay).
 *  2. Cross-worker relay: one producer thread fanning packets out to N
 *     targets on a consumer thread through the rings; packets delivered per
 *     second and the ring_full drops (the producer never waits).
 * Figures on a shared machine are noisy; compare within one run. */
#include "engine/relay.h"
#include "bench_quick.h"
#include "echo_path.h"

#include <glib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ECHO_PACKETS  2000000u
#define RELAY_PACKETS 200000u

typedef struct {
    atomic_uint_fast64_t delivered;
    atomic_bool done;
} sink;

static bool deliver(void *user, void *target, const uint8_t *data, size_t length)
{
    atomic_fetch_add_explicit(&((sink *)user)->delivered, 1, memory_order_relaxed);
    return true;
}

static void release_target(void *user, void *target) {}

typedef struct {
    moat_relay *relay;
    sink *sink;
} consumer_args;

static gpointer consume(gpointer data)
{
    consumer_args *a = data;
    moat_relay_set_current(1);
    while (!atomic_load(&a->sink->done))
        if (moat_relay_drain(a->relay, 1) == 0)
            g_thread_yield();
    moat_relay_drain(a->relay, 1);
    return NULL;
}

static void relay_run(size_t fanout)
{
    sink s = {0};
    moat_relay_ops ops = {deliver, release_target, NULL, &s};
    moat_relay *relay = moat_relay_new(2, 512, 1024, &ops);
    consumer_args args = {relay, &s};
    GThread *consumer = g_thread_new("consumer", consume, &args);
    moat_relay_set_current(0);
    void *targets[64];
    unsigned consumers[64];
    for (size_t i = 0; i < fanout; i++) {
        targets[i] = &targets[i];
        consumers[i] = 1;
    }
    uint8_t packet[1200];
    memset(packet, 0x5a, sizeof packet);
    gint64 start = g_get_monotonic_time();
    for (unsigned i = 0; i < BENCH_SCALE(RELAY_PACKETS, RELAY_PACKETS / 20); i++) {
        moat_relay_send(relay, targets, consumers, fanout, packet, sizeof packet);
        /* Paced in bursts like a worker's batches: a full ring drops. */
        if ((i & 63) == 63)
            g_thread_yield();
    }
    atomic_store(&s.done, true);
    g_thread_join(consumer);
    double seconds = (double)(g_get_monotonic_time() - start) / 1e6;
    uint64_t delivered = atomic_load(&s.delivered);
    printf("relay fanout=%zu delivered=%" G_GUINT64_FORMAT
           " per_s=%.0f ring_full=%" G_GUINT64_FORMAT " pool_empty=%" G_GUINT64_FORMAT "\n",
           fanout, (guint64)delivered, delivered / seconds,
           (guint64)moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL),
           (guint64)moat_relay_dropped(relay, MOAT_RELAY_DROP_POOL_EMPTY));
    moat_relay_free(relay);
    moat_relay_set_current(-1);
}

int main(void)
{
    double best = 1e9;
    for (int i = 0; i < 5; i++) {
        double ns = echo_path_ns(BENCH_SCALE(ECHO_PACKETS, ECHO_PACKETS / 20));
        if (ns < best)
            best = ns;
    }
    printf("echo_path api=v2 ns_per_packet=%.1f (best of 5)\n", best);
    relay_run(1);
    relay_run(8);
    relay_run(32);
    return 0;
}
