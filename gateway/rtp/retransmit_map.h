/* A forwarded stream's retransmission map: for each packet one subscriber
 * stream sent, which shared source cache holds the packet it was made from
 * (retransmit_share, by key and id), that packet's sequence number there,
 * and the rewrite that made the packet sent (rtp_rewrite.h). A NACK of the
 * subscriber's sequence number rebuilds the packet from the source cache
 * with the same rewrite (moat_retransmit_map_rebuild) instead of keeping a
 * copy of every packet per subscriber.
 *
 * Ownership and threads: a map belongs to one outgoing stream and is used
 * on its session's worker only. It points at no cache: it names sources by
 * (key, id) and the caller's resolver finds them, so a source freed or
 * replaced since (the publisher left, switched layer, or was idle past the
 * retransmission age) is found gone, never read after free. All memory is
 * taken at creation; record and rebuild never allocate. */
#ifndef MOAT_RETRANSMIT_MAP_H
#define MOAT_RETRANSMIT_MAP_H

#include "rtp/retransmit_cache.h"
#include "rtp/rtp_rewrite.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_retransmit_map moat_retransmit_map;

/* n_slots: a power of two from 1 to 32768; min_resend_interval_us: a
 * packet is not resent more often to this subscriber; max_age_us: source
 * packets stored longer ago are not resent (0: no limit). NULL on bad
 * arguments or when memory is short. */
moat_retransmit_map *moat_retransmit_map_new(size_t n_slots, uint64_t min_resend_interval_us,
                                             uint64_t max_age_us);
void moat_retransmit_map_free(moat_retransmit_map *map);
size_t moat_retransmit_map_slots(const moat_retransmit_map *map);
/* Bytes it holds (for memory accounting). */
size_t moat_retransmit_map_bytes(const moat_retransmit_map *map);

/* The packet sent with sequence number rewrite->sequence was made by
 * `rewrite` from packet source_sequence of source (source_key,
 * source_id). Replaces what its slot held. */
void moat_retransmit_map_record(moat_retransmit_map *map, uint64_t source_key, uint32_t source_id,
                                uint16_t source_sequence, const moat_rtp_rewrite *rewrite);

/* The source cache of (key, id) or NULL when it is gone. */
typedef const moat_retransmit_cache *(*moat_retransmit_resolve_fn)(void *user, uint64_t key,
                                                                   uint32_t id);

/* Rebuilds the packet sent as `sequence` into out (capacity at least
 * MOAT_RETRANSMIT_MAX_PACKET) for a resend now: MOAT_RTP_OK with *length;
 * MOAT_RTP_ERR_NOT_FOUND when this map never recorded it (or recorded
 * another packet in its slot since); MOAT_RTP_ERR_RATE_LIMITED when it was
 * resent less than min_resend_interval_us ago; MOAT_RTP_ERR_NO_SPACE when
 * the map recorded it but its source is gone (freed, or the source cache
 * dropped that packet or holds another under its number) or older than
 * max_age_us, which the caller counts. Records nothing: the caller marks
 * the resend (moat_retransmit_map_mark_resent) once the packet went, not
 * when its limits refused it or the send failed (a packet marked but never
 * resent would be refused to the next NACK and to loss repairs). */
int moat_retransmit_map_rebuild(moat_retransmit_map *map, uint16_t sequence, uint64_t now_us,
                                moat_retransmit_resolve_fn resolve, void *user, uint8_t *out,
                                size_t capacity, size_t *length);

/* The packet sent as `sequence` was resent at now_us: rebuilds within
 * min_resend_interval_us are rate limited, and moat_retransmit_map_resent_after
 * sees it. Nothing when the map does not hold it. */
void moat_retransmit_map_mark_resent(moat_retransmit_map *map, uint16_t sequence, uint64_t now_us);

/* Whether the packet sent as `sequence` is recorded and was last resent
 * after `after_us`. */
bool moat_retransmit_map_resent_after(const moat_retransmit_map *map, uint16_t sequence,
                                      uint64_t after_us);

/* Forgets every packet. */
void moat_retransmit_map_clear(moat_retransmit_map *map);

#endif
