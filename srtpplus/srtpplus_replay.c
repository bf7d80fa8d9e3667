/* The once-per-index replay record of SRTPPLUS.md section 5 rule 3: marking an index
 * other than the next in order (first index, jumps that slide the 4096-bit window, late
 * packets); the in-order mark and the test are inline in srtpplus_replay.h. */
#include "srtpplus_replay.h"

#include <string.h>

void srtpplus_replay_init(struct srtpplus_replay *replay)
{
    memset(replay, 0, sizeof(*replay));
}

static void clear_bit(struct srtpplus_replay *replay, uint64_t index)
{
    uint64_t bit = index % SRTPPLUS_REPLAY_BITS;
    replay->words[bit / 64] &= ~((uint64_t)1 << (bit % 64));
}

void srtpplus_replay_mark_general(struct srtpplus_replay *replay, uint64_t index)
{
    if (!replay->started) {
        memset(replay->words, 0, sizeof(replay->words));
        replay->started = true;
        replay->highest = index;
        replay->lowest = index;
    } else if (index > replay->highest) {
        /* The bits of the indexes the window slides over belonged to indexes that are
         * now too old; clear them so they read as "not yet authenticated". */
        uint64_t advance = index - replay->highest;
        if (advance >= SRTPPLUS_REPLAY_BITS) {
            memset(replay->words, 0, sizeof(replay->words));
        } else {
            for (uint64_t i = replay->highest + 1; i < index; i++)
                clear_bit(replay, i);
            clear_bit(replay, index);
        }
        replay->highest = index;
    } else if (replay->highest - index >= SRTPPLUS_REPLAY_BITS) {
        return;
    }
    if (index < replay->lowest)
        replay->lowest = index;
    uint64_t bit = index % SRTPPLUS_REPLAY_BITS;
    replay->words[bit / 64] |= (uint64_t)1 << (bit % 64);
}
