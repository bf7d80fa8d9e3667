/* Fan-out lists of the routing core (relay_fanout.h): versioned snapshots of
 * target sets, one per consumer worker, swapped under a mutex and cached by
 * the producer. */
#include "engine/relay_fanout.h"

#include <glib.h>
#include <pthread.h>
#include <stdatomic.h>

typedef struct {
    atomic_uint refs; /* the list's current pointer, the producer's cache */
    size_t n_targets;
    size_t n_sets;
    moat_relay_set *sets[]; /* non-empty, one per consumer */
} fanout_snapshot;

struct moat_relay_fanout {
    moat_relay *relay;
    moat_relay_source *source; /* what its sends count against (one reference), or NULL */
    pthread_mutex_t lock;      /* guards current (pthread: visible to ThreadSanitizer) */
    fanout_snapshot *current;  /* NULL: empty */
    atomic_uint_fast64_t version;
    /* The producer's own: the snapshot it sends with and its version. */
    fanout_snapshot *cached;
    uint64_t cached_version;
};

static void snapshot_unref(fanout_snapshot *s)
{
    if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (size_t i = 0; i < s->n_sets; i++)
        moat_relay_set_unref(s->sets[i]);
    g_free(s);
}

moat_relay_fanout *moat_relay_fanout_new(moat_relay *relay, moat_relay_source *source)
{
    if (!relay)
        return NULL;
    moat_relay_fanout *f = g_new0(moat_relay_fanout, 1);
    f->relay = relay;
    moat_relay_source_ref(source);
    f->source = source;
    pthread_mutex_init(&f->lock, NULL);
    atomic_init(&f->version, 0);
    return f;
}

void moat_relay_fanout_free(moat_relay_fanout *f)
{
    if (!f)
        return;
    snapshot_unref(f->current);
    snapshot_unref(f->cached);
    moat_relay_source_unref(f->source);
    pthread_mutex_destroy(&f->lock);
    g_free(f);
}

/* Groups the targets by consumer: one set per worker that has any. */
static fanout_snapshot *snapshot_build(moat_relay *relay, void *const *targets,
                                       const unsigned *consumers, size_t n)
{
    unsigned workers = moat_relay_workers(relay);
    size_t *counts = g_new0(size_t, workers);
    size_t n_sets = 0;
    for (size_t i = 0; i < n; i++) {
        if (consumers[i] < workers && counts[consumers[i]]++ == 0)
            n_sets++;
    }
    fanout_snapshot *s = g_malloc(sizeof *s + n_sets * sizeof s->sets[0]);
    atomic_init(&s->refs, 1);
    s->n_targets = 0;
    s->n_sets = 0;
    void **group = g_new(void *, n ? n : 1);
    for (unsigned w = 0; w < workers; w++) {
        if (counts[w] == 0)
            continue;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (consumers[i] == w)
                group[k++] = targets[i];
        }
        s->sets[s->n_sets++] = moat_relay_set_new(relay, w, group, k);
        s->n_targets += k;
    }
    /* Targets on no worker: their references go back now. */
    for (size_t i = 0; i < n; i++) {
        if (consumers[i] >= workers)
            moat_relay_set_unref(moat_relay_set_new(relay, consumers[i], &targets[i], 1));
    }
    g_free(group);
    g_free(counts);
    return s;
}

void moat_relay_fanout_publish(moat_relay_fanout *f, void *const *targets,
                               const unsigned *consumers, size_t n)
{
    if (!f)
        return;
    fanout_snapshot *s = snapshot_build(f->relay, targets, consumers, n);
    pthread_mutex_lock(&f->lock);
    fanout_snapshot *old = f->current;
    f->current = s;
    atomic_fetch_add_explicit(&f->version, 1, memory_order_release);
    pthread_mutex_unlock(&f->lock);
    snapshot_unref(old);
}

/* The producer: takes the current snapshot when the version moved. */
static fanout_snapshot *refresh(moat_relay_fanout *f)
{
    uint64_t version = atomic_load_explicit(&f->version, memory_order_acquire);
    if (version == f->cached_version)
        return f->cached;
    pthread_mutex_lock(&f->lock);
    fanout_snapshot *s = f->current;
    if (s)
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    f->cached_version = atomic_load_explicit(&f->version, memory_order_relaxed);
    pthread_mutex_unlock(&f->lock);
    snapshot_unref(f->cached);
    f->cached = s;
    return s;
}

size_t moat_relay_fanout_send(moat_relay_fanout *f, const uint8_t *packet, size_t length)
{
    fanout_snapshot *s = f ? refresh(f) : NULL;
    if (!s || s->n_sets == 0)
        return 0;
    return moat_relay_send_sets(f->relay, f->source, s->sets, s->n_sets, packet, length);
}

size_t moat_relay_fanout_size(moat_relay_fanout *f)
{
    if (!f)
        return 0;
    pthread_mutex_lock(&f->lock);
    size_t n = f->current ? f->current->n_targets : 0;
    pthread_mutex_unlock(&f->lock);
    return n;
}

uint64_t moat_relay_fanout_version(moat_relay_fanout *f)
{
    return f ? atomic_load_explicit(&f->version, memory_order_acquire) : 0;
}
