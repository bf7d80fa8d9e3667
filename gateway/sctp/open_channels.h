/* The open data channels of one peer, remembered so that another can take
 * over when the one in use closes (the room and tunnel plugins). Up to
 * MOAT_OPEN_CHANNELS stream ids; one owner thread (the peer's worker), no
 * allocation. */
#ifndef MOAT_OPEN_CHANNELS_H
#define MOAT_OPEN_CHANNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_OPEN_CHANNELS 16

typedef struct {
    uint16_t ids[MOAT_OPEN_CHANNELS];
    size_t n;
} moat_open_channels;

/* Remembers an open channel, or forgets a closed one. */
static inline void moat_open_channels_note(moat_open_channels *c, uint16_t stream_id, bool open)
{
    for (size_t i = 0; i < c->n; i++) {
        if (c->ids[i] != stream_id)
            continue;
        if (!open)
            c->ids[i] = c->ids[--c->n];
        return;
    }
    if (open && c->n < MOAT_OPEN_CHANNELS)
        c->ids[c->n++] = stream_id;
}

/* An open channel's stream id + 1, or 0 when none is open. */
static inline int moat_open_channels_any(const moat_open_channels *c)
{
    return c->n ? (int)c->ids[0] + 1 : 0;
}

#endif
