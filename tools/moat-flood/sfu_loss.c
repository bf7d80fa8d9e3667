/* Sequence-gap loss per SSRC for fan-out subscribers (RFC 3550 A.1's
 * sequence-number validation, sfu_loss.h). */
#include "sfu_loss.h"

#include <string.h>

static void start_span(sfu_loss_stream *st, uint16_t sequence)
{
    st->first = st->highest = sequence;
    st->cycles = 0;
    st->max_sequence = sequence;
    st->span_received = 1;
    st->jumped = false;
}

static uint64_t span_gaps(const sfu_loss_stream *st)
{
    uint64_t expected = (uint64_t)(st->highest - st->first) + 1;
    return expected > st->span_received ? expected - st->span_received : 0;
}

static sfu_loss_stream *find(sfu_loss *l, uint32_t ssrc, bool *fresh)
{
    *fresh = false;
    for (unsigned i = 0; i < l->n_streams; i++)
        if (l->streams[i].ssrc == ssrc)
            return &l->streams[i];
    if (l->n_streams == SFU_LOSS_MAX_STREAMS)
        return NULL;
    sfu_loss_stream *st = &l->streams[l->n_streams++];
    memset(st, 0, sizeof *st);
    st->ssrc = ssrc;
    *fresh = true;
    return st;
}

/* A jump of more than SFU_LOSS_MAX_DROPOUT ahead (or SFU_LOSS_MAX_MISORDER
 * behind): RFC 3550 A.1 takes it for a sender that restarted its numbers
 * once the next packet follows it, and otherwise ignores it. */
static void on_jump(sfu_loss_stream *st, uint16_t sequence)
{
    if (st->jumped && sequence == st->bad_sequence) {
        st->earlier_gaps += span_gaps(st);
        st->resyncs++;
        start_span(st, sequence);
        return;
    }
    st->jumped = true;
    st->bad_sequence = (uint16_t)(sequence + 1);
}

void sfu_loss_on_rtp(sfu_loss *l, uint32_t ssrc, uint16_t sequence)
{
    if (!l->counting)
        return;
    bool fresh;
    sfu_loss_stream *st = find(l, ssrc, &fresh);
    if (st == NULL) {
        l->other_ssrcs++;
        return;
    }
    st->received++;
    if (fresh) {
        start_span(st, sequence);
        return;
    }
    uint16_t delta = (uint16_t)(sequence - st->max_sequence);
    if (delta != 0 && delta < SFU_LOSS_MAX_DROPOUT) {
        /* New, with a permissible gap. */
        if (sequence < st->max_sequence)
            st->cycles += 1u << 16;
        st->max_sequence = sequence;
        st->highest = st->cycles | sequence;
        st->span_received++;
    } else if (delta != 0 && delta <= 0x10000 - SFU_LOSS_MAX_MISORDER) {
        on_jump(st, sequence);
    } else {
        st->span_received++; /* duplicate, late or reordered: already inside the span */
    }
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
    for (unsigned i = 0; i < l->n_streams; i++)
        gaps += l->streams[i].earlier_gaps + span_gaps(&l->streams[i]);
    return gaps;
}
