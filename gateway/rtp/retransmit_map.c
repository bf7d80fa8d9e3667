/* A forwarded stream's map from its sequence numbers to shared source
 * packets and rewrites (retransmit_map.h): a ring indexed by the
 * subscriber's sequence number. */
#include "rtp/retransmit_map.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t source_key;
    uint64_t resent_us;
    uint32_t source_id; /* 0: empty */
    uint16_t source_sequence;
    bool resent;
    moat_rtp_rewrite rewrite; /* rewrite.sequence: the subscriber's */
} entry;

struct moat_retransmit_map {
    size_t mask;
    uint64_t min_resend_interval_us;
    uint64_t max_age_us;
    entry entries[];
};

moat_retransmit_map *moat_retransmit_map_new(size_t n_slots, uint64_t min_resend_interval_us,
                                             uint64_t max_age_us)
{
    if (n_slots == 0 || n_slots > 32768 || (n_slots & (n_slots - 1)) != 0)
        return NULL;
    moat_retransmit_map *m = calloc(1, sizeof *m + n_slots * sizeof(entry));
    if (m == NULL)
        return NULL;
    m->mask = n_slots - 1;
    m->min_resend_interval_us = min_resend_interval_us;
    m->max_age_us = max_age_us;
    return m;
}

void moat_retransmit_map_free(moat_retransmit_map *map)
{
    free(map);
}

size_t moat_retransmit_map_slots(const moat_retransmit_map *map)
{
    return map->mask + 1;
}

size_t moat_retransmit_map_bytes(const moat_retransmit_map *map)
{
    return sizeof *map + (map->mask + 1) * sizeof(entry);
}

void moat_retransmit_map_record(moat_retransmit_map *map, uint64_t source_key, uint32_t source_id,
                                uint16_t source_sequence, const moat_rtp_rewrite *rewrite)
{
    entry *e = &map->entries[rewrite->sequence & map->mask];
    e->source_key = source_key;
    e->source_id = source_id;
    e->source_sequence = source_sequence;
    e->resent = false;
    e->rewrite = *rewrite;
}

/* The source packet, when its cache is there, holds it and it is young
 * enough. */
static bool source_packet(const moat_retransmit_map *map, const entry *e, uint64_t now_us,
                          moat_retransmit_resolve_fn resolve, void *user, const uint8_t **packet,
                          size_t *length)
{
    const moat_retransmit_cache *cache = resolve(user, e->source_key, e->source_id);
    uint64_t stored_us;
    if (cache == NULL || moat_retransmit_cache_get_stored(cache, e->source_sequence, packet, length,
                                                          &stored_us) != MOAT_RTP_OK)
        return false;
    return map->max_age_us == 0 || now_us <= stored_us || now_us - stored_us <= map->max_age_us;
}

int moat_retransmit_map_rebuild(moat_retransmit_map *map, uint16_t sequence, uint64_t now_us,
                                moat_retransmit_resolve_fn resolve, void *user, uint8_t *out,
                                size_t capacity, size_t *length)
{
    entry *e = &map->entries[sequence & map->mask];
    if (e->source_id == 0 || e->rewrite.sequence != sequence)
        return MOAT_RTP_ERR_NOT_FOUND;
    if (e->resent && now_us - e->resent_us < map->min_resend_interval_us)
        return MOAT_RTP_ERR_RATE_LIMITED;
    const uint8_t *packet;
    size_t n;
    if (!source_packet(map, e, now_us, resolve, user, &packet, &n) || n > capacity)
        return MOAT_RTP_ERR_NO_SPACE;
    memcpy(out, packet, n);
    if (moat_rtp_rewrite_apply(out, &n, &e->rewrite) != MOAT_RTP_OK)
        return MOAT_RTP_ERR_NO_SPACE;
    *length = n;
    return MOAT_RTP_OK;
}

void moat_retransmit_map_mark_resent(moat_retransmit_map *map, uint16_t sequence, uint64_t now_us)
{
    entry *e = &map->entries[sequence & map->mask];
    if (e->source_id == 0 || e->rewrite.sequence != sequence)
        return;
    e->resent = true;
    e->resent_us = now_us;
}

bool moat_retransmit_map_resent_after(const moat_retransmit_map *map, uint16_t sequence,
                                      uint64_t after_us)
{
    const entry *e = &map->entries[sequence & map->mask];
    return e->source_id != 0 && e->rewrite.sequence == sequence && e->resent &&
           e->resent_us > after_us;
}

void moat_retransmit_map_clear(moat_retransmit_map *map)
{
    memset(map->entries, 0, (map->mask + 1) * sizeof(entry));
}
