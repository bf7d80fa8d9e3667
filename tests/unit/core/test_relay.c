/* The routing core's cross-worker relay (core/relay.h): one copy shared by
 * every target, references handed back exactly once, full rings and empty
 * pools drop and count without blocking, buffers return to their pool,
 * wake-ups only when a consumer has drained, two producer threads feeding a
 * consumer thread lose nothing and keep each producer's order, and a
 * source has at most its share waiting per consumer (also across
 * threads). */
#include <glib.h>
#include <stdatomic.h>
#include <string.h>

#include "engine/relay.h"

typedef struct {
    atomic_int refs;
    atomic_uint delivered;
    atomic_uint last[2]; /* per producer: last sequence seen + 1 */
    atomic_uint out_of_order;
    bool gone;
} target;

typedef struct {
    atomic_uint wakes;
    atomic_uint released;
    const uint8_t *last_data; /* single-thread tests: the shared copy */
} context;

static bool deliver(void *user, void *t, const uint8_t *data, size_t length)
{
    context *c = user;
    target *x = t;
    c->last_data = data;
    if (x->gone)
        return false;
    if (length >= 8) {
        uint32_t producer, seq;
        memcpy(&producer, data, 4);
        memcpy(&seq, data + 4, 4);
        if (producer < 2) {
            if (seq + 1 <= atomic_load(&x->last[producer]))
                atomic_fetch_add(&x->out_of_order, 1);
            atomic_store(&x->last[producer], seq + 1);
        }
    }
    atomic_fetch_add(&x->delivered, 1);
    return true;
}

static void release_target(void *user, void *t)
{
    context *c = user;
    atomic_fetch_sub(&((target *)t)->refs, 1);
    atomic_fetch_add(&c->released, 1);
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

static size_t send_to(moat_relay *relay, target **targets, const unsigned *consumers, size_t n,
                      const uint8_t *packet, size_t length)
{
    for (size_t i = 0; i < n; i++)
        atomic_fetch_add(&targets[i]->refs, 1);
    return moat_relay_send(relay, NULL, (void *const *)targets, consumers, n, packet, length);
}

static void test_fan_out_one_copy(void)
{
    context c;
    moat_relay *relay = make(&c, 2, 8, 4);
    moat_relay_set_current(0);
    target a = {0}, b = {0}, d = {0};
    target *targets[] = {&a, &b, &d};
    unsigned consumers[] = {1, 1, 1};
    uint8_t packet[100] = {9, 9, 9, 9};
    g_assert_cmpuint(send_to(relay, targets, consumers, 3, packet, sizeof packet), ==, 3);
    g_assert_cmpuint(atomic_load(&c.wakes), ==, 1); /* one wake for three packets */
    g_assert_cmpuint(moat_relay_drain(relay, 1), ==, 3);
    g_assert_cmpuint(
        atomic_load(&a.delivered) + atomic_load(&b.delivered) + atomic_load(&d.delivered), ==, 3);
    g_assert_cmpint(atomic_load(&a.refs) + atomic_load(&b.refs) + atomic_load(&d.refs), ==, 0);
    g_assert_cmpuint(moat_relay_delivered(relay), ==, 3);
    /* Drained: the next packet wakes again. */
    g_assert_cmpuint(send_to(relay, targets, consumers, 1, packet, sizeof packet), ==, 1);
    g_assert_cmpuint(atomic_load(&c.wakes), ==, 2);
    moat_relay_drain(relay, 1);
    moat_relay_free(relay);
    moat_relay_set_current(-1);
}

/* A pool of 4 carries thousands of packets: buffers come back. */
static void test_buffers_return_to_pool(void)
{
    context c;
    moat_relay *relay = make(&c, 2, 8, 4);
    moat_relay_set_current(0);
    target a = {0};
    target *targets[] = {&a, &a};
    unsigned consumers[] = {1, 1};
    uint8_t packet[1200] = {0};
    for (int i = 0; i < 5000; i++) {
        g_assert_cmpuint(send_to(relay, targets, consumers, 2, packet, sizeof packet), ==, 2);
        if (i % 3 == 2)
            moat_relay_drain(relay, 1);
    }
    moat_relay_drain(relay, 1);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_POOL_EMPTY), ==, 0);
    g_assert_cmpuint(atomic_load(&a.delivered), ==, 10000);
    g_assert_cmpint(atomic_load(&a.refs), ==, 0);
    moat_relay_free(relay);
    moat_relay_set_current(-1);
}

static void test_full_ring_and_empty_pool_drop(void)
{
    context c;
    moat_relay *relay = make(&c, 2, 4, 2);
    moat_relay_set_current(0);
    target a = {0};
    target *targets[] = {&a, &a, &a, &a, &a, &a};
    unsigned consumers[] = {1, 1, 1, 1, 1, 1};
    uint8_t packet[20] = {0};
    /* Ring of 4: two of six are dropped as ring_full. */
    g_assert_cmpuint(send_to(relay, targets, consumers, 6, packet, sizeof packet), ==, 4);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL), ==, 2);
    g_assert_cmpint(atomic_load(&a.refs), ==, 4);
    /* A dropped packet's buffer goes straight back: still ring_full. */
    g_assert_cmpuint(send_to(relay, targets, consumers, 1, packet, sizeof packet), ==, 0);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL), ==, 3);
    /* Pool of 2: one buffer held by ring 0->1, one by ring 0->0, then empty. */
    unsigned zero[] = {0};
    g_assert_cmpuint(send_to(relay, targets, zero, 1, packet, sizeof packet), ==, 1);
    g_assert_cmpuint(send_to(relay, targets, zero, 1, packet, sizeof packet), ==, 0);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_POOL_EMPTY), ==, 1);
    g_assert_cmpuint(moat_relay_drain(relay, 0), ==, 1);
    uint8_t big[MOAT_RELAY_MTU + 1] = {0};
    g_assert_cmpuint(send_to(relay, targets, consumers, 1, big, sizeof big), ==, 0);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_TOO_BIG), ==, 1);
    g_assert_cmpuint(moat_relay_drain(relay, 1), ==, 4);
    g_assert_cmpint(atomic_load(&a.refs), ==, 0);
    /* A target that ended before delivery: counted, reference handed back. */
    a.gone = true;
    g_assert_cmpuint(send_to(relay, targets, consumers, 1, packet, sizeof packet), ==, 1);
    moat_relay_drain(relay, 1);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_TARGET_GONE), ==, 1);
    g_assert_cmpint(atomic_load(&a.refs), ==, 0);
    /* What is still queued at free is released. */
    a.gone = false;
    send_to(relay, targets, consumers, 2, packet, sizeof packet);
    moat_relay_free(relay);
    g_assert_cmpint(atomic_load(&a.refs), ==, 0);
    moat_relay_set_current(-1);
}

/* Not a worker (control thread): the shared row still works. */
static void test_foreign_producer(void)
{
    context c;
    moat_relay *relay = make(&c, 1, 8, 4);
    target a = {0};
    target *targets[] = {&a};
    unsigned consumers[] = {0};
    uint8_t packet[20] = {0};
    g_assert_cmpint(moat_relay_current(), ==, -1);
    g_assert_cmpuint(send_to(relay, targets, consumers, 1, packet, sizeof packet), ==, 1);
    unsigned bad[] = {7};
    g_assert_cmpuint(send_to(relay, targets, bad, 1, packet, sizeof packet), ==, 0);
    g_assert_cmpuint(moat_relay_drain(relay, 0), ==, 1);
    g_assert_cmpint(atomic_load(&a.refs), ==, 0);
    moat_relay_free(relay);
}

#define PER_PRODUCER 200000u

typedef struct {
    moat_relay *relay;
    target *t;
    unsigned index;
    atomic_bool *done;
} producer_args;

static gpointer produce(gpointer data)
{
    producer_args *a = data;
    moat_relay_set_current((int)a->index);
    target *targets[] = {a->t};
    unsigned consumers[] = {2};
    uint8_t packet[64] = {0};
    for (uint32_t seq = 0; seq < PER_PRODUCER; seq++) {
        memcpy(packet, &a->index, 4);
        memcpy(packet + 4, &seq, 4);
        /* Bounded retry: a full ring is a drop, the test waits instead. */
        for (int tries = 0; tries < 1000000; tries++) {
            if (send_to(a->relay, targets, consumers, 1, packet, sizeof packet) == 1)
                break;
            g_thread_yield();
        }
    }
    return NULL;
}

static void test_threads_keep_order(void)
{
    context c;
    moat_relay *relay = make(&c, 3, 256, 512);
    target t = {0};
    atomic_bool done = false;
    producer_args args[2] = {{relay, &t, 0, &done}, {relay, &t, 1, &done}};
    GThread *p0 = g_thread_new("p0", produce, &args[0]);
    GThread *p1 = g_thread_new("p1", produce, &args[1]);
    moat_relay_set_current(2);
    gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while (atomic_load(&t.delivered) < 2 * PER_PRODUCER && g_get_monotonic_time() < deadline) {
        if (moat_relay_drain(relay, 2) == 0)
            g_thread_yield();
    }
    g_thread_join(p0);
    g_thread_join(p1);
    moat_relay_drain(relay, 2);
    g_assert_cmpuint(atomic_load(&t.delivered), ==, 2 * PER_PRODUCER);
    g_assert_cmpuint(atomic_load(&t.out_of_order), ==, 0);
    g_assert_cmpint(atomic_load(&t.refs), ==, 0);
    g_assert_cmpuint(atomic_load(&c.released), ==,
                     2 * PER_PRODUCER + moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL) +
                         moat_relay_dropped(relay, MOAT_RELAY_DROP_POOL_EMPTY));
    moat_relay_free(relay);
    moat_relay_set_current(-1);
}

/* Per-target sends counted against sources: one source at its cap (pool
 * 32: 4 waiting per consumer) drops as source_full while another on the
 * same (producer, consumer) pair still gets buffers; the count falls as
 * the consumer drains, and a source outlives its owner's reference while
 * its packets wait. */
static void test_source_keeps_to_its_share(void)
{
    context c;
    moat_relay *relay = make(&c, 2, 64, 32);
    moat_relay_set_current(0);
    g_assert_cmpuint(moat_relay_source_cap(relay), ==, 4);
    moat_relay_source *flood = moat_relay_source_new(relay);
    moat_relay_source *other = moat_relay_source_new(relay);
    target a = {0}, b = {0};
    unsigned one[] = {1};
    uint8_t packet[100] = {0};
    for (int i = 0; i < 20; i++) {
        atomic_fetch_add(&a.refs, 1);
        void *t = &a;
        g_assert_cmpuint(moat_relay_send(relay, flood, &t, one, 1, packet, sizeof packet), ==,
                         i < 4 ? 1 : 0);
    }
    g_assert_cmpuint(moat_relay_source_queued(flood, 1), ==, 4);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_SOURCE_FULL), ==, 16);
    g_assert_cmpint(atomic_load(&a.refs), ==, 4); /* the dropped ones handed back */
    for (int i = 0; i < 4; i++) {
        atomic_fetch_add(&b.refs, 1);
        void *t = &b;
        g_assert_cmpuint(moat_relay_send(relay, other, &t, one, 1, packet, sizeof packet), ==, 1);
    }
    g_assert_cmpuint(moat_relay_source_queued(other, 1), ==, 4);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_POOL_EMPTY), ==, 0);
    moat_relay_source_unref(flood); /* four packets still hold it */
    g_assert_cmpuint(moat_relay_drain(relay, 1), ==, 8);
    g_assert_cmpuint(atomic_load(&a.delivered), ==, 4);
    g_assert_cmpuint(atomic_load(&b.delivered), ==, 4);
    g_assert_cmpuint(moat_relay_source_queued(other, 1), ==, 0);
    /* A source's packets queued at free are released with it. */
    atomic_fetch_add(&b.refs, 1);
    void *t = &b;
    g_assert_cmpuint(moat_relay_send(relay, other, &t, one, 1, packet, sizeof packet), ==, 1);
    moat_relay_free(relay);
    g_assert_cmpuint(moat_relay_source_queued(other, 1), ==, 0);
    moat_relay_source_unref(other);
    g_assert_cmpint(atomic_load(&a.refs) + atomic_load(&b.refs), ==, 0);
    moat_relay_set_current(-1);
}

/* A producer thread sends for one source while the consumer thread drains
 * (suite tsan): it never has more than its cap waiting, every packet is
 * delivered or counted as source_full, and nothing is left counted. */
typedef struct {
    moat_relay *relay;
    moat_relay_source *source;
    target *t;
    atomic_bool done;
    atomic_uint over_cap;
} source_args;

static gpointer produce_for_source(gpointer data)
{
    source_args *a = data;
    moat_relay_set_current(0);
    unsigned consumers[] = {1};
    uint8_t packet[64] = {0};
    size_t cap = moat_relay_source_cap(a->relay);
    for (uint32_t seq = 0; seq < PER_PRODUCER; seq++) {
        memcpy(packet + 4, &seq, 4);
        atomic_fetch_add(&a->t->refs, 1);
        void *t = a->t;
        moat_relay_send(a->relay, a->source, &t, consumers, 1, packet, sizeof packet);
        if (moat_relay_source_queued(a->source, 1) > cap)
            atomic_fetch_add(&a->over_cap, 1);
    }
    atomic_store(&a->done, true);
    return NULL;
}

static void test_threads_source_cap(void)
{
    context c;
    moat_relay *relay = make(&c, 2, 256, 64);
    target t = {0};
    source_args args = {.relay = relay, .source = moat_relay_source_new(relay), .t = &t};
    atomic_init(&args.done, false);
    atomic_init(&args.over_cap, 0);
    GThread *p = g_thread_new("p0", produce_for_source, &args);
    moat_relay_set_current(1);
    while (!atomic_load(&args.done)) {
        if (moat_relay_drain(relay, 1) == 0)
            g_thread_yield();
    }
    g_thread_join(p);
    moat_relay_drain(relay, 1);
    g_assert_cmpuint(atomic_load(&args.over_cap), ==, 0);
    g_assert_cmpuint(moat_relay_source_queued(args.source, 1), ==, 0);
    g_assert_cmpuint(atomic_load(&t.delivered) +
                         moat_relay_dropped(relay, MOAT_RELAY_DROP_SOURCE_FULL) +
                         moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL),
                     ==, PER_PRODUCER);
    g_assert_cmpuint(moat_relay_dropped(relay, MOAT_RELAY_DROP_POOL_EMPTY), ==, 0);
    g_assert_cmpint(atomic_load(&t.refs), ==, 0);
    moat_relay_source_unref(args.source);
    moat_relay_free(relay);
    moat_relay_set_current(-1);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/relay/fan-out-one-copy", test_fan_out_one_copy);
    g_test_add_func("/relay/buffers-return-to-pool", test_buffers_return_to_pool);
    g_test_add_func("/relay/full-ring-and-empty-pool-drop", test_full_ring_and_empty_pool_drop);
    g_test_add_func("/relay/foreign-producer", test_foreign_producer);
    g_test_add_func("/relay/threads-keep-order", test_threads_keep_order);
    g_test_add_func("/relay/source-keeps-to-its-share", test_source_keeps_to_its_share);
    g_test_add_func("/relay/threads-source-cap", test_threads_source_cap);
    return g_test_run();
}
