/* The ng server's reply cache: the reply sent for each (source, cookie), so
 * that a retransmitted command is answered with the same bytes and does not
 * run twice. Bounded in entries and in bytes (keys, replies and a fixed
 * overhead per entry), each kept for a fixed time; the oldest goes first
 * (one expiry for all, so insertion order is expiry order). A reply larger
 * than a 64th of the byte budget is not kept: its key is, with an empty
 * reply, so that its retransmission is known as one and is not run again.
 * Keys are opaque bytes. Control thread; not thread-safe. */
#ifndef MOAT_NG_COOKIE_CACHE_H
#define MOAT_NG_COOKIE_CACHE_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_ng_cookie_cache moat_ng_cookie_cache;

moat_ng_cookie_cache *moat_ng_cookie_cache_new(size_t capacity, size_t byte_budget,
                                               int64_t lifetime_us);
void moat_ng_cookie_cache_free(moat_ng_cookie_cache *cache);

/* The reply cached for key and still fresh at now_us (borrowed: valid
 * until the next insert), or NULL. An empty reply (size 0): the command ran,
 * its reply was too large to keep. */
GBytes *moat_ng_cookie_cache_lookup(moat_ng_cookie_cache *cache, const void *key, size_t key_length,
                                    int64_t now_us);
/* Caches a copy of reply for key (replacing an entry with the same key;
 * over byte_budget / 64: an empty reply), evicting expired entries and,
 * while the entries or their bytes are over the bounds, the oldest. */
void moat_ng_cookie_cache_insert(moat_ng_cookie_cache *cache, const void *key, size_t key_length,
                                 const uint8_t *reply, size_t reply_length, int64_t now_us);
size_t moat_ng_cookie_cache_count(const moat_ng_cookie_cache *cache);
/* What the entries count against byte_budget now. */
size_t moat_ng_cookie_cache_bytes(const moat_ng_cookie_cache *cache);

#endif
