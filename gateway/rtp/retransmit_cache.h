/* Copies of the last packets sent on one outgoing RTP stream (one SSRC), so
 * a NACK can be answered. Plaintext packets are kept: they are protected
 * again (with a fresh SRTP index) when resent. All memory is taken at
 * creation (or when resized); storing and looking up never allocate. The
 * bytes are kept back to back in an arena (retransmit_cache.c). */
#ifndef MOAT_RETRANSMIT_CACHE_H
#define MOAT_RETRANSMIT_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtp/rtp_error.h"

#define MOAT_RETRANSMIT_MAX_PACKET    1500
#define MOAT_RETRANSMIT_DEFAULT_SLOTS 512
/* A packet is not resent more often than this (about one RTT on a LAN). */
#define MOAT_RETRANSMIT_DEFAULT_MIN_INTERVAL_US 10000u

typedef struct moat_retransmit_cache moat_retransmit_cache;

/* n_slots: a power of two from 1 to 32768 (so slots divide the sequence
 * space evenly). min_resend_interval_us: minimum time between two resends of
 * one packet. max_age_us: packets older than this are not resent (0: no
 * limit). Returns NULL on bad arguments or when memory is short. */
moat_retransmit_cache *moat_retransmit_cache_new(size_t n_slots, uint64_t min_resend_interval_us,
                                                 uint64_t max_age_us);
/* The same with an arena of arena_bytes for the packets' bytes (at least
 * one largest packet, at most n_slots of them): a packet stays until its
 * slot is reused or the arena has written arena_bytes after it, so the
 * arena is sized to what the stream sends in the horizon the cache must
 * cover (an audio packet takes its size, not MOAT_RETRANSMIT_MAX_PACKET).
 * _new gives n_slots largest packets. */
moat_retransmit_cache *moat_retransmit_cache_new_bytes(size_t n_slots, size_t arena_bytes,
                                                       uint64_t min_resend_interval_us,
                                                       uint64_t max_age_us);
void moat_retransmit_cache_free(moat_retransmit_cache *c);

/* Copies an RTP packet (12..MOAT_RETRANSMIT_MAX_PACKET octets, version 2)
 * into the slot of its sequence number, replacing what was there. */
int moat_retransmit_cache_store(moat_retransmit_cache *c, const uint8_t *packet, size_t length,
                                uint64_t now_us);

/* Looks a packet up without side effects. MOAT_RTP_ERR_NOT_FOUND when the
 * slot is empty or holds another sequence number. */
int moat_retransmit_cache_get(const moat_retransmit_cache *c, uint16_t seq, const uint8_t **packet,
                              size_t *length);

/* moat_retransmit_cache_get, with the time it was stored. */
int moat_retransmit_cache_get_stored(const moat_retransmit_cache *c, uint16_t seq,
                                     const uint8_t **packet, size_t *length, uint64_t *stored_us);

/* Looks a packet up to resend it now and records the resend. Returns
 * MOAT_RTP_ERR_NOT_FOUND when absent or older than max_age_us, and
 * MOAT_RTP_ERR_RATE_LIMITED when it was resent less than
 * min_resend_interval_us ago. *packet stays valid until the next store. */
int moat_retransmit_cache_resend(moat_retransmit_cache *c, uint16_t seq, uint64_t now_us,
                                 const uint8_t **packet, size_t *length);

/* Whether `seq` is held and was last resent after `after_us`. */
bool moat_retransmit_cache_resent_after(const moat_retransmit_cache *c, uint16_t seq,
                                        uint64_t after_us);

/* How many packets it holds at most. */
size_t moat_retransmit_cache_slots(const moat_retransmit_cache *c);

/* A cache of n_slots (same rules as _new) holding c's packets that still fit
 * (the newest win where two map to one slot), with c's settings. c is left
 * unchanged; NULL on bad arguments or when memory is short. */
moat_retransmit_cache *moat_retransmit_cache_resized(const moat_retransmit_cache *c,
                                                     size_t n_slots);

/* Its arena's size in bytes. */
size_t moat_retransmit_cache_bytes(const moat_retransmit_cache *c);
/* resized with an arena of arena_bytes (as _new_bytes); the newest packets
 * that fit are kept. */
moat_retransmit_cache *moat_retransmit_cache_resized_bytes(const moat_retransmit_cache *c,
                                                           size_t n_slots, size_t arena_bytes);

/* Forgets every packet (for example when the stream's SSRC changes). */
void moat_retransmit_cache_clear(moat_retransmit_cache *c);

#endif
