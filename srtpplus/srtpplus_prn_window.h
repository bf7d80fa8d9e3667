/* Precomputed prn tags for a range of indexes around the highest authenticated one, so
 * that checking an arriving packet is one lookup and one compare. The ring holds the
 * tags of [lo, hi); refills extend hi in chunks computed in one batch, and run when the
 * caller has time (srtpplus_receiver_maintain), never from the per-packet check. */
#ifndef SRTPPLUS_PRN_WINDOW_H
#define SRTPPLUS_PRN_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "srtpplus_prn.h"

struct srtpplus_prn_window {
    uint32_t *tags; /* ring, indexed by index & mask */
    uint64_t mask;
    uint64_t lo, hi;    /* tags of [lo, hi) are valid */
    uint64_t refill_at; /* the highest index from which on a refill is due */
    uint64_t limit;     /* one past the largest index of this kind */
    uint32_t ahead;     /* the window must reach highest + ahead */
    uint32_t chunk;     /* refill once fewer than this many tags remain beyond that */
    uint32_t ssrc;
    uint8_t kind;
};

/* Sizes the ring so that [highest - behind, highest + ahead] plus two refill chunks of
 * at least min_chunk fit. Returns an srtpplus_status. */
int srtpplus_prn_window_init(struct srtpplus_prn_window *window, uint8_t kind, uint32_t ssrc,
                             uint32_t behind, uint32_t ahead, uint32_t min_chunk, uint64_t limit);
void srtpplus_prn_window_release(struct srtpplus_prn_window *window);

static inline bool srtpplus_prn_window_lookup(const struct srtpplus_prn_window *window,
                                              uint64_t index, uint32_t *tag)
{
    /* One unsigned compare covers both ends of [lo, hi). */
    if (index - window->lo >= window->hi - window->lo)
        return false;
    *tag = window->tags[index & window->mask];
    return true;
}

static inline bool srtpplus_prn_window_wants_refill(const struct srtpplus_prn_window *window,
                                                    uint64_t highest)
{
    return highest >= window->refill_at;
}

/* Extends the window so it covers the plausibility window around highest with two
 * chunks to spare. */
int srtpplus_prn_window_refill(struct srtpplus_prn_window *window, struct srtpplus_prn *prn,
                               uint64_t highest);

#endif
