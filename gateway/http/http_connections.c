/* Owns the HTTP API's connection counts: in all and per source, and the
 * check (where asserts are compiled in) that only the thread that made
 * them changes them. */
#include "http/http_connections.h"

#include <assert.h>
#include <glib.h>

struct moat_connection_counts {
    size_t max_total;
    size_t max_per_source;
    size_t open;
    GHashTable *per_source; /* key (owned) -> size_t count (owned, > 0) */
    GThread *owner;         /* the control thread: the one that made them */
};

moat_connection_counts *moat_connection_counts_new(size_t max_total, size_t max_per_source)
{
    moat_connection_counts *counts = g_new0(moat_connection_counts, 1);
    counts->max_total = max_total;
    counts->max_per_source = max_per_source;
    counts->per_source = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    counts->owner = g_thread_self();
    return counts;
}

void moat_connection_counts_free(moat_connection_counts *counts)
{
    if (!counts)
        return;
    g_hash_table_destroy(counts->per_source);
    g_free(counts);
}

moat_connection_verdict moat_connection_counts_admit(moat_connection_counts *counts,
                                                     const char *key)
{
    assert(g_thread_self() == counts->owner);
    if (counts->max_total && counts->open >= counts->max_total)
        return MOAT_CONNECTION_OVER_TOTAL;
    size_t *held = g_hash_table_lookup(counts->per_source, key);
    if (held && counts->max_per_source && *held >= counts->max_per_source)
        return MOAT_CONNECTION_OVER_SOURCE;
    if (!held) {
        held = g_new0(size_t, 1);
        g_hash_table_insert(counts->per_source, g_strdup(key), held);
    }
    (*held)++;
    counts->open++;
    return MOAT_CONNECTION_ADMITTED;
}

void moat_connection_counts_release(moat_connection_counts *counts, const char *key)
{
    assert(g_thread_self() == counts->owner);
    size_t *held = g_hash_table_lookup(counts->per_source, key);
    if (!held)
        return;
    counts->open--;
    if (--*held == 0)
        g_hash_table_remove(counts->per_source, key);
}

size_t moat_connection_counts_open(const moat_connection_counts *counts)
{
    return counts->open;
}

size_t moat_connection_counts_of(const moat_connection_counts *counts, const char *key)
{
    const size_t *held = g_hash_table_lookup(counts->per_source, key);
    return held ? *held : 0;
}

size_t moat_connection_counts_sources(const moat_connection_counts *counts)
{
    return g_hash_table_size(counts->per_source);
}
