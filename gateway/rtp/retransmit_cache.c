/* Ring of recently sent RTP packets indexed by sequence number. */
#include "rtp/retransmit_cache.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rtp/rtp_bytes.h"

typedef struct {
    bool used;
    bool resent;
    uint16_t seq;
    uint16_t length;
    uint64_t stored_us;
    uint64_t resent_us;
    uint8_t data[MOAT_RETRANSMIT_MAX_PACKET];
} slot;

struct moat_retransmit_cache {
    size_t mask;
    uint64_t min_resend_interval_us;
    uint64_t max_age_us;
    slot slots[];
};

moat_retransmit_cache *moat_retransmit_cache_new(size_t n_slots, uint64_t min_resend_interval_us,
                                                 uint64_t max_age_us)
{
    if (n_slots == 0 || n_slots > 32768 || (n_slots & (n_slots - 1)) != 0)
        return NULL;
    moat_retransmit_cache *c = calloc(1, sizeof(*c) + n_slots * sizeof(slot));
    if (c == NULL)
        return NULL;
    c->mask = n_slots - 1;
    c->min_resend_interval_us = min_resend_interval_us;
    c->max_age_us = max_age_us;
    return c;
}

void moat_retransmit_cache_free(moat_retransmit_cache *c)
{
    free(c);
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
    memcpy(s->data, packet, length);
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
    return s->used && s->seq == seq ? s : NULL;
}

int moat_retransmit_cache_get(const moat_retransmit_cache *c, uint16_t seq, const uint8_t **packet,
                              size_t *length)
{
    const slot *s = find(c, seq);
    if (s == NULL)
        return MOAT_RTP_ERR_NOT_FOUND;
    *packet = s->data;
    *length = s->length;
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
    *packet = s->data;
    *length = s->length;
    return MOAT_RTP_OK;
}

size_t moat_retransmit_cache_slots(const moat_retransmit_cache *c)
{
    return c->mask + 1;
}

/* Whether sequence number a is newer than b (RFC 3550 modular order). */
static bool newer(uint16_t a, uint16_t b)
{
    return a != b && (uint16_t)(a - b) < 0x8000u;
}

moat_retransmit_cache *moat_retransmit_cache_resized(const moat_retransmit_cache *c, size_t n_slots)
{
    moat_retransmit_cache *bigger =
        moat_retransmit_cache_new(n_slots, c->min_resend_interval_us, c->max_age_us);
    if (bigger == NULL)
        return NULL;
    for (size_t i = 0; i <= c->mask; i++) {
        const slot *from = &c->slots[i];
        if (!from->used)
            continue;
        slot *to = &bigger->slots[from->seq & bigger->mask];
        if (to->used && !newer(from->seq, to->seq))
            continue;
        memcpy(to, from, offsetof(slot, data) + from->length);
    }
    return bigger;
}

void moat_retransmit_cache_clear(moat_retransmit_cache *c)
{
    size_t n = c->mask + 1;
    for (size_t i = 0; i < n; i++)
        c->slots[i].used = false;
}
