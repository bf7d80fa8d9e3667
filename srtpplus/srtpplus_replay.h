/* The once-per-index record of SRTPPLUS.md section 5 rule 3 ("replay"): which indexes
 * passed srtp_unprotect, over a sliding window ending at the highest one. Its highest
 * index is the "highest authenticated index" the plausibility window is centred on. */
#ifndef SRTPPLUS_REPLAY_H
#define SRTPPLUS_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "srtpplus_scheme.h"

/* Larger than the largest allowed window behind, so every index the plausibility
 * check lets through has a bit of its own. */
#define SRTPPLUS_REPLAY_BITS 4096

struct srtpplus_replay {
    bool started;
    uint64_t highest;
    uint64_t lowest; /* lowest index ever marked, for the chain bootstrap rule */
    uint64_t words[SRTPPLUS_REPLAY_BITS / 64];
};

void srtpplus_replay_init(struct srtpplus_replay *replay);

/* Indexes older than the record are reported as seen: nothing can vouch for them. */
static inline bool srtpplus_replay_seen(const struct srtpplus_replay *replay, uint64_t index)
{
    if (!replay->started || index > replay->highest)
        return false;
    if (replay->highest - index >= SRTPPLUS_REPLAY_BITS)
        return true;
    uint64_t bit = index % SRTPPLUS_REPLAY_BITS;
    return (replay->words[bit / 64] >> (bit % 64)) & 1;
}

/* Any other case than "next index in order": first index, jumps, late packets. */
void srtpplus_replay_mark_general(struct srtpplus_replay *replay, uint64_t index);

static inline void srtpplus_replay_mark(struct srtpplus_replay *replay, uint64_t index)
{
    /* The usual case: the next packet in order. Its slot last belonged to an index
     * now outside the record, so setting the bit is all there is to do. */
    if (replay->started && index == replay->highest + 1) {
        uint64_t bit = index % SRTPPLUS_REPLAY_BITS;
        replay->words[bit / 64] |= (uint64_t)1 << (bit % 64);
        replay->highest = index;
        return;
    }
    srtpplus_replay_mark_general(replay, index);
}

#endif
