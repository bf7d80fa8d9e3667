/* Cross-worker packet relay of the media routing core (plugin API v2
 * relay_rtp): any thread hands a plaintext packet to sessions owned by other
 * workers without a lock on the packet path.
 *
 *  - Buffers: a packet is copied once into a fixed-size buffer from the
 *    producing thread's pool (a slab taken at creation: no malloc per
 *    packet); its reference count is the number of ring entries pointing at
 *    it, so one packet fanned out to N targets is one copy. The last
 *    consumer to release it returns it to its pool's return stack (lock-free,
 *    many pushers; the owner takes the whole stack at once, so no ABA).
 *  - Rings: one single-producer single-consumer ring per (producer worker,
 *    consumer worker); threads that are not workers share one extra row,
 *    serialized by a mutex per consumer (control-path use only). A full ring
 *    (or an empty pool) drops and counts, never blocks. Ring slots count
 *    packets: an entry names either one target or a target set
 *    (moat_relay_set: every target of a fan-out on one consumer), so one
 *    packet for 1000 targets on another worker takes one slot there; the
 *    consumer fans it out locally. Drops are counted per target. A ring
 *    holds at most pool_buffers / (n_workers - 1) target-set entries, so a
 *    consumer that stops draining cannot take the whole pool from a
 *    fan-out's producer: the other workers' targets still get their
 *    packets.
 *  - Sources: a packet may name the sender it comes from (a session:
 *    moat_relay_source). One source has at most pool_buffers / 8 entries
 *    waiting for any one consumer (each holding a buffer of the producer's
 *    pool); past that its packets for that consumer drop as source_full,
 *    so one flooding sender whose consumer lags cannot empty the pool under
 *    the other senders of the same (producer, consumer) pair, and a stalled
 *    consumer does not stop its packets to the others.
 *  - Wake-ups: a producer wakes a consumer (ops.wake) only when the consumer
 *    has drained since the last wake-up, so a busy consumer costs no
 *    syscall per packet.
 *
 * Thread contract: moat_relay_new/free on the control thread while no worker
 * runs; moat_relay_set_current on each worker thread before it relays;
 * moat_relay_send from any thread; moat_relay_drain(c) only on consumer c's
 * thread. Targets are opaque: the caller takes one reference per target
 * before moat_relay_send, and the relay hands it back through
 * ops.release_target (on the consumer's thread, or the caller's on a drop). */
#ifndef MOAT_RELAY_H
#define MOAT_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest plaintext packet carried (RTP over a 1500-byte path). */
#define MOAT_RELAY_MTU 1500

typedef enum {
    MOAT_RELAY_DROP_RING_FULL = 0,
    MOAT_RELAY_DROP_POOL_EMPTY,
    MOAT_RELAY_DROP_TOO_BIG,
    MOAT_RELAY_DROP_TARGET_GONE, /* the target ended before delivery */
    MOAT_RELAY_DROP_SOURCE_FULL, /* its source has its share waiting for that consumer */
    MOAT_RELAY_DROP_REASON_COUNT,
} moat_relay_drop_reason;

const char *moat_relay_drop_reason_name(moat_relay_drop_reason reason);

typedef struct {
    /* Consumer's thread: deliver one packet to `target`; returns false when
     * the target is gone (counted as target_gone). */
    bool (*deliver)(void *user, void *target, const uint8_t *data, size_t length);
    void (*release_target)(void *user, void *target);
    /* Any thread: make consumer `consumer` call moat_relay_drain soon. */
    void (*wake)(void *user, unsigned consumer);
    void *user;
} moat_relay_ops;

typedef struct moat_relay moat_relay;

/* ring_slots and pool_buffers are rounded up to powers of two. */
moat_relay *moat_relay_new(unsigned n_workers, size_t ring_slots, size_t pool_buffers,
                           const moat_relay_ops *ops);
/* What moat_relay_new allocates for its rings and buffer pools, in bytes:
 * (n_workers + 1) x n_workers rings, so it grows with the square of the
 * workers. */
size_t moat_relay_memory_bytes(unsigned n_workers, size_t ring_slots, size_t pool_buffers);
/* Releases whatever is still queued. No thread may use the relay any more. */
void moat_relay_free(moat_relay *relay);

/* The calling thread is worker `index` (-1: not a worker). Thread-local. */
void moat_relay_set_current(int index);
int moat_relay_current(void);

/* ---- sources ----
 * One sender's entries waiting per consumer, reference counted: the
 * sending thread counts an entry in, the consumer's thread counts it out
 * once delivered (atomics: a source may send from several threads). Each
 * buffer taken for it holds a reference, handed back on whichever thread
 * returns the buffer to its pool, so a source outlives its packets. Any
 * thread; made for one relay (its workers and cap). */
typedef struct moat_relay_source moat_relay_source;

moat_relay_source *moat_relay_source_new(moat_relay *relay);
void moat_relay_source_ref(moat_relay_source *source);
void moat_relay_source_unref(moat_relay_source *source);
/* Its entries waiting for `consumer` now. Any thread. */
size_t moat_relay_source_queued(const moat_relay_source *source, unsigned consumer);
/* The most one source may have waiting per consumer (pool_buffers / 8, at
 * least 1). */
size_t moat_relay_source_cap(const moat_relay *relay);

/* Queues `packet` for each targets[i] on consumer consumers[i] (one shared
 * copy). `source`: the sender whose share the entries count against (NULL:
 * none, the control path and tests). Returns how many were queued; the
 * others were dropped, counted and their references released. Any
 * thread. */
size_t moat_relay_send(moat_relay *relay, moat_relay_source *source, void *const *targets,
                       const unsigned *consumers, size_t n, const uint8_t *packet, size_t length);
/* ---- target sets ----
 * An immutable, reference-counted list of targets on one consumer. It owns
 * one reference per target (handed back through ops.release_target when the
 * last reference to the set goes, on whichever thread that is). Any thread;
 * the relay must outlive its sets. */
typedef struct moat_relay_set moat_relay_set;

/* Takes over one reference per targets[i]; NULL (the references released)
 * when consumer is not a worker. n may be 0. */
moat_relay_set *moat_relay_set_new(moat_relay *relay, unsigned consumer, void *const *targets,
                                   size_t n);
void moat_relay_set_ref(moat_relay_set *set);
void moat_relay_set_unref(moat_relay_set *set);
size_t moat_relay_set_size(const moat_relay_set *set);
unsigned moat_relay_set_consumer(const moat_relay_set *set);

/* Sends `packet` to every target of sets[0..n): a set on the calling worker
 * is delivered at once (ops.deliver on the caller's thread, from `packet`);
 * the others share one pooled copy (counted against `source`, as
 * moat_relay_send) and take ONE ring slot per set. Returns how many targets
 * were delivered or queued; the rest were dropped and counted (per target).
 * The sets' references stay the caller's. Any thread. */
size_t moat_relay_send_sets(moat_relay *relay, moat_relay_source *source,
                            moat_relay_set *const *sets, size_t n, const uint8_t *packet,
                            size_t length);

/* Delivers everything queued for `consumer`; returns to how many targets
 * (each target of a set counts). */
size_t moat_relay_drain(moat_relay *relay, unsigned consumer);

/* Data channel messages relayed between workers (relay_data, carried by
 * worker tasks, session_relay_data.c): only counted here. */
typedef enum {
    MOAT_RELAY_DATA_QUEUE_FULL = 0, /* the target's queue of waiting messages is full */
    MOAT_RELAY_DATA_TOO_BIG,
    MOAT_RELAY_DATA_TARGET_GONE, /* ended, or its worker stopped, before delivery */
    MOAT_RELAY_DATA_NOT_SENT,    /* the target's association refused it */
    MOAT_RELAY_DATA_DROP_REASON_COUNT,
} moat_relay_data_drop_reason;

const char *moat_relay_data_drop_reason_name(moat_relay_data_drop_reason reason);
/* Any thread. */
void moat_relay_count_data_drop(moat_relay *relay, moat_relay_data_drop_reason reason);
void moat_relay_count_data_delivered(moat_relay *relay);
uint64_t moat_relay_data_dropped(const moat_relay *relay, moat_relay_data_drop_reason reason);
uint64_t moat_relay_data_delivered(const moat_relay *relay);

/* Any thread: counts a packet dropped before it reached the relay (the
 * same-worker path checks sizes itself and counts here). */
void moat_relay_count_drop(moat_relay *relay, moat_relay_drop_reason reason);
/* Any thread. */
uint64_t moat_relay_dropped(const moat_relay *relay, moat_relay_drop_reason reason);
uint64_t moat_relay_delivered(const moat_relay *relay);
unsigned moat_relay_workers(const moat_relay *relay);

#endif
