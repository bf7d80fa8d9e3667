/* The routing core's cross-worker relay (relay.h): pooled reference-counted
 * buffers, one SPSC ring per (producer, consumer) pair, wake-ups on demand,
 * target sets (one ring slot per packet per consumer), and each entry
 * counted against its sender's source (relay_source.c owns those). */
#include "engine/relay.h"
#include "engine/relay_source_private.h"

#include <glib.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_LINE 64

typedef struct relay_pool relay_pool;

typedef struct relay_buffer {
    struct relay_buffer *next; /* free list link */
    relay_pool *pool;
    moat_relay_source *source; /* NULL: none; one reference */
    atomic_uint refs;
    uint16_t length;
    uint8_t data[MOAT_RELAY_MTU];
} relay_buffer;

struct relay_pool {
    relay_buffer *slab;
    relay_buffer *local; /* the owner's free list */
    _Alignas(CACHE_LINE) _Atomic(relay_buffer *) returned;
};

struct moat_relay_set {
    moat_relay *relay;
    atomic_uint refs;
    unsigned consumer;
    size_t n;
    void *targets[]; /* n, each holding one reference */
};

typedef struct {
    relay_buffer *buffer;
    void *target;        /* one target, or NULL: */
    moat_relay_set *set; /* every target of this set (one reference) */
} relay_entry;

typedef struct {
    _Alignas(CACHE_LINE) atomic_size_t head; /* consumer */
    _Alignas(CACHE_LINE) atomic_size_t tail; /* producer */
    relay_entry *slots;
    size_t mask;
    size_t cap; /* entries at most: the consumer's share of the pool */
} relay_ring;

typedef struct {
    _Alignas(CACHE_LINE) atomic_bool wake_pending;
    GMutex foreign_lock; /* producers that are not workers */
} relay_consumer;

struct moat_relay {
    unsigned n_workers;
    moat_relay_ops ops;
    relay_ring *rings; /* (n_workers + 1) x n_workers; row n_workers: foreign */
    relay_pool *pools; /* n_workers + 1; the last: foreign threads */
    GMutex foreign_pool_lock;
    relay_consumer *consumers;
    size_t source_cap; /* entries one source may have waiting per consumer */
    atomic_uint_fast64_t dropped[MOAT_RELAY_DROP_REASON_COUNT];
    atomic_uint_fast64_t delivered;
    atomic_uint_fast64_t data_dropped[MOAT_RELAY_DATA_DROP_REASON_COUNT];
    atomic_uint_fast64_t data_delivered;
};

static _Thread_local int current_worker = -1;

static const char *const drop_names[MOAT_RELAY_DROP_REASON_COUNT] = {
    "ring_full", "pool_empty", "too_big", "target_gone", "source_full"};

const char *moat_relay_drop_reason_name(moat_relay_drop_reason reason)
{
    return reason < MOAT_RELAY_DROP_REASON_COUNT ? drop_names[reason] : "unknown";
}

void moat_relay_set_current(int index)
{
    current_worker = index;
}

int moat_relay_current(void)
{
    return current_worker;
}

static size_t power_of_two(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

static void pool_init(relay_pool *pool, size_t n)
{
    pool->slab = g_new0(relay_buffer, n);
    pool->local = NULL;
    for (size_t i = n; i-- > 0;) {
        pool->slab[i].pool = pool;
        pool->slab[i].next = pool->local;
        pool->local = &pool->slab[i];
    }
    atomic_init(&pool->returned, NULL);
}

/* Owner thread only. */
static relay_buffer *pool_take(relay_pool *pool)
{
    if (!pool->local)
        pool->local = atomic_exchange_explicit(&pool->returned, NULL, memory_order_acquire);
    relay_buffer *b = pool->local;
    if (b)
        pool->local = b->next;
    return b;
}

/* Any thread: a Treiber push; only whole-stack exchanges pop, so no ABA. */
static void pool_return(relay_buffer *b)
{
    relay_pool *pool = b->pool;
    relay_buffer *head = atomic_load_explicit(&pool->returned, memory_order_relaxed);
    do {
        b->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&pool->returned, &head, b, memory_order_release,
                                                    memory_order_relaxed));
}

/* ---- sources (relay_source.c) ---- */

moat_relay_source *moat_relay_source_new(moat_relay *relay)
{
    return relay ? moat_relay_source_make(relay->n_workers, relay->source_cap) : NULL;
}

size_t moat_relay_source_cap(const moat_relay *relay)
{
    return relay ? relay->source_cap : 0;
}

static void buffer_release(relay_buffer *b)
{
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    /* Read before the push: the owner may take the buffer again at once. */
    moat_relay_source *source = b->source;
    b->source = NULL;
    pool_return(b);
    moat_relay_source_unref(source);
}

size_t moat_relay_memory_bytes(unsigned n_workers, size_t ring_slots, size_t pool_buffers)
{
    size_t slots = power_of_two(ring_slots < 2 ? 2 : ring_slots);
    size_t n_rings = (size_t)(n_workers + 1) * n_workers;
    size_t pool = power_of_two(pool_buffers < 1 ? 1 : pool_buffers);
    return n_rings * (sizeof(relay_ring) + slots * sizeof(relay_entry)) +
           (size_t)(n_workers + 1) * pool * sizeof(relay_buffer);
}

moat_relay *moat_relay_new(unsigned n_workers, size_t ring_slots, size_t pool_buffers,
                           const moat_relay_ops *ops)
{
    if (n_workers == 0 || !ops || !ops->deliver || !ops->release_target)
        return NULL;
    moat_relay *relay = g_new0(moat_relay, 1);
    relay->n_workers = n_workers;
    relay->ops = *ops;
    size_t slots = power_of_two(ring_slots < 2 ? 2 : ring_slots);
    size_t n_rings = (size_t)(n_workers + 1) * n_workers;
    /* A consumer that stops draining holds at most its share of the
     * producer's buffers (each entry holds one): the others still get
     * theirs from the pool. */
    size_t pool = power_of_two(pool_buffers < 1 ? 1 : pool_buffers);
    size_t share = pool / (n_workers > 1 ? n_workers - 1 : 1);
    if (share < 1)
        share = 1;
    /* One sender has at most an eighth of a pool waiting for any one
     * consumer (128 of the gateway's 1024): each entry holds a buffer of
     * the producer's pool, so a flood from one session toward a lagging
     * worker leaves seven eighths of the pool to the other senders of the
     * same pair (before, it took the whole pool: pool_empty for all of
     * them). A legitimate stream needs its rate times the consumer's lag
     * (2000 pps behind 10 ms: about 20; a fan-out's packet takes one entry
     * per consumer whatever its targets there). Per consumer, so one
     * stalled worker cannot stop a sender's packets to the others. */
    relay->source_cap = pool / 8 ? pool / 8 : 1;
    relay->rings = aligned_alloc(CACHE_LINE, sizeof(relay_ring) * n_rings);
    for (size_t i = 0; i < n_rings; i++) {
        atomic_init(&relay->rings[i].head, 0);
        atomic_init(&relay->rings[i].tail, 0);
        relay->rings[i].slots = g_new0(relay_entry, slots);
        relay->rings[i].mask = slots - 1;
        relay->rings[i].cap = share < slots ? share : slots;
    }
    relay->pools = aligned_alloc(CACHE_LINE, sizeof(relay_pool) * (n_workers + 1));
    for (unsigned i = 0; i <= n_workers; i++)
        pool_init(&relay->pools[i], power_of_two(pool_buffers < 1 ? 1 : pool_buffers));
    g_mutex_init(&relay->foreign_pool_lock);
    relay->consumers = aligned_alloc(CACHE_LINE, sizeof(relay_consumer) * n_workers);
    for (unsigned i = 0; i < n_workers; i++) {
        atomic_init(&relay->consumers[i].wake_pending, false);
        g_mutex_init(&relay->consumers[i].foreign_lock);
    }
    for (int r = 0; r < MOAT_RELAY_DROP_REASON_COUNT; r++)
        atomic_init(&relay->dropped[r], 0);
    atomic_init(&relay->delivered, 0);
    return relay;
}

static relay_ring *ring_of(moat_relay *relay, unsigned producer, unsigned consumer)
{
    return &relay->rings[(size_t)producer * relay->n_workers + consumer];
}

void moat_relay_free(moat_relay *relay)
{
    if (!relay)
        return;
    size_t n_rings = (size_t)(relay->n_workers + 1) * relay->n_workers;
    for (size_t i = 0; i < n_rings; i++) {
        relay_ring *ring = &relay->rings[i];
        size_t head = atomic_load(&ring->head), tail = atomic_load(&ring->tail);
        for (; head != tail; head++) {
            relay_entry *e = &ring->slots[head & ring->mask];
            moat_relay_source_leave(e->buffer->source, (unsigned)(i % relay->n_workers));
            if (e->set)
                moat_relay_set_unref(e->set);
            else
                relay->ops.release_target(relay->ops.user, e->target);
            buffer_release(e->buffer); /* and its source's reference */
        }
        g_free(ring->slots);
    }
    free(relay->rings);
    for (unsigned i = 0; i <= relay->n_workers; i++)
        g_free(relay->pools[i].slab);
    free(relay->pools);
    g_mutex_clear(&relay->foreign_pool_lock);
    for (unsigned i = 0; i < relay->n_workers; i++)
        g_mutex_clear(&relay->consumers[i].foreign_lock);
    free(relay->consumers);
    g_free(relay);
}

static void drop(moat_relay *relay, moat_relay_drop_reason reason, void *target)
{
    atomic_fetch_add_explicit(&relay->dropped[reason], 1, memory_order_relaxed);
    relay->ops.release_target(relay->ops.user, target);
}

void moat_relay_count_drop(moat_relay *relay, moat_relay_drop_reason reason)
{
    if (relay && reason < MOAT_RELAY_DROP_REASON_COUNT)
        atomic_fetch_add_explicit(&relay->dropped[reason], 1, memory_order_relaxed);
}

static bool ring_push(relay_ring *ring, relay_buffer *buffer, void *target, moat_relay_set *set)
{
    size_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    size_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    /* Sets (fan-outs) keep to the consumer's share of the pool. */
    if (tail - head >= (set ? ring->cap : ring->mask + 1))
        return false;
    ring->slots[tail & ring->mask] = (relay_entry){buffer, target, set};
    atomic_store_explicit(&ring->tail, tail + 1, memory_order_release);
    return true;
}

static void wake(moat_relay *relay, unsigned consumer)
{
    if (relay->ops.wake && !atomic_exchange_explicit(&relay->consumers[consumer].wake_pending, true,
                                                     memory_order_acq_rel))
        relay->ops.wake(relay->ops.user, consumer);
}

static relay_buffer *pool_take_for(moat_relay *relay, unsigned producer)
{
    if (producer < relay->n_workers)
        return pool_take(&relay->pools[producer]);
    g_mutex_lock(&relay->foreign_pool_lock);
    relay_buffer *b = pool_take(&relay->pools[relay->n_workers]);
    g_mutex_unlock(&relay->foreign_pool_lock);
    return b;
}

/* A buffer for `length` bytes that holds `source` (a reference), or NULL
 * with the reason in *why. */
static relay_buffer *take_buffer(moat_relay *relay, unsigned producer, moat_relay_source *source,
                                 size_t length, moat_relay_drop_reason *why)
{
    if (length > MOAT_RELAY_MTU) {
        *why = MOAT_RELAY_DROP_TOO_BIG;
        return NULL;
    }
    relay_buffer *b = pool_take_for(relay, producer);
    if (!b) {
        *why = MOAT_RELAY_DROP_POOL_EMPTY;
        return NULL;
    }
    moat_relay_source_ref(source);
    b->source = source;
    return b;
}

/* Pushes one entry of `buffer` for `consumer` (the caller took the
 * buffer's reference for it); false with the reason in *why. */
static bool push_entry(moat_relay *relay, unsigned producer, unsigned consumer,
                       relay_buffer *buffer, void *target, moat_relay_set *set,
                       moat_relay_drop_reason *why)
{
    if (!moat_relay_source_enter(buffer->source, consumer)) {
        *why = MOAT_RELAY_DROP_SOURCE_FULL;
        return false;
    }
    relay_ring *ring = ring_of(relay, producer, consumer);
    bool pushed;
    if (producer == relay->n_workers) {
        g_mutex_lock(&relay->consumers[consumer].foreign_lock);
        pushed = ring_push(ring, buffer, target, set);
        g_mutex_unlock(&relay->consumers[consumer].foreign_lock);
    } else {
        pushed = ring_push(ring, buffer, target, set);
    }
    if (!pushed) {
        moat_relay_source_leave(buffer->source, consumer);
        *why = MOAT_RELAY_DROP_RING_FULL;
        return false;
    }
    wake(relay, consumer);
    return true;
}

size_t moat_relay_send(moat_relay *relay, moat_relay_source *source, void *const *targets,
                       const unsigned *consumers, size_t n, const uint8_t *packet, size_t length)
{
    if (n == 0)
        return 0;
    int current = current_worker;
    unsigned producer =
        current >= 0 && (unsigned)current < relay->n_workers ? (unsigned)current : relay->n_workers;
    moat_relay_drop_reason why = MOAT_RELAY_DROP_POOL_EMPTY;
    relay_buffer *buffer = take_buffer(relay, producer, source, length, &why);
    if (!buffer) {
        for (size_t i = 0; i < n; i++)
            drop(relay, why, targets[i]);
        return 0;
    }
    memcpy(buffer->data, packet, length);
    buffer->length = (uint16_t)length;
    /* One reference per entry, plus ours until every push is done. */
    atomic_store_explicit(&buffer->refs, (unsigned)n + 1, memory_order_relaxed);
    size_t queued = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned consumer = consumers[i];
        if (consumer >= relay->n_workers) {
            atomic_fetch_sub_explicit(&buffer->refs, 1, memory_order_relaxed);
            drop(relay, MOAT_RELAY_DROP_TARGET_GONE, targets[i]);
            continue;
        }
        if (!push_entry(relay, producer, consumer, buffer, targets[i], NULL, &why)) {
            atomic_fetch_sub_explicit(&buffer->refs, 1, memory_order_relaxed);
            drop(relay, why, targets[i]);
            continue;
        }
        queued++;
    }
    buffer_release(buffer);
    return queued;
}

/* ---- target sets ---- */

moat_relay_set *moat_relay_set_new(moat_relay *relay, unsigned consumer, void *const *targets,
                                   size_t n)
{
    if (!relay || consumer >= relay->n_workers) {
        for (size_t i = 0; relay && i < n; i++)
            relay->ops.release_target(relay->ops.user, targets[i]);
        return NULL;
    }
    moat_relay_set *set = g_malloc(sizeof *set + n * sizeof set->targets[0]);
    set->relay = relay;
    atomic_init(&set->refs, 1);
    set->consumer = consumer;
    set->n = n;
    if (n)
        memcpy(set->targets, targets, n * sizeof set->targets[0]);
    return set;
}

void moat_relay_set_ref(moat_relay_set *set)
{
    if (set)
        atomic_fetch_add_explicit(&set->refs, 1, memory_order_relaxed);
}

void moat_relay_set_unref(moat_relay_set *set)
{
    if (!set || atomic_fetch_sub_explicit(&set->refs, 1, memory_order_acq_rel) != 1)
        return;
    moat_relay *relay = set->relay;
    for (size_t i = 0; i < set->n; i++)
        relay->ops.release_target(relay->ops.user, set->targets[i]);
    g_free(set);
}

size_t moat_relay_set_size(const moat_relay_set *set)
{
    return set ? set->n : 0;
}

unsigned moat_relay_set_consumer(const moat_relay_set *set)
{
    return set ? set->consumer : 0;
}

static void count_drops(moat_relay *relay, moat_relay_drop_reason reason, size_t n)
{
    atomic_fetch_add_explicit(&relay->dropped[reason], n, memory_order_relaxed);
}

/* Pushes one entry for `set` (a reference taken here); false with the
 * reason in *why. */
static bool push_set(moat_relay *relay, unsigned producer, relay_buffer *buffer,
                     moat_relay_set *set, moat_relay_drop_reason *why)
{
    atomic_fetch_add_explicit(&buffer->refs, 1, memory_order_relaxed);
    moat_relay_set_ref(set);
    if (!push_entry(relay, producer, set->consumer, buffer, NULL, set, why)) {
        atomic_fetch_sub_explicit(&buffer->refs, 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&set->refs, 1, memory_order_relaxed); /* ours is still held */
        return false;
    }
    return true;
}

size_t moat_relay_send_sets(moat_relay *relay, moat_relay_source *source,
                            moat_relay_set *const *sets, size_t n, const uint8_t *packet,
                            size_t length)
{
    int current = current_worker;
    unsigned producer =
        current >= 0 && (unsigned)current < relay->n_workers ? (unsigned)current : relay->n_workers;
    relay_buffer *buffer = NULL;
    bool tried = false;
    moat_relay_drop_reason why = MOAT_RELAY_DROP_POOL_EMPTY;
    size_t done = 0;
    for (size_t i = 0; i < n; i++) {
        moat_relay_set *set = sets[i];
        if (!set || set->n == 0)
            continue;
        if (set->consumer == producer) {
            /* Our own targets: at once, from the caller's packet. */
            for (size_t t = 0; t < set->n; t++)
                done +=
                    relay->ops.deliver(relay->ops.user, set->targets[t], packet, length) ? 1 : 0;
            continue;
        }
        if (!tried) {
            tried = true; /* one copy, or one reason, for every set */
            buffer = take_buffer(relay, producer, source, length, &why);
            if (buffer) {
                memcpy(buffer->data, packet, length);
                buffer->length = (uint16_t)length;
                atomic_store_explicit(&buffer->refs, 1, memory_order_relaxed); /* ours */
            }
        }
        if (!buffer) {
            count_drops(relay, why, set->n);
            continue;
        }
        moat_relay_drop_reason full;
        if (push_set(relay, producer, buffer, set, &full))
            done += set->n;
        else
            count_drops(relay, full, set->n);
    }
    if (buffer)
        buffer_release(buffer);
    return done;
}

/* Consumer's thread: every target of `set`; returns how many. */
static size_t deliver_set(moat_relay *relay, moat_relay_set *set, const relay_buffer *b)
{
    size_t ok = 0;
    for (size_t t = 0; t < set->n; t++)
        ok += relay->ops.deliver(relay->ops.user, set->targets[t], b->data, b->length) ? 1 : 0;
    atomic_fetch_add_explicit(&relay->delivered, ok, memory_order_relaxed);
    if (ok < set->n)
        count_drops(relay, MOAT_RELAY_DROP_TARGET_GONE, set->n - ok);
    size_t n = set->n;
    moat_relay_set_unref(set);
    return n;
}

static size_t drain_ring(moat_relay *relay, relay_ring *ring, unsigned consumer)
{
    size_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    size_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
    size_t n = 0;
    for (; head != tail; head++, n++) {
        relay_entry e = ring->slots[head & ring->mask];
        /* The slot is free again once head moves past it. */
        atomic_store_explicit(&ring->head, head + 1, memory_order_release);
        if (e.set) {
            n += deliver_set(relay, e.set, e.buffer) - 1; /* the loop counts one */
            moat_relay_source_leave(e.buffer->source, consumer);
            buffer_release(e.buffer);
            continue;
        }
        if (relay->ops.deliver(relay->ops.user, e.target, e.buffer->data, e.buffer->length))
            atomic_fetch_add_explicit(&relay->delivered, 1, memory_order_relaxed);
        else
            atomic_fetch_add_explicit(&relay->dropped[MOAT_RELAY_DROP_TARGET_GONE], 1,
                                      memory_order_relaxed);
        relay->ops.release_target(relay->ops.user, e.target);
        moat_relay_source_leave(e.buffer->source, consumer);
        buffer_release(e.buffer);
    }
    return n;
}

size_t moat_relay_drain(moat_relay *relay, unsigned consumer)
{
    if (consumer >= relay->n_workers)
        return 0;
    /* Cleared before draining: a push after this wakes us again. */
    atomic_store_explicit(&relay->consumers[consumer].wake_pending, false, memory_order_seq_cst);
    size_t n = 0;
    for (unsigned p = 0; p <= relay->n_workers; p++)
        n += drain_ring(relay, ring_of(relay, p, consumer), consumer);
    return n;
}

uint64_t moat_relay_dropped(const moat_relay *relay, moat_relay_drop_reason reason)
{
    if (reason >= MOAT_RELAY_DROP_REASON_COUNT)
        return 0;
    return atomic_load_explicit(&((moat_relay *)relay)->dropped[reason], memory_order_relaxed);
}

uint64_t moat_relay_delivered(const moat_relay *relay)
{
    return atomic_load_explicit(&((moat_relay *)relay)->delivered, memory_order_relaxed);
}

static const char *const data_drop_names[MOAT_RELAY_DATA_DROP_REASON_COUNT] = {
    "queue_full", "too_big", "target_gone", "not_sent"};

const char *moat_relay_data_drop_reason_name(moat_relay_data_drop_reason reason)
{
    return reason < MOAT_RELAY_DATA_DROP_REASON_COUNT ? data_drop_names[reason] : "unknown";
}

void moat_relay_count_data_drop(moat_relay *relay, moat_relay_data_drop_reason reason)
{
    if (relay && reason < MOAT_RELAY_DATA_DROP_REASON_COUNT)
        atomic_fetch_add_explicit(&relay->data_dropped[reason], 1, memory_order_relaxed);
}

void moat_relay_count_data_delivered(moat_relay *relay)
{
    if (relay)
        atomic_fetch_add_explicit(&relay->data_delivered, 1, memory_order_relaxed);
}

uint64_t moat_relay_data_dropped(const moat_relay *relay, moat_relay_data_drop_reason reason)
{
    if (reason >= MOAT_RELAY_DATA_DROP_REASON_COUNT)
        return 0;
    return atomic_load_explicit(&((moat_relay *)relay)->data_dropped[reason], memory_order_relaxed);
}

uint64_t moat_relay_data_delivered(const moat_relay *relay)
{
    return atomic_load_explicit(&((moat_relay *)relay)->data_delivered, memory_order_relaxed);
}

unsigned moat_relay_workers(const moat_relay *relay)
{
    return relay->n_workers;
}
