/* Owns the bounded LRU set of SSRCs behind one SRTP direction's libsrtp
 * streams (srtp_stream_table.h): lookup, use stamps, the slot to reuse. */
#include "srtp_stream_table.h"

static void mark_used(moat_srtp_stream_table *t, uint32_t slot)
{
    t->used[slot] = ++t->clock;
    t->last = slot;
}

bool moat_srtp_stream_table_touch(moat_srtp_stream_table *t, uint32_t ssrc)
{
    if (t->n > 0 && t->ssrc[t->last] == ssrc) {
        mark_used(t, t->last);
        return true;
    }
    for (uint32_t i = 0; i < t->n; i++) {
        if (t->ssrc[i] == ssrc) {
            mark_used(t, i);
            return true;
        }
    }
    return false;
}

bool moat_srtp_stream_table_holds(const moat_srtp_stream_table *t, uint32_t ssrc)
{
    if (t->n > 0 && t->ssrc[t->last] == ssrc)
        return true;
    for (uint32_t i = 0; i < t->n; i++) {
        if (t->ssrc[i] == ssrc)
            return true;
    }
    return false;
}

/* The least recently used slot not holding *keep (the oldest, its age
 * taken modulo 2^32 so the clock may wrap); the table is full, and *keep is
 * at most one of its MOAT_SRTP_MAX_STREAMS (> 1) SSRCs. */
static uint32_t least_recent(const moat_srtp_stream_table *t, const uint32_t *keep)
{
    uint32_t victim = t->n, oldest = 0;
    for (uint32_t i = 0; i < t->n; i++) {
        uint32_t age = t->clock - t->used[i];
        if (keep && t->ssrc[i] == *keep)
            continue;
        if (victim == t->n || age > oldest)
            victim = i, oldest = age;
    }
    return victim;
}

bool moat_srtp_stream_table_add(moat_srtp_stream_table *t, uint32_t ssrc, const uint32_t *keep,
                                uint32_t *evicted)
{
    if (t->n < MOAT_SRTP_MAX_STREAMS) {
        t->ssrc[t->n] = ssrc;
        mark_used(t, t->n++);
        return false;
    }
    uint32_t slot = least_recent(t, keep);
    *evicted = t->ssrc[slot];
    t->ssrc[slot] = ssrc;
    mark_used(t, slot);
    return true;
}

size_t moat_srtp_stream_table_count(const moat_srtp_stream_table *t)
{
    return t->n;
}
