/* The ng server's reply cache: the reply sent for each (source, cookie), so
 * that a retransmitted command is answered with the same bytes and does not
 * run twice. Bounded in entries, each kept for a fixed time; the oldest goes
 * first (one expiry for all, so insertion order is expiry order). Keys are
 * opaque bytes. Control thread; not thread-safe. */
#ifndef MOAT_NG_COOKIE_CACHE_H
#define MOAT_NG_COOKIE_CACHE_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_ng_cookie_cache moat_ng_cookie_cache;

moat_ng_cookie_cache *moat_ng_cookie_cache_new(size_t capacity, int64_t lifetime_us);
void moat_ng_cookie_cache_free(moat_ng_cookie_cache *cache);

/* The reply cached for key and still fresh at now_us (borrowed: valid
 * until the next insert), or NULL. */
GBytes *moat_ng_cookie_cache_lookup(moat_ng_cookie_cache *cache, const void *key, size_t key_length,
                                    int64_t now_us);
/* Caches a copy of reply for key (replacing an entry with the same key),
 * evicting expired entries and, when full, the oldest. */
void moat_ng_cookie_cache_insert(moat_ng_cookie_cache *cache, const void *key, size_t key_length,
                                 const uint8_t *reply, size_t reply_length, int64_t now_us);
size_t moat_ng_cookie_cache_count(const moat_ng_cookie_cache *cache);

#endif
