/* Sequence-gap loss per SSRC for fan-out subscribers. */
#include "sfu_loss.h"

#include <string.h>

/* Within this many numbers ahead the packet is new; further behind it is a
 * late or duplicate one (RFC 3550 A.1 uses the same split). */
#define MAX_DROPOUT 3000

static sfu_loss_stream *find(sfu_loss *l, uint32_t ssrc, uint16_t sequence)
{
    for (unsigned i = 0; i < l->n_streams; i++)
        if (l->streams[i].ssrc == ssrc)
            return &l->streams[i];
    if (l->n_streams == SFU_LOSS_MAX_STREAMS)
        return NULL;
    sfu_loss_stream *st = &l->streams[l->n_streams++];
    memset(st, 0, sizeof *st);
    st->ssrc = ssrc;
    st->first = st->highest = sequence;
    st->max_sequence = sequence;
    return st;
}

void sfu_loss_on_rtp(sfu_loss *l, uint32_t ssrc, uint16_t sequence)
{
    if (!l->counting)
        return;
    bool fresh = true;
    for (unsigned i = 0; i < l->n_streams; i++)
        fresh = fresh && l->streams[i].ssrc != ssrc;
    sfu_loss_stream *st = find(l, ssrc, sequence);
    if (st == NULL) {
        l->other_ssrcs++;
        return;
    }
    st->received++;
    if (fresh)
        return;
    uint16_t delta = (uint16_t)(sequence - st->max_sequence);
    if (delta == 0 || delta >= 0x8000 - MAX_DROPOUT)
        return; /* duplicate, late or reordered: already inside the span */
    if (sequence < st->max_sequence)
        st->cycles += 1u << 16;
    st->max_sequence = sequence;
    st->highest = st->cycles | sequence;
}

uint64_t sfu_loss_received(const sfu_loss *l)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < l->n_streams; i++)
        total += l->streams[i].received;
    return total;
}

uint64_t sfu_loss_gaps(const sfu_loss *l)
{
    uint64_t gaps = 0;
    for (unsigned i = 0; i < l->n_streams; i++) {
        const sfu_loss_stream *st = &l->streams[i];
        uint64_t expected = (uint64_t)(st->highest - st->first) + 1;
        if (expected > st->received)
            gaps += expected - st->received;
    }
    return gaps;
}
