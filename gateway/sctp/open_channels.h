/* The open data channels of one peer, remembered so that another can take
 * over when the one in use closes (the room and tunnel plugins). One bit per
 * stream id the association has (MOAT_SCTP_STREAMS, 256 bytes), so every
 * open channel is remembered however many there are; one owner thread (the
 * peer's worker), no allocation. */
#ifndef MOAT_OPEN_CHANNELS_H
#define MOAT_OPEN_CHANNELS_H

#include "sctp/sctp_tuning.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_OPEN_CHANNELS MOAT_SCTP_STREAMS

typedef struct {
    uint64_t open[MOAT_OPEN_CHANNELS / 64];
} moat_open_channels;

/* Remembers an open channel, or forgets a closed one. A stream id the
 * association cannot have is ignored. */
static inline void moat_open_channels_note(moat_open_channels *c, uint16_t stream_id, bool open)
{
    if (stream_id >= MOAT_OPEN_CHANNELS)
        return;
    uint64_t bit = UINT64_C(1) << (stream_id % 64);
    if (open)
        c->open[stream_id / 64] |= bit;
    else
        c->open[stream_id / 64] &= ~bit;
}

/* The lowest open channel's stream id + 1, or 0 when none is open. */
static inline int moat_open_channels_any(const moat_open_channels *c)
{
    for (size_t i = 0; i < MOAT_OPEN_CHANNELS / 64; i++) {
        if (c->open[i])
            return (int)(i * 64) + __builtin_ctzll(c->open[i]) + 1;
    }
    return 0;
}

#endif
