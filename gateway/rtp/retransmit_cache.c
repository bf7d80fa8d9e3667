/* Ring of recently sent RTP packets indexed by sequence number, their bytes
 * in an arena sized to the stream's rate. */
#include "rtp/retransmit_cache.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rtp/rtp_bytes.h"

/* The index: one entry per slot (sequence number modulo the slot count);
 * the bytes live in the arena at absolute position `start`. */
typedef struct {
    bool used;
    bool resent;
    uint16_t seq;
    uint16_t length;
    uint64_t stored_us;
    uint64_t resent_us;
    uint64_t start;
} slot;

/* The arena is a byte ring sized to the stream's rate, not slots x MTU:
 * packets are stored back to back (a packet that would cross the end
 * starts again at 0) and a slot's copy is valid while the arena has not
 * written over it: head - start <= arena_size. */
struct moat_retransmit_cache {
    size_t mask;
    uint64_t min_resend_interval_us;
    uint64_t max_age_us;
    size_t arena_size;
    uint64_t head; /* absolute position of the next byte written */
    uint8_t *arena;
    slot slots[];
};

static size_t arena_bytes_for(size_t n_slots, size_t arena_bytes)
{
    size_t most = n_slots * MOAT_RETRANSMIT_MAX_PACKET;
    if (arena_bytes < MOAT_RETRANSMIT_MAX_PACKET)
        arena_bytes = MOAT_RETRANSMIT_MAX_PACKET;
    return arena_bytes < most ? arena_bytes : most;
}

moat_retransmit_cache *moat_retransmit_cache_new_bytes(size_t n_slots, size_t arena_bytes,
                                                       uint64_t min_resend_interval_us,
                                                       uint64_t max_age_us)
{
    if (n_slots == 0 || n_slots > 32768 || (n_slots & (n_slots - 1)) != 0)
        return NULL;
    size_t arena = arena_bytes_for(n_slots, arena_bytes);
    moat_retransmit_cache *c = calloc(1, sizeof(*c) + n_slots * sizeof(slot) + arena);
    if (c == NULL)
        return NULL;
    c->mask = n_slots - 1;
    c->min_resend_interval_us = min_resend_interval_us;
    c->max_age_us = max_age_us;
    c->arena_size = arena;
    c->arena = (uint8_t *)&c->slots[n_slots];
    return c;
}

moat_retransmit_cache *moat_retransmit_cache_new(size_t n_slots, uint64_t min_resend_interval_us,
                                                 uint64_t max_age_us)
{
    return moat_retransmit_cache_new_bytes(n_slots, n_slots * MOAT_RETRANSMIT_MAX_PACKET,
                                           min_resend_interval_us, max_age_us);
}

void moat_retransmit_cache_free(moat_retransmit_cache *c)
{
    free(c);
}

/* Copies `length` bytes into the arena; returns their absolute start. */
static uint64_t arena_put(moat_retransmit_cache *c, const uint8_t *data, size_t length)
{
    size_t offset = (size_t)(c->head % c->arena_size);
    if (offset + length > c->arena_size) {
        c->head += c->arena_size - offset; /* wrap: start again at 0 */
        offset = 0;
    }
    uint64_t start = c->head;
    memcpy(c->arena + offset, data, length);
    c->head += length;
    return start;
}

static bool in_arena(const moat_retransmit_cache *c, const slot *s)
{
    return c->head - s->start <= c->arena_size;
}

static const uint8_t *bytes_of(const moat_retransmit_cache *c, const slot *s)
{
    return c->arena + (size_t)(s->start % c->arena_size);
}

int moat_retransmit_cache_store(moat_retransmit_cache *c, const uint8_t *packet, size_t length,
                                uint64_t now_us)
{
    if (packet == NULL || length < 12)
        return MOAT_RTP_ERR_TRUNCATED;
    if (length > MOAT_RETRANSMIT_MAX_PACKET)
        return MOAT_RTP_ERR_NO_SPACE;
    if (packet[0] >> 6 != 2)
        return MOAT_RTP_ERR_VERSION;
    uint16_t seq = moat_rd16(packet + 2);
    slot *s = &c->slots[seq & c->mask];
    s->start = arena_put(c, packet, length);
    s->length = (uint16_t)length;
    s->seq = seq;
    s->used = true;
    s->resent = false;
    s->stored_us = now_us;
    return MOAT_RTP_OK;
}

/* The slot for `seq` when it still holds that packet. */
static const slot *find(const moat_retransmit_cache *c, uint16_t seq)
{
    const slot *s = &c->slots[seq & c->mask];
    return s->used && s->seq == seq && in_arena(c, s) ? s : NULL;
}

int moat_retransmit_cache_get(const moat_retransmit_cache *c, uint16_t seq, const uint8_t **packet,
                              size_t *length)
{
    const slot *s = find(c, seq);
    if (s == NULL)
        return MOAT_RTP_ERR_NOT_FOUND;
    *packet = bytes_of(c, s);
    *length = s->length;
    return MOAT_RTP_OK;
}

int moat_retransmit_cache_get_stored(const moat_retransmit_cache *c, uint16_t seq,
                                     const uint8_t **packet, size_t *length, uint64_t *stored_us)
{
    const slot *s = find(c, seq);
    if (s == NULL)
        return MOAT_RTP_ERR_NOT_FOUND;
    *packet = bytes_of(c, s);
    *length = s->length;
    *stored_us = s->stored_us;
    return MOAT_RTP_OK;
}

int moat_retransmit_cache_resend(moat_retransmit_cache *c, uint16_t seq, uint64_t now_us,
                                 const uint8_t **packet, size_t *length)
{
    slot *s = &c->slots[seq & c->mask];
    if (find(c, seq) == NULL)
        return MOAT_RTP_ERR_NOT_FOUND;
    /* A slot last written 2^16 packets ago can hold the same sequence
     * number; the age limit keeps such a stale copy from being resent. */
    if (c->max_age_us > 0 && now_us > s->stored_us && now_us - s->stored_us > c->max_age_us)
        return MOAT_RTP_ERR_NOT_FOUND;
    if (s->resent && now_us - s->resent_us < c->min_resend_interval_us)
        return MOAT_RTP_ERR_RATE_LIMITED;
    s->resent = true;
    s->resent_us = now_us;
    *packet = bytes_of(c, s);
    *length = s->length;
    return MOAT_RTP_OK;
}

bool moat_retransmit_cache_resent_after(const moat_retransmit_cache *c, uint16_t seq,
                                        uint64_t after_us)
{
    const slot *s = find(c, seq);
    return s != NULL && s->resent && s->resent_us > after_us;
}

size_t moat_retransmit_cache_slots(const moat_retransmit_cache *c)
{
    return c->mask + 1;
}

size_t moat_retransmit_cache_bytes(const moat_retransmit_cache *c)
{
    return c->arena_size;
}

static int by_start(const void *a, const void *b)
{
    uint64_t x = (*(const slot *const *)a)->start, y = (*(const slot *const *)b)->start;
    return x < y ? -1 : x > y;
}

moat_retransmit_cache *moat_retransmit_cache_resized_bytes(const moat_retransmit_cache *c,
                                                           size_t n_slots, size_t arena_bytes)
{
    moat_retransmit_cache *bigger = moat_retransmit_cache_new_bytes(
        n_slots, arena_bytes, c->min_resend_interval_us, c->max_age_us);
    if (bigger == NULL)
        return NULL;
    /* Oldest first, so where two meet (a slot, or the arena's space) the
     * newest wins. */
    size_t n = 0;
    const slot **live = malloc((c->mask + 1) * sizeof *live);
    if (live == NULL) {
        free(bigger);
        return NULL;
    }
    for (size_t i = 0; i <= c->mask; i++) {
        if (c->slots[i].used && in_arena(c, &c->slots[i]))
            live[n++] = &c->slots[i];
    }
    qsort(live, n, sizeof *live, by_start);
    for (size_t i = 0; i < n; i++) {
        const slot *from = live[i];
        slot *to = &bigger->slots[from->seq & bigger->mask];
        *to = *from;
        to->start = arena_put(bigger, bytes_of(c, from), from->length);
    }
    free(live);
    return bigger;
}

moat_retransmit_cache *moat_retransmit_cache_resized(const moat_retransmit_cache *c, size_t n_slots)
{
    return moat_retransmit_cache_resized_bytes(c, n_slots, n_slots * MOAT_RETRANSMIT_MAX_PACKET);
}

void moat_retransmit_cache_clear(moat_retransmit_cache *c)
{
    size_t n = c->mask + 1;
    for (size_t i = 0; i < n; i++)
        c->slots[i].used = false;
}
