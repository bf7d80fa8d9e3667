/* Reply cache of the ng server: a hash table for lookups over a FIFO of the
 * same entries for expiry and the entry and byte bounds. */
#include "ng/ng_cookie_cache.h"

#include <stdbool.h>

/* What an entry costs besides its key and reply bytes: the entry, two
 * GBytes and the hash table's node, rounded up. */
#define ENTRY_OVERHEAD 160

typedef struct {
    GBytes *key;
    GBytes *reply; /* empty: too large to keep */
    size_t cost;   /* key + reply + ENTRY_OVERHEAD */
    int64_t expires_us;
    GList link; /* in cache->order; data points back to the entry */
} cache_entry;

struct moat_ng_cookie_cache {
    GHashTable *entries; /* GBytes key -> cache_entry (owned by the table) */
    GQueue order;        /* oldest first */
    size_t capacity;
    size_t byte_budget;
    size_t bytes; /* the entries' cost */
    int64_t lifetime_us;
};

static void entry_free(gpointer data)
{
    cache_entry *entry = data;
    g_bytes_unref(entry->key);
    g_bytes_unref(entry->reply);
    g_free(entry);
}

moat_ng_cookie_cache *moat_ng_cookie_cache_new(size_t capacity, size_t byte_budget,
                                               int64_t lifetime_us)
{
    moat_ng_cookie_cache *cache = g_new0(moat_ng_cookie_cache, 1);
    cache->entries = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, NULL, entry_free);
    g_queue_init(&cache->order);
    cache->capacity = capacity > 0 ? capacity : 1;
    cache->byte_budget = byte_budget;
    cache->lifetime_us = lifetime_us;
    return cache;
}

void moat_ng_cookie_cache_free(moat_ng_cookie_cache *cache)
{
    if (!cache)
        return;
    g_hash_table_destroy(cache->entries);
    g_free(cache);
}

static void remove_entry(moat_ng_cookie_cache *cache, cache_entry *entry)
{
    cache->bytes -= entry->cost;
    g_queue_unlink(&cache->order, &entry->link);
    g_hash_table_remove(cache->entries, entry->key); /* frees the entry */
}

/* Expired entries, then the oldest while `entries` more entries costing
 * `bytes` would not fit. */
static void evict(moat_ng_cookie_cache *cache, int64_t now_us, size_t entries, size_t bytes)
{
    while (cache->order.head) {
        cache_entry *oldest = cache->order.head->data;
        bool full = (size_t)cache->order.length + entries > cache->capacity ||
                    cache->bytes + bytes > cache->byte_budget;
        if (!full && oldest->expires_us > now_us)
            return;
        remove_entry(cache, oldest);
    }
}

GBytes *moat_ng_cookie_cache_lookup(moat_ng_cookie_cache *cache, const void *key, size_t key_length,
                                    int64_t now_us)
{
    evict(cache, now_us, 0, 0);
    GBytes *probe = g_bytes_new_static(key, key_length);
    cache_entry *entry = g_hash_table_lookup(cache->entries, probe);
    g_bytes_unref(probe);
    return entry ? entry->reply : NULL;
}

void moat_ng_cookie_cache_insert(moat_ng_cookie_cache *cache, const void *key, size_t key_length,
                                 const uint8_t *reply, size_t reply_length, int64_t now_us)
{
    GBytes *probe = g_bytes_new_static(key, key_length);
    cache_entry *old = g_hash_table_lookup(cache->entries, probe);
    g_bytes_unref(probe);
    if (old)
        remove_entry(cache, old);
    if (reply_length > cache->byte_budget / 64)
        reply_length = 0; /* not kept: only that it ran */
    size_t cost = key_length + reply_length + ENTRY_OVERHEAD;
    evict(cache, now_us, 1, cost);
    if (cost > cache->byte_budget)
        return; /* a key alone over the budget (only with a tiny budget) */
    cache_entry *entry = g_new0(cache_entry, 1);
    entry->key = g_bytes_new(key, key_length);
    entry->reply = g_bytes_new(reply_length ? reply : NULL, reply_length);
    entry->cost = cost;
    cache->bytes += cost;
    entry->expires_us = now_us + cache->lifetime_us;
    entry->link.data = entry;
    g_queue_push_tail_link(&cache->order, &entry->link);
    g_hash_table_insert(cache->entries, entry->key, entry);
}

size_t moat_ng_cookie_cache_count(const moat_ng_cookie_cache *cache)
{
    return cache->order.length;
}

size_t moat_ng_cookie_cache_bytes(const moat_ng_cookie_cache *cache)
{
    return cache->bytes;
}
