/* The flood defence of an SDES call leg, the same as a WebRTC transport's
 * (DESIGN.md): an anomaly detector on the leg's ingress and, before the
 * HMAC, either SRTP+ tags (SRTPPLUS.md, scheme prn, when the party
 * negotiated a=srtpplus) or, for parties without SRTP+, a stream guard that
 * drops what would certainly fail authentication while the detector (or the
 * worker socket's) enforces: an index outside the window around the stream's
 * highest authenticated one, a replayed index, an SSRC over its small
 * allowance, and under worker overload a flooded stream beyond its fair
 * chance. Nothing moves before authentication. SRTP+ also tags what Moat
 * sends to the party. Created by the control thread (keys), used and freed
 * on the leg's worker. */
#ifndef MOAT_CALL_LEG_GUARD_H
#define MOAT_CALL_LEG_GUARD_H

#include "engine/worker.h"
#include "prefilter/detector.h"
#include "prefilter/prefilter_settings.h"
#include "prefilter/stream_guard.h"
#include "srtp/srtp_keying.h"
#include "srtp/srtp_session.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct srtpplus_receiver;
struct srtpplus_sender;

typedef enum {
    MOAT_CALL_GUARD_PASS = 0,
    MOAT_CALL_GUARD_INDEX,  /* implausible index */
    MOAT_CALL_GUARD_REPLAY, /* index already authenticated */
    MOAT_CALL_GUARD_SSRC,   /* unknown SSRC over its allowance */
    MOAT_CALL_GUARD_BUDGET, /* unverifiable and over budget / fair chance */
    MOAT_CALL_GUARD_TAG,    /* SRTP+ tag known and different */
    MOAT_CALL_GUARD_MALFORMED,
} moat_call_guard_verdict;

typedef struct {
    moat_detector detector;
    moat_stream_guard guard;
    uint64_t next_tick_us;
    struct srtpplus_receiver *rx; /* SRTP+ negotiated: what the party sends */
    struct srtpplus_sender *tx;   /* ... and what Moat sends it */
} moat_call_leg_guard;

/* Control thread: a guard, with SRTP+ (prn) keyed from `keying` when
 * `srtpplus`. NULL on an SRTP+ key error. */
moat_call_leg_guard *moat_call_leg_guard_new(const moat_srtp_keying *keying, bool srtpplus);
void moat_call_leg_guard_free(moat_call_leg_guard *guard);
/* Control thread, before first use: the streams a restored call takes over
 * (call_restore.c) stood at these positions ([0] what Moat sent, [1] what
 * the party sent, as moat_srtp_session_resume takes them): SRTP+ follows
 * them from their rollover counters, as libsrtp does, not from 0. */
void moat_call_leg_guard_resume(moat_call_leg_guard *guard, const moat_srtp_position resume[2]);
/* Worker thread, before first use; settings NULL: [prefilter] defaults. */
void moat_call_leg_guard_init(moat_call_leg_guard *guard, const moat_prefilter_settings *settings,
                              uint64_t now_us);

/* Per received packet (plausible RTP of 12+ bytes, or RTCP), before
 * srtp_unprotect; *length drops the SRTP+ tag. `state` carries what
 * _result needs. */
typedef struct {
    uint64_t index;
    uint32_t ssrc;
} moat_call_guard_state;
moat_call_guard_verdict moat_call_leg_guard_check(moat_call_leg_guard *guard, moat_worker *worker,
                                                  const uint8_t *data, size_t *length, bool rtcp,
                                                  uint64_t now_us, moat_call_guard_state *state);
/* After srtp_unprotect (authenticated or not); *length may shrink (chain). */
void moat_call_leg_guard_result(moat_call_leg_guard *guard, uint8_t *data, size_t *length,
                                bool rtcp, bool authenticated, const moat_call_guard_state *state,
                                uint64_t now_us);
/* After a batch: refills SRTP+ tag windows. */
void moat_call_leg_guard_maintain(moat_call_leg_guard *guard);

/* Sending to the party: before and after srtp_protect (no-ops without
 * SRTP+). 0, or -1 when the packet cannot be tagged. */
int moat_call_leg_guard_prepare(moat_call_leg_guard *guard, uint8_t *data, size_t *length,
                                size_t capacity, bool rtcp);
int moat_call_leg_guard_tag(moat_call_leg_guard *guard, uint8_t *data, size_t *length,
                            size_t capacity, bool rtcp);

#endif
