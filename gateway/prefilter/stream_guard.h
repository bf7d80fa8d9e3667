/* The structural prefilter stages for transports without SRTP+ (browsers,
 * most SIP phones): a packet must name an SSRC this transport knows, carry a
 * plausible sequence number, and, while the detector enforces, fit in its
 * stream's verification budget, a token bucket sized to a multiple of the
 * stream's learned legitimate rate. The budget has two tiers: packets close
 * to the highest authenticated index (where the next legitimate packets are)
 * draw from one bucket, the rest of the plausibility window from a smaller
 * one, so an off-path flood with random sequence numbers, which lands near
 * the stream's position only by chance, cannot spend the legitimate
 * packets' tokens. That bounds the HMAC work one attacked
 * stream can cause, so it cannot starve the other sessions of its worker.
 * Streams are created and advanced only by authenticated packets
 * (moat_stream_guard_confirm_rtp): nothing changes before authentication. */
#ifndef MOAT_STREAM_GUARD_H
#define MOAT_STREAM_GUARD_H

#include "srtpplus_budget.h"

#include <stdbool.h>
#include <stdint.h>

#define MOAT_STREAM_GUARD_MAX_STREAMS 16
/* "Near" the highest authenticated index: reordering and short losses. */
#define MOAT_STREAM_GUARD_NEAR 64

typedef enum {
    MOAT_GUARD_PASS = 0,
    MOAT_GUARD_DROP_INDEX,
    MOAT_GUARD_DROP_UNKNOWN_SSRC,
    MOAT_GUARD_DROP_BUDGET,
} moat_guard_verdict;

typedef struct {
    uint32_t window_behind; /* plausible: highest - behind .. highest + ahead */
    uint32_t window_ahead;
    double budget_factor;    /* budget = factor x learned rate ... */
    uint32_t budget_min_pps; /* ... but at least this */
    uint32_t default_pps;    /* assumed rate of a stream first seen authenticated */
} moat_stream_guard_config;

typedef struct {
    uint32_t ssrc;
    bool authenticated; /* has a highest index */
    uint64_t highest_index;
    double learned_pps;
    uint64_t rate_window_start_us;
    uint32_t rate_window_packets;
    uint32_t budget_rate;
    struct srtpplus_budget budget;      /* near the highest index */
    struct srtpplus_budget wide_budget; /* elsewhere in the window */
} moat_guarded_stream;

typedef struct {
    moat_stream_guard_config config;
    moat_guarded_stream streams[MOAT_STREAM_GUARD_MAX_STREAMS];
    unsigned n_streams;
    /* Unknown SSRCs and RTCP share small budgets of their own. */
    struct srtpplus_budget unknown_budget;
    struct srtpplus_budget rtcp_budget;
} moat_stream_guard;

void moat_stream_guard_init(moat_stream_guard *guard, const moat_stream_guard_config *config);
/* An SSRC the SDP declared; it still needs authentication to get an index.
 * `expected_pps` (what its media kind usually sends) sizes its budget until
 * its real rate is learned. */
void moat_stream_guard_declare(moat_stream_guard *guard, uint32_t ssrc, uint32_t expected_pps);
/* Checks an RTP packet's SSRC and sequence number. When not enforcing only
 * the index is estimated (for confirm) and everything passes. */
moat_guard_verdict moat_stream_guard_check_rtp(moat_stream_guard *guard, uint32_t ssrc,
                                               uint16_t sequence, bool enforcing, uint64_t now_us,
                                               uint64_t *index_out);
/* After srtp_unprotect succeeded. */
void moat_stream_guard_confirm_rtp(moat_stream_guard *guard, uint32_t ssrc, uint64_t index,
                                   uint64_t now_us);
moat_guard_verdict moat_stream_guard_check_rtcp(moat_stream_guard *guard, bool enforcing,
                                                uint64_t now_us);
/* The centre of ssrc's plausibility window (its highest authenticated
 * index), for the kernel filter; false until a packet of it authenticated. */
bool moat_stream_guard_highest(const moat_stream_guard *guard, uint32_t ssrc, uint64_t *highest);
/* RFC 3711 Appendix A: the index of `sequence` given the highest index seen. */
uint64_t moat_estimate_index(uint64_t highest_index, uint16_t sequence);

#endif
