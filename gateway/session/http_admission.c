/* Owns the per-source token buckets that rate-limit WHIP offers and ingests,
 * the source keys, and the per-source counters of held sessions. */
#include "session/http_admission.h"

#include <arpa/inet.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    double tokens;
    uint64_t updated_us;
} bucket;

struct moat_admission {
    double rate_per_us;
    double burst;
    size_t max_sources;
    GHashTable *buckets; /* key (owned) -> bucket (owned) */
};

const char *moat_refusal_reason_name(moat_refusal_reason reason)
{
    static const char *const names[] = {"body_too_large",
                                        "rate_limited",
                                        "max_sessions",
                                        "max_pending_sessions",
                                        "request_timeout",
                                        "max_connections",
                                        "max_connections_per_source",
                                        "max_pending_per_source",
                                        "ingest_per_source",
                                        "wrong_host",
                                        "create_rate_limited",
                                        "not_tls",
                                        "tls_handshake_timeout",
                                        "tls_renegotiation",
                                        "bad_content_length"};
    G_STATIC_ASSERT(G_N_ELEMENTS(names) == MOAT_REFUSED_REASON_COUNT);
    return (unsigned)reason < G_N_ELEMENTS(names) ? names[reason] : "unknown";
}

moat_admission *moat_admission_new(unsigned rate_per_s, unsigned burst, size_t max_sources)
{
    moat_admission *admission = g_new0(moat_admission, 1);
    admission->rate_per_us = rate_per_s / 1e6;
    admission->burst = burst > 0 ? burst : 1;
    admission->max_sources = max_sources > 0 ? max_sources : 1;
    admission->buckets = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    return admission;
}

void moat_admission_free(moat_admission *admission)
{
    if (!admission)
        return;
    g_hash_table_destroy(admission->buckets);
    g_free(admission);
}

void moat_admission_source_key(const char *peer, char *out, size_t size)
{
    moat_admission_source_key_prefix(peer, 64, out, size);
}

void moat_admission_source_key_prefix(const char *peer, unsigned prefix_bits, char *out,
                                      size_t size)
{
    unsigned char address[16];
    if (peer && inet_pton(AF_INET, peer, address) == 1) {
        snprintf(out, size, "4:%u.%u.%u.%u", address[0], address[1], address[2], address[3]);
        return;
    }
    if (peer && inet_pton(AF_INET6, peer, address) == 1) {
        static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(address, v4_mapped, sizeof v4_mapped) == 0) {
            snprintf(out, size, "4:%u.%u.%u.%u", address[12], address[13], address[14],
                     address[15]);
            return;
        }
        /* One client usually owns a whole /64, one customer a /56. */
        unsigned bytes = prefix_bits / 8;
        bytes = bytes < 1 ? 1 : bytes > 16 ? 16 : bytes;
        GString *key = g_string_new(bytes == 8 ? "6:" : NULL);
        if (bytes != 8)
            g_string_append_printf(key, "6/%u:", bytes * 8);
        for (unsigned i = 0; i < bytes; i++)
            g_string_append_printf(key, "%02x", address[i]);
        g_strlcpy(out, key->str, size);
        g_string_free(key, TRUE);
        return;
    }
    snprintf(out, size, "?");
}

static double refill(const moat_admission *admission, const bucket *entry, uint64_t now_us)
{
    double elapsed = now_us > entry->updated_us ? (double)(now_us - entry->updated_us) : 0.0;
    double tokens = entry->tokens + elapsed * admission->rate_per_us;
    return tokens < admission->burst ? tokens : admission->burst;
}

/* Forgets sources whose bucket is full again: they are indistinguishable
 * from new ones. If every source is active the table starts over, which
 * gives each one a full bucket but keeps memory bounded. */
static void make_room(moat_admission *admission, uint64_t now_us)
{
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, admission->buckets);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        if (refill(admission, value, now_us) >= admission->burst)
            g_hash_table_iter_remove(&it);
    }
    if (g_hash_table_size(admission->buckets) >= admission->max_sources)
        g_hash_table_remove_all(admission->buckets);
}

unsigned moat_admission_take(moat_admission *admission, const char *peer, uint64_t now_us)
{
    if (admission->rate_per_us <= 0)
        return 0;
    char key[48];
    moat_admission_source_key(peer, key, sizeof key);
    bucket *entry = g_hash_table_lookup(admission->buckets, key);
    if (!entry) {
        if (g_hash_table_size(admission->buckets) >= admission->max_sources)
            make_room(admission, now_us);
        entry = g_new0(bucket, 1);
        entry->tokens = admission->burst;
        entry->updated_us = now_us;
        g_hash_table_insert(admission->buckets, g_strdup(key), entry);
    }
    entry->tokens = refill(admission, entry, now_us);
    entry->updated_us = now_us;
    if (entry->tokens >= 1.0) {
        entry->tokens -= 1.0;
        return 0;
    }
    uint64_t wait_us = (uint64_t)((1.0 - entry->tokens) / admission->rate_per_us);
    uint64_t seconds = (wait_us + 999999) / 1000000;
    return seconds < 1 ? 1 : seconds > 3600 ? 3600 : (unsigned)seconds;
}

size_t moat_admission_sources(const moat_admission *admission)
{
    return g_hash_table_size(admission->buckets);
}

/* Zero counters are dropped once the table holds this many keys. */
#define SOURCE_COUNTS_PRUNE_AT 256

struct moat_source_counts {
    GHashTable *by_key; /* key (owned) -> int (owned, atomic) */
};

moat_source_counts *moat_source_counts_new(void)
{
    moat_source_counts *counts = g_new0(moat_source_counts, 1);
    counts->by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    return counts;
}

void moat_source_counts_free(moat_source_counts *counts)
{
    if (!counts)
        return;
    g_hash_table_destroy(counts->by_key);
    g_free(counts);
}

static void prune_zero_counts(moat_source_counts *counts)
{
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, counts->by_key);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        if (g_atomic_int_get((int *)value) <= 0)
            g_hash_table_iter_remove(&it);
    }
}

int *moat_source_counts_get(moat_source_counts *counts, const char *key)
{
    int *count = g_hash_table_lookup(counts->by_key, key);
    if (count)
        return count;
    if (g_hash_table_size(counts->by_key) >= SOURCE_COUNTS_PRUNE_AT)
        prune_zero_counts(counts);
    count = g_new0(int, 1);
    g_hash_table_insert(counts->by_key, g_strdup(key), count);
    return count;
}

size_t moat_source_counts_size(const moat_source_counts *counts)
{
    return g_hash_table_size(counts->by_key);
}
