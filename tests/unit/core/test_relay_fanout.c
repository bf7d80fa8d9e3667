/* The relay's target sets and fan-out lists (engine/relay.h,
 * engine/relay_fanout.h): one ring slot per packet per consumer whatever
 * the number of targets there, drops counted per target, targets on the
 * producer's worker served at once, references handed back exactly once
 * through republishing and freeing, one fan-out's flood kept to its
 * source's share per consumer, and (suite tsan) a producer, a consumer and a
 * control thread republishing the list at the same time. */
#include <glib.h>
#include <stdatomic.h>
#include <string.h>

#include "engine/relay.h"
#include "engine/relay_fanout.h"

typedef struct {
    atomic_int refs;
    atomic_uint delivered;
    atomic_uint next; /* the next sequence expected */
    atomic_uint out_of_order;
} target;

typedef struct {
    atomic_uint wakes;
} context;

static bool deliver(void *user, void *t, const uint8_t *data, size_t length)
{
    target *x = t;
    if (length >= 4) {
        uint32_t seq;
        memcpy(&seq, data, 4);
        if (seq < atomic_load(&x->next))
            atomic_fetch_add(&x->out_of_order, 1);
        atomic_store(&x->next, seq + 1);
    }
    atomic_fetch_add(&x->delivered, 1);
    return true;
}

static void release_target(void *user, void *t)
{
    atomic_fetch_sub(&((target *)t)->refs, 1);
}

static void wake(void *user, unsigned consumer)
{
    atomic_fetch_add(&((context *)user)->wakes, 1);
}

static moat_relay *make(context *c, unsigned workers, size_t slots, size_t pool)
{
    memset(c, 0, sizeof *c);
    moat_relay_ops ops = {deliver, release_target, wake, c};
    return moat_relay_new(workers, slots, pool, &ops);
}

/* Publishes targets[0..n) on consumers[]: one reference each, ours. */
static void publish(moat_relay_fanout *f, target *targets, const unsigned *consumers, size_t n)
{
    void **list = g_new(void *, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        atomic_fetch_add(&targets[i].refs, 1);
        list[i] = &targets[i];
    }
    moat_relay_fanout_publish(f, list, consumers, n);
    g_free(list);
}

static unsigned total_delivered(target *targets, size_t n)
{
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += atomic_load(&targets[i].delivered);
    return sum;
}

static int total_refs(target *targets, size_t n)
{
    int sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += atomic_load(&targets[i].refs);
    return sum;
}

/* 1500 targets on two other workers through rings of 4 slots: four packets
 * fit (one slot per consumer each), the fifth drops 1500 copies. */
static void test_one_slot_per_consumer(void)
{
    context c;
    moat_relay *relay = make(&c, 3, 4, 16);
    moat_relay_set_current(0);
    enum { N = 1500 };
    target *targets = g_new0(target, N);
    unsigned *consumers = g_new(unsigned, N);
    for (size_t i = 0; i < N; i++)
        consumers[i] = i < 1000 ? 1 : 2;
    moat_relay_fanout *f = moat_relay_fanout_new(relay, NULL);
    publish(f, targets, consumers, N);
    g_assert_cmpuint(moat_relay_fanout_size(f), ==, N);
    uint8_t packet[1200] = {0};
    for (uint32_t i = 0; i < 4; i++) {
        memcpy(packet, &i, 4);
        g_assert_cmpuint(moat_relay_fanout_send(f, packet, sizeof packet), ==, N);
    }
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL), ==, 0);
    g_assert_cmpuint(atomic_load(&c.wakes), ==, 2); /* one per consumer */
    g_assert_cmpuint(moat_relay_fanout_send(f, packet, sizeof packet), ==, 0);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL), ==, N);
    g_assert_cmpuint(moat_relay_drain(relay, 1), ==, 4 * 1000); /* targets */
    g_assert_cmpuint(moat_relay_drain(relay, 2), ==, 4 * 500);
    g_assert_cmpuint(total_delivered(targets, N), ==, 4 * N);
    g_assert_cmpuint(moat_relay_delivered(relay), ==, 4 * N);
    for (size_t i = 0; i < N; i++)
        g_assert_cmpuint(atomic_load(&targets[i].out_of_order), ==, 0);
    g_assert_cmpint(total_refs(targets, N), ==, N); /* the list's */
    moat_relay_fanout_free(f);
    g_assert_cmpint(total_refs(targets, N), ==, 0);
    moat_relay_free(relay);
    moat_relay_set_current(-1);
    g_free(targets);
    g_free(consumers);
}

/* Targets on the producer's own worker are served at once, no ring. */
static void test_own_worker_at_once(void)
{
    context c;
    moat_relay *relay = make(&c, 2, 4, 16);
    moat_relay_set_current(1);
    target t[3] = {0};
    unsigned consumers[] = {1, 1, 0};
    moat_relay_fanout *f = moat_relay_fanout_new(relay, NULL);
    publish(f, t, consumers, 3);
    uint8_t packet[16] = {0};
    for (int i = 0; i < 100; i++)
        g_assert_cmpuint(moat_relay_fanout_send(f, packet, sizeof packet), ==, i < 4 ? 3 : 2);
    g_assert_cmpuint(atomic_load(&t[0].delivered), ==, 100);
    g_assert_cmpuint(atomic_load(&t[1].delivered), ==, 100);
    g_assert_cmpuint(atomic_load(&t[2].delivered), ==, 0);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL), ==, 96);
    moat_relay_drain(relay, 0);
    g_assert_cmpuint(atomic_load(&t[2].delivered), ==, 4);
    moat_relay_fanout_free(f);
    moat_relay_free(relay);
    g_assert_cmpint(total_refs(t, 3), ==, 0);
    moat_relay_set_current(-1);
}

/* A packet queued before a republish still reaches the old list; the
 * removed target's references come back once it is delivered; queued
 * entries are released by moat_relay_free. */
static void test_republish_keeps_queued(void)
{
    context c;
    moat_relay *relay = make(&c, 2, 8, 8);
    moat_relay_set_current(0);
    target t[2] = {0};
    unsigned consumers[] = {1, 1};
    moat_relay_fanout *f = moat_relay_fanout_new(relay, NULL);
    publish(f, t, consumers, 2);
    uint8_t packet[16] = {0};
    g_assert_cmpuint(moat_relay_fanout_send(f, packet, sizeof packet), ==, 2);
    publish(f, t, consumers, 1); /* t[1] leaves */
    g_assert_cmpuint(moat_relay_fanout_version(f), ==, 2);
    g_assert_cmpint(atomic_load(&t[1].refs), ==, 1); /* the queued entry's set */
    g_assert_cmpuint(moat_relay_fanout_send(f, packet, sizeof packet), ==, 1);
    moat_relay_drain(relay, 1);
    g_assert_cmpuint(atomic_load(&t[0].delivered), ==, 2);
    g_assert_cmpuint(atomic_load(&t[1].delivered), ==, 1);
    g_assert_cmpint(atomic_load(&t[1].refs), ==, 0);
    publish(f, NULL, NULL, 0); /* empty */
    g_assert_cmpuint(moat_relay_fanout_send(f, packet, sizeof packet), ==, 0);
    publish(f, t, consumers, 2);
    g_assert_cmpuint(moat_relay_fanout_send(f, packet, sizeof packet), ==, 2);
    moat_relay_fanout_free(f);
    g_assert_cmpint(total_refs(t, 2), ==, 2); /* still queued */
    moat_relay_free(relay);
    g_assert_cmpint(total_refs(t, 2), ==, 0);
    moat_relay_set_current(-1);
}

/* A worker that stops draining holds at most its share of the producer's
 * pool (8 buffers, 2 other workers: 4), so the other worker still gets
 * every packet (the whole pool went to the stalled one before: pool_empty
 * from the 9th packet on). */
static void test_stalled_consumer_keeps_its_share(void)
{
    context c;
    moat_relay *relay = make(&c, 3, 64, 8);
    moat_relay_set_current(0);
    target t[2] = {0};
    unsigned consumers[] = {1, 2};
    moat_relay_fanout *f = moat_relay_fanout_new(relay, NULL);
    publish(f, t, consumers, 2);
    uint8_t packet[16] = {0};
    for (uint32_t i = 0; i < 40; i++) {
        memcpy(packet, &i, 4);
        moat_relay_fanout_send(f, packet, sizeof packet);
        moat_relay_drain(relay, 2); /* worker 1 never drains */
    }
    g_assert_cmpuint(atomic_load(&t[1].delivered), ==, 40);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_POOL_EMPTY), ==, 0);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL), ==, 36);
    moat_relay_drain(relay, 1);
    g_assert_cmpuint(atomic_load(&t[0].delivered), ==, 4);
    moat_relay_fanout_free(f);
    moat_relay_free(relay);
    g_assert_cmpint(total_refs(t, 2), ==, 0);
    moat_relay_set_current(-1);
}

/* Two rooms' publishers on worker 0, their subscribers on worker 1, which
 * lags: one publisher floods. It has at most its source's share waiting
 * there (pool 64: 8) and the rest drop as source_full, so the other
 * publisher still gets a buffer for every packet (before, the flood took
 * the whole pool and the other room lost everything as pool_empty). The
 * shares come back as the consumer drains, and a source outlives its
 * owner's reference while its packets wait. */
static void test_one_source_keeps_to_its_share(void)
{
    context c;
    moat_relay *relay = make(&c, 2, 256, 64);
    moat_relay_set_current(0);
    target flood_subs[3] = {0}, room_subs[2] = {0};
    unsigned ones[] = {1, 1, 1};
    moat_relay_source *flood_source = moat_relay_source_new(relay);
    moat_relay_source *room_source = moat_relay_source_new(relay);
    moat_relay_fanout *flood = moat_relay_fanout_new(relay, flood_source);
    moat_relay_fanout *room = moat_relay_fanout_new(relay, room_source);
    publish(flood, flood_subs, ones, 3);
    publish(room, room_subs, ones, 2);
    uint8_t packet[1200] = {0};
    const size_t cap = 64 / 8;
    for (uint32_t i = 0; i < 100; i++) {
        memcpy(packet, &i, 4);
        g_assert_cmpuint(moat_relay_fanout_send(flood, packet, sizeof packet), ==, i < cap ? 3 : 0);
    }
    g_assert_cmpuint(moat_relay_source_queued(flood_source, 1), ==, cap);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_SOURCE_FULL), ==, 3 * (100 - cap));
    for (uint32_t i = 0; i < 40; i++) {
        memcpy(packet, &i, 4);
        g_assert_cmpuint(moat_relay_fanout_send(room, packet, sizeof packet), ==, 2);
        if (i % 4 == 3)
            moat_relay_drain(relay, 1);
    }
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_POOL_EMPTY), ==, 0);
    g_assert_cmpuint(total_delivered(room_subs, 2), ==, 2 * 40);
    g_assert_cmpuint(total_delivered(flood_subs, 3), ==, 3 * cap);
    g_assert_cmpuint(moat_relay_source_queued(flood_source, 1), ==, 0);
    /* Drained: the flood may send again. */
    g_assert_cmpuint(moat_relay_fanout_send(flood, packet, sizeof packet), ==, 3);
    moat_relay_fanout_free(flood);
    moat_relay_source_unref(flood_source); /* its packet still waits */
    moat_relay_drain(relay, 1);
    g_assert_cmpuint(total_delivered(flood_subs, 3), ==, 3 * (cap + 1));
    moat_relay_fanout_free(room);
    moat_relay_source_unref(room_source);
    moat_relay_free(relay);
    g_assert_cmpint(total_refs(flood_subs, 3) + total_refs(room_subs, 2), ==, 0);
    moat_relay_set_current(-1);
}

/* The share is per consumer: a publisher whose subscribers on worker 1
 * stall still reaches those on worker 2 with every packet. */
static void test_source_share_is_per_consumer(void)
{
    context c;
    moat_relay *relay = make(&c, 3, 256, 64);
    moat_relay_set_current(0);
    target t[2] = {0};
    unsigned consumers[] = {1, 2};
    moat_relay_source *source = moat_relay_source_new(relay);
    moat_relay_fanout *f = moat_relay_fanout_new(relay, source);
    publish(f, t, consumers, 2);
    uint8_t packet[16] = {0};
    for (uint32_t i = 0; i < 40; i++) {
        memcpy(packet, &i, 4);
        moat_relay_fanout_send(f, packet, sizeof packet);
        moat_relay_drain(relay, 2); /* worker 1 never drains */
    }
    g_assert_cmpuint(atomic_load(&t[1].delivered), ==, 40);
    g_assert_cmpuint(moat_relay_source_queued(source, 1), ==, 8);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_SOURCE_FULL), ==, 32);
    moat_relay_drain(relay, 1);
    g_assert_cmpuint(atomic_load(&t[0].delivered), ==, 8);
    moat_relay_fanout_free(f);
    moat_relay_source_unref(source);
    moat_relay_free(relay);
    g_assert_cmpint(total_refs(t, 2), ==, 0);
    moat_relay_set_current(-1);
}

/* A target on no worker is released at publish; sets of any size. */
static void test_sets(void)
{
    context c;
    moat_relay *relay = make(&c, 2, 4, 4);
    target t[2] = {0};
    unsigned consumers[] = {7, 1};
    moat_relay_fanout *f = moat_relay_fanout_new(relay, NULL);
    publish(f, t, consumers, 2);
    g_assert_cmpint(atomic_load(&t[0].refs), ==, 0);
    g_assert_cmpuint(moat_relay_fanout_size(f), ==, 1);
    moat_relay_fanout_free(f);
    atomic_fetch_add(&t[1].refs, 1);
    void *one = &t[1];
    moat_relay_set *set = moat_relay_set_new(relay, 1, &one, 1);
    g_assert_cmpuint(moat_relay_set_size(set), ==, 1);
    g_assert_cmpuint(moat_relay_set_consumer(set), ==, 1);
    uint8_t big[MOAT_RELAY_MTU + 1] = {0};
    moat_relay_set_current(0);
    g_assert_cmpuint(moat_relay_send_sets(relay, NULL, &set, 1, big, sizeof big), ==, 0);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_TOO_BIG), ==, 1);
    moat_relay_set_unref(set);
    g_assert_cmpint(total_refs(t, 2), ==, 0);
    g_assert_null(moat_relay_set_new(relay, 2, NULL, 0));
    moat_relay_free(relay);
    moat_relay_set_current(-1);
}

/* ---- threads (suite tsan) ---- */

enum { THREAD_TARGETS = 64, THREAD_PACKETS = 20000 };

typedef struct {
    moat_relay *relay;
    moat_relay_fanout *fanout;
    target *targets;
    atomic_bool done;
    atomic_uint_fast64_t sent; /* targets the producer queued to */
} shared;

static gpointer producer(gpointer data)
{
    shared *s = data;
    moat_relay_set_current(0);
    uint8_t packet[200] = {0};
    for (uint32_t i = 0; i < THREAD_PACKETS; i++) {
        memcpy(packet, &i, 4);
        atomic_fetch_add(&s->sent, moat_relay_fanout_send(s->fanout, packet, sizeof packet));
        if ((i & 31) == 31)
            g_thread_yield();
    }
    atomic_store(&s->done, true);
    return NULL;
}

static gpointer consumer(gpointer data)
{
    shared *s = data;
    moat_relay_set_current(1);
    while (!atomic_load(&s->done))
        if (moat_relay_drain(s->relay, 1) == 0)
            g_thread_yield();
    moat_relay_drain(s->relay, 1);
    return NULL;
}

static void test_threads_republish(void)
{
    context c;
    moat_relay *relay = make(&c, 2, 64, 64);
    shared s = {.relay = relay, .fanout = moat_relay_fanout_new(relay, NULL)};
    s.targets = g_new0(target, THREAD_TARGETS);
    unsigned consumers[THREAD_TARGETS];
    for (size_t i = 0; i < THREAD_TARGETS; i++)
        consumers[i] = 1;
    publish(s.fanout, s.targets, consumers, THREAD_TARGETS);
    GThread *p = g_thread_new("producer", producer, &s);
    GThread *q = g_thread_new("consumer", consumer, &s);
    /* The control thread: lists of changing sizes while packets flow. */
    for (size_t round = 0; !atomic_load(&s.done); round++) {
        publish(s.fanout, s.targets, consumers, 1 + round % THREAD_TARGETS);
        g_thread_yield();
    }
    g_thread_join(p);
    g_thread_join(q);
    g_assert_cmpuint(total_delivered(s.targets, THREAD_TARGETS), ==, atomic_load(&s.sent));
    for (size_t i = 0; i < THREAD_TARGETS; i++)
        g_assert_cmpuint(atomic_load(&s.targets[i].out_of_order), ==, 0);
    g_assert_cmpuint(moat_relay_delivered(relay) +
                         moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL) +
                         moat_relay_dropped(relay, MOAT_RELAY_DROP_POOL_EMPTY),
                     >, 0);
    moat_relay_fanout_free(s.fanout);
    moat_relay_free(relay);
    g_assert_cmpint(total_refs(s.targets, THREAD_TARGETS), ==, 0);
    g_free(s.targets);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/relay-fanout/one-slot-per-consumer", test_one_slot_per_consumer);
    g_test_add_func("/relay-fanout/own-worker-at-once", test_own_worker_at_once);
    g_test_add_func("/relay-fanout/republish-keeps-queued", test_republish_keeps_queued);
    g_test_add_func("/relay-fanout/sets", test_sets);
    g_test_add_func("/relay-fanout/stalled-consumer-keeps-its-share",
                    test_stalled_consumer_keeps_its_share);
    g_test_add_func("/relay-fanout/one-source-keeps-to-its-share",
                    test_one_source_keeps_to_its_share);
    g_test_add_func("/relay-fanout/source-share-is-per-consumer",
                    test_source_share_is_per_consumer);
    g_test_add_func("/relay-fanout/threads-republish", test_threads_republish);
    return g_test_run();
}
