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

void srtpplus_replay_mark(struct srtpplus_replay *replay, uint64_t index);

#endif
