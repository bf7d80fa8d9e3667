/* What one fan-out subscriber received: per SSRC, the packets that came and
 * the sequence-number span they cover (RFC 3550 A.1's update_seq: extended
 * numbers, a packet new within SFU_LOSS_MAX_DROPOUT ahead, late or a
 * duplicate within SFU_LOSS_MAX_MISORDER behind, a larger jump a resync
 * once two sequential packets confirm it), so gaps are losses. Owned by the
 * subscriber's session. */
#ifndef SFU_LOSS_H
#define SFU_LOSS_H

#include <stdbool.h>
#include <stdint.h>

#define SFU_LOSS_MAX_STREAMS  4
#define SFU_LOSS_MAX_DROPOUT  3000
#define SFU_LOSS_MAX_MISORDER 100

typedef struct {
    uint32_t ssrc;
    uint64_t received; /* every packet of the SSRC, in a span or not */
    /* The span since the first packet or the last resync: */
    uint32_t first, highest; /* extended sequence numbers */
    uint32_t cycles;         /* wraps of the 16-bit number, shifted left 16 */
    uint16_t max_sequence;
    uint64_t span_received; /* packets inside it (duplicates and late ones too) */
    /* Before: */
    uint64_t earlier_gaps; /* the gaps of the spans a resync ended */
    uint64_t resyncs;
    /* After a jump too large to be new: the number that, next, confirms it. */
    bool jumped;
    uint16_t bad_sequence;
} sfu_loss_stream;

typedef struct {
    sfu_loss_stream streams[SFU_LOSS_MAX_STREAMS];
    unsigned n_streams;
    uint64_t other_ssrcs; /* packets of SSRCs beyond SFU_LOSS_MAX_STREAMS */
    uint64_t unprotect_failures;
    uint64_t rtcp_received;
    bool counting; /* packets before the run started are not counted */
} sfu_loss;

void sfu_loss_on_rtp(sfu_loss *l, uint32_t ssrc, uint16_t sequence);
uint64_t sfu_loss_received(const sfu_loss *l);
/* Packets the sequence-number spans say were sent but never came (a jump
 * the sender resynchronised to, or a lone stray, counts none). */
uint64_t sfu_loss_gaps(const sfu_loss *l);

#endif
