/* The structural prefilter stages for transports without SRTP+ (browsers,
 * most SIP phones). Rule: never worse than no defence. While the detector
 * enforces, a packet is dropped before authentication only when it would
 * certainly fail it: an SSRC the transport does not know (past a small
 * allowance for a renegotiated track), an index further behind the stream's
 * highest authenticated index than libsrtp's replay window, or an index that
 * was already authenticated. An index further ahead than the plausibility
 * window is not certain to fail (libsrtp accepts any index ahead of its
 * highest: a stream back from an outage), but a flood of forgeries lands
 * there mostly: such packets reach srtp_unprotect through a small allowance
 * per stream (the jump probe: each with the same chance, so a stream back
 * from a gap gets its share however many forgeries land there), and its
 * first authenticated packet re-centres its window; the rest are dropped.
 * Every other packet goes to srtp_unprotect, unless the worker reports that
 * it is genuinely overloaded (moat_guard_load below a full chance). Then
 * the packets of a stream that arrives faster than its budget are admitted
 * with one and the same probability each, so a legitimate packet keeps at
 * least its share of the chance however many forgeries share its stream: no
 * bucket an attacker can empty first.
 * Streams are created and advanced only by authenticated packets
 * (moat_stream_guard_confirm_rtp): nothing changes before authentication.
 * Pure state, time passed in; one guard belongs to one worker thread. */
#ifndef MOAT_STREAM_GUARD_H
#define MOAT_STREAM_GUARD_H

#include "srtpplus_budget.h"

#include <stdbool.h>
#include <stdint.h>

#define MOAT_STREAM_GUARD_MAX_STREAMS 16
/* Admission chances are fixed point: MOAT_GUARD_CHANCE_ALL is certainty. */
#define MOAT_GUARD_CHANCE_ALL 65536u
/* Authenticated indexes remembered behind the highest one (replay). */
#define MOAT_STREAM_GUARD_REPLAY_BITS 64

typedef enum {
    MOAT_GUARD_PASS = 0,
    MOAT_GUARD_DROP_INDEX,
    MOAT_GUARD_DROP_UNKNOWN_SSRC,
    MOAT_GUARD_DROP_BUDGET,
    MOAT_GUARD_DROP_REPLAY,
} moat_guard_verdict;

/* What the transport's detector and its worker say, per packet. */
typedef struct {
    bool enforcing;  /* detector on: drop what certainly fails */
    uint32_t chance; /* worker overloaded: admission chance it can afford for a
                        flooded stream, out of MOAT_GUARD_CHANCE_ALL (which means
                        not overloaded: everything plausible is admitted) */
} moat_guard_load;

typedef struct {
    uint32_t window_behind;  /* plausible: highest - behind .. highest + ahead */
    uint32_t window_ahead;   /* further ahead: the jump probe's allowance only */
    double budget_factor;    /* share under overload: factor x learned rate ... */
    uint32_t budget_min_pps; /* ... but at least this */
    uint32_t default_pps;    /* assumed rate of a stream first seen authenticated */
} moat_stream_guard_config;

/* Fair admission of one class of packets (a stream, or RTCP): plausible
 * arrivals are counted over short windows; while the worker is overloaded,
 * each packet of a class that arrived faster than its allowance is admitted
 * with chance allowance / arrivals (or the worker's chance, if higher). */
typedef struct {
    uint64_t window_start_us;
    uint32_t arrivals;    /* plausible packets in the current window */
    uint32_t allowance;   /* packets per window admitted for sure */
    uint32_t fair_chance; /* from the last window: allowance / arrivals */
} moat_guard_admission;

typedef struct {
    uint32_t ssrc;
    bool authenticated; /* has a highest index */
    uint64_t highest_index;
    uint64_t replay_bits; /* bit i: highest_index - i was authenticated */
    double learned_pps;
    uint64_t rate_window_start_us;
    uint32_t rate_window_packets;
    uint32_t budget_rate;
    moat_guard_admission admission;
    /* Packets ahead of the window: each reaches srtp_unprotect with the
     * same chance, 20 a second in all (the jump probe). */
    moat_guard_admission jump_probe;
} moat_guarded_stream;

typedef struct {
    moat_stream_guard_config config;
    moat_guarded_stream streams[MOAT_STREAM_GUARD_MAX_STREAMS];
    unsigned n_streams;
    /* Unknown SSRCs: a small allowance of their own, so a new track can
     * prove itself; it can never take anything from the known streams. */
    struct srtpplus_budget unknown_budget;
    /* RTCP has its own admission, never shared with RTP. */
    moat_guard_admission rtcp;
    uint32_t random; /* xorshift state for admission draws */
} moat_stream_guard;

/* The plausibility window of a stream, for a kernel filter (eBPF) to mirror:
 * [lowest, highest] in 48-bit SRTP indexes. */
typedef struct {
    uint32_t ssrc;
    bool known;         /* an authenticated packet fixed its position */
    uint64_t lowest;    /* oldest plausible index */
    uint64_t highest;   /* newest plausible index */
    uint64_t authentic; /* highest authenticated index */
} moat_guard_window;

void moat_stream_guard_init(moat_stream_guard *guard, const moat_stream_guard_config *config);
/* An SSRC the SDP declared; it still needs authentication to get an index.
 * `expected_pps` (what its media kind usually sends) sizes its share until
 * its real rate is learned. */
void moat_stream_guard_declare(moat_stream_guard *guard, uint32_t ssrc, uint32_t expected_pps);
/* Checks an RTP packet's SSRC and sequence number. When not enforcing only
 * the index is estimated (for confirm) and everything passes. */
moat_guard_verdict moat_stream_guard_check_rtp(moat_stream_guard *guard, uint32_t ssrc,
                                               uint16_t sequence, const moat_guard_load *load,
                                               uint64_t now_us, uint64_t *index_out);
/* After srtp_unprotect succeeded. */
void moat_stream_guard_confirm_rtp(moat_stream_guard *guard, uint32_t ssrc, uint64_t index,
                                   uint64_t now_us);
/* SRTCP: its index is checked by libsrtp's replay database before the HMAC,
 * so only the overload admission applies here. */
moat_guard_verdict moat_stream_guard_check_rtcp(moat_stream_guard *guard,
                                                const moat_guard_load *load, uint64_t now_us);
/* The centre of ssrc's plausibility window (its highest authenticated
 * index), for the kernel filter; false until a packet of it authenticated. */
bool moat_stream_guard_highest(const moat_stream_guard *guard, uint32_t ssrc, uint64_t *highest);
/* RFC 3711 Appendix A: the index of `sequence` given the highest index seen. */
uint64_t moat_estimate_index(uint64_t highest_index, uint16_t sequence);
/* Accessor for the eBPF exporter: the window of stream `i` (< n_streams). */
unsigned moat_stream_guard_count(const moat_stream_guard *guard);
void moat_stream_guard_window(const moat_stream_guard *guard, unsigned i, moat_guard_window *out);

#endif
