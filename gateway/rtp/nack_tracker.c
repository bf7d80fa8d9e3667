/* Missing packets of one stream and when to NACK them (nack_tracker.h). */
#include "rtp/nack_tracker.h"

#include <string.h>

void moat_nack_init(moat_nack_tracker *t)
{
    memset(t, 0, sizeof *t);
    t->rtt_us = MOAT_NACK_INITIAL_RTT;
}

static bool bit(const moat_nack_tracker *t, uint16_t seq)
{
    unsigned i = seq % MOAT_NACK_WINDOW;
    return (t->received[i / 64] >> (i % 64)) & 1u;
}

static void set_bit(moat_nack_tracker *t, uint16_t seq, bool on)
{
    unsigned i = seq % MOAT_NACK_WINDOW;
    if (on)
        t->received[i / 64] |= 1ull << (i % 64);
    else
        t->received[i / 64] &= ~(1ull << (i % 64));
}

static void remove_at(moat_nack_tracker *t, size_t i)
{
    memmove(&t->missing[i], &t->missing[i + 1], (t->n_missing - i - 1) * sizeof t->missing[0]);
    t->n_missing--;
}

/* The `count` sequence numbers from `first` on go missing; past
 * MOAT_NACK_MAX_MISSING the oldest go (counted as given up). One move of
 * the list whatever the gap: a sender's jumps cannot cost a memmove per
 * missing packet. */
static void add_missing_run(moat_nack_tracker *t, uint16_t first, size_t count, uint64_t now_us)
{
    size_t total = t->n_missing + count;
    if (total > MOAT_NACK_MAX_MISSING) {
        size_t evict = total - MOAT_NACK_MAX_MISSING;
        t->counters.given_up += evict;
        t->overflowed += evict;
        size_t old = evict < t->n_missing ? evict : t->n_missing;
        memmove(&t->missing[0], &t->missing[old], (t->n_missing - old) * sizeof t->missing[0]);
        t->n_missing -= old;
        first = (uint16_t)(first + (evict - old)); /* new ones that would go at once */
        count -= evict - old;
    }
    for (size_t i = 0; i < count; i++)
        t->missing[t->n_missing++] =
            (moat_nack_missing){.seq = (uint16_t)(first + i), .missing_us = now_us};
}

static void sample_rtt(moat_nack_tracker *t, uint64_t sample)
{
    if (sample < MOAT_NACK_MIN_RTT)
        sample = MOAT_NACK_MIN_RTT;
    if (sample > MOAT_NACK_MAX_AGE_US)
        sample = MOAT_NACK_MAX_AGE_US;
    t->rtt_us = (t->rtt_us * 7 + sample) / 8;
}

/* A packet older than the highest: repaired when it was missing. */
static moat_nack_verdict late(moat_nack_tracker *t, uint16_t seq, uint64_t now_us)
{
    for (size_t i = 0; i < t->n_missing; i++) {
        moat_nack_missing *m = &t->missing[i];
        if (m->seq != seq)
            continue;
        if (m->tries == 1)
            sample_rtt(t, now_us - m->sent_us);
        remove_at(t, i);
        t->counters.repaired++;
        return MOAT_NACK_REPAIRED;
    }
    return MOAT_NACK_NEW; /* reordered, or given up already */
}

_Static_assert(MOAT_NACK_MAX_GAP < MOAT_NACK_WINDOW, "a gap's walk stays inside the window");

moat_nack_verdict moat_nack_on_packet(moat_nack_tracker *t, uint16_t seq, uint64_t now_us)
{
    if (!t->started) {
        t->started = true;
        t->highest = seq;
        set_bit(t, seq, true);
        return MOAT_NACK_NEW;
    }
    int16_t diff = (int16_t)(uint16_t)(seq - t->highest);
    if (diff > 0) {
        bool restart = diff > MOAT_NACK_MAX_GAP;
        if (restart) {
            t->counters.restarts++;
            t->counters.given_up += t->n_missing;
            t->n_missing = 0;
            memset(t->received, 0, sizeof t->received);
        }
        /* A restart's memset cleared the window: walking its gap (up to
         * 32,766 sequence numbers, chosen by the sender) would repeat that
         * work on every packet. A gap is at most MOAT_NACK_MAX_GAP. */
        if (!restart) {
            for (uint16_t s = (uint16_t)(t->highest + 1); s != seq; s++)
                set_bit(t, s, false);
            add_missing_run(t, (uint16_t)(t->highest + 1), (size_t)diff - 1, now_us);
        }
        t->highest = seq;
        set_bit(t, seq, true);
        return MOAT_NACK_NEW;
    }
    if (diff == 0 || (-diff < MOAT_NACK_WINDOW && bit(t, seq))) {
        t->counters.duplicates++;
        return MOAT_NACK_DUPLICATE;
    }
    if (-diff >= MOAT_NACK_WINDOW)
        return MOAT_NACK_TOO_OLD;
    set_bit(t, seq, true);
    return late(t, seq, now_us);
}

size_t moat_nack_due(moat_nack_tracker *t, uint64_t now_us, uint16_t *out, size_t max,
                     size_t *gave_up)
{
    uint64_t retry = t->rtt_us + t->rtt_us / 2;
    if (retry < MOAT_NACK_MIN_RETRY_US)
        retry = MOAT_NACK_MIN_RETRY_US;
    size_t n = 0, dropped = 0;
    for (size_t i = 0; i < t->n_missing;) {
        moat_nack_missing *m = &t->missing[i];
        uint64_t age = now_us - m->missing_us;
        /* An answer would come a round trip from now: too late is useless. */
        if (m->tries >= MOAT_NACK_MAX_TRIES || age + t->rtt_us > MOAT_NACK_MAX_AGE_US) {
            remove_at(t, i);
            dropped++;
            continue;
        }
        if (n < max && (m->tries == 0 || now_us - m->sent_us >= retry)) {
            out[n++] = m->seq;
            m->tries++;
            m->sent_us = now_us;
        }
        i++;
    }
    t->counters.nacked += n;
    t->counters.given_up += dropped;
    *gave_up = dropped + t->overflowed;
    t->overflowed = 0;
    return n;
}

uint64_t moat_nack_rtt_us(const moat_nack_tracker *t)
{
    return t->rtt_us;
}
