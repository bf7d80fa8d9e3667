/* Statistics of one incoming RTP stream (one SSRC) as RFC 3550 appendix A
 * computes them: sequence validation with probation and extended sequence
 * numbers (A.1), loss for reception reports (A.3), interarrival jitter (A.8),
 * the last SR for LSR/DLSR (section 6.4.1), and which recent sequence numbers
 * are still missing, for generic NACK. Plain data: the owner embeds it (for
 * example in its per-stream state) and no allocation happens. */
#ifndef MOAT_RTP_RECEIVE_STATS_H
#define MOAT_RTP_RECEIVE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtp/rtcp_packet.h"

/* RFC 3550 A.1 defaults. */
#define MOAT_RTP_MIN_SEQUENTIAL 2
#define MOAT_RTP_MAX_DROPOUT    3000
#define MOAT_RTP_MAX_MISORDER   100
/* How far behind the highest sequence number losses are remembered. */
#define MOAT_RTP_MISSING_WINDOW 512

typedef enum {
    MOAT_RTP_SEQ_VALID = 0,     /* counted */
    MOAT_RTP_SEQ_PROBATION = 1, /* source not yet validated; not counted */
    MOAT_RTP_SEQ_BAD = 2,       /* a large jump; not counted unless the next packet confirms it */
    MOAT_RTP_SEQ_RESTARTED = 3, /* the jump was confirmed: statistics restarted, packet counted */
} moat_rtp_seq_result;

typedef struct {
    uint32_t ssrc;
    uint32_t min_sequential;
    bool started;
    bool validated;
    uint32_t probation;
    uint16_t max_seq;
    uint32_t cycles; /* count of wraps, shifted left by 16 */
    uint32_t base_seq;
    uint32_t bad_seq;
    uint32_t received;
    uint32_t expected_prior;
    uint32_t received_prior;

    bool have_transit;
    uint32_t transit;
    uint32_t jitter_q4; /* jitter in timestamp units, times 16 (A.8) */

    bool have_sr;
    uint32_t last_sr;         /* middle 32 bits of the SR's NTP timestamp */
    uint64_t last_sr_arrival; /* caller's clock, microseconds */

    /* Bit i set: extended sequence number with (ext % WINDOW) == i arrived.
     * Only numbers in [missing_floor, highest] are meaningful. */
    uint64_t arrived[MOAT_RTP_MISSING_WINDOW / 64];
    uint32_t missing_floor;
} moat_rtp_receive_stats;

/* min_sequential: packets in sequence needed before the source counts as
 * valid (RFC 3550 uses 2); 0 accepts the first packet, which is reasonable
 * when packets are already authenticated by SRTP. */
void moat_rtp_receive_stats_init(moat_rtp_receive_stats *s, uint32_t ssrc, uint32_t min_sequential);

/* Accounts one packet. `arrival` is the arrival time converted by the caller
 * into the stream's RTP clock units (any origin, wrapping modulo 2^32);
 * `timestamp` is the packet's RTP timestamp. */
moat_rtp_seq_result moat_rtp_receive_stats_update(moat_rtp_receive_stats *s, uint16_t seq,
                                                  uint32_t timestamp, uint32_t arrival);

/* Records a sender report from this source, received at now_us. */
void moat_rtp_receive_stats_on_sr(moat_rtp_receive_stats *s, uint64_t ntp_timestamp,
                                  uint64_t now_us);

/* Extended highest sequence number received (cycles + max_seq). */
uint32_t moat_rtp_receive_stats_extended_max(const moat_rtp_receive_stats *s);
/* Interarrival jitter in timestamp units. */
uint32_t moat_rtp_receive_stats_jitter(const moat_rtp_receive_stats *s);

/* Fills a report block for this source and starts a new reporting interval
 * (fraction lost is over the interval since the previous call). Returns false
 * and leaves *out untouched while the source is not validated. */
bool moat_rtp_receive_stats_fill_report(moat_rtp_receive_stats *s, uint64_t now_us,
                                        moat_rtcp_report_block *out);

/* Writes up to `max` sequence numbers, oldest first, that are missing between
 * the highest received one and at most MOAT_RTP_MISSING_WINDOW - 1 before it.
 * Returns how many were written. */
size_t moat_rtp_receive_stats_missing(const moat_rtp_receive_stats *s, uint16_t *seqs, size_t max);
/* Stops reporting `seq` as missing (for example after the last NACK retry). */
void moat_rtp_receive_stats_forget_missing(moat_rtp_receive_stats *s, uint16_t seq);

#endif
