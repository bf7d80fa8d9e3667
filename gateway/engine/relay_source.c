/* The cross-worker relay's sources (relay.h, relay_source_private.h): one
 * sender's entries waiting for each consumer worker, capped, and the
 * reference count that keeps a source alive while its buffers are out.
 * Any thread: atomics only. */
#include "engine/relay_source_private.h"

#include <glib.h>
#include <stdatomic.h>

struct moat_relay_source {
    atomic_uint refs; /* the owners' and one per buffer it took */
    size_t cap;       /* entries per consumer */
    unsigned n_consumers;
    atomic_size_t queued[]; /* per consumer: its entries not yet drained */
};

moat_relay_source *moat_relay_source_make(unsigned n_consumers, size_t cap)
{
    moat_relay_source *source = g_malloc(sizeof *source + n_consumers * sizeof source->queued[0]);
    atomic_init(&source->refs, 1);
    source->cap = cap;
    source->n_consumers = n_consumers;
    for (unsigned c = 0; c < n_consumers; c++)
        atomic_init(&source->queued[c], 0);
    return source;
}

void moat_relay_source_ref(moat_relay_source *source)
{
    if (source)
        atomic_fetch_add_explicit(&source->refs, 1, memory_order_relaxed);
}

void moat_relay_source_unref(moat_relay_source *source)
{
    if (source && atomic_fetch_sub_explicit(&source->refs, 1, memory_order_acq_rel) == 1)
        g_free(source);
}

size_t moat_relay_source_queued(const moat_relay_source *source, unsigned consumer)
{
    if (!source || consumer >= source->n_consumers)
        return 0;
    return atomic_load_explicit(&((moat_relay_source *)source)->queued[consumer],
                                memory_order_relaxed);
}

/* Several threads may send for one source: the add is undone past the
 * cap, so the cap is never exceeded. */
bool moat_relay_source_enter(moat_relay_source *source, unsigned consumer)
{
    if (!source)
        return true;
    if (atomic_fetch_add_explicit(&source->queued[consumer], 1, memory_order_relaxed) >=
        source->cap) {
        atomic_fetch_sub_explicit(&source->queued[consumer], 1, memory_order_relaxed);
        return false;
    }
    return true;
}

void moat_relay_source_leave(moat_relay_source *source, unsigned consumer)
{
    if (source)
        atomic_fetch_sub_explicit(&source->queued[consumer], 1, memory_order_relaxed);
}
