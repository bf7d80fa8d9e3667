/* The flood defence of an SDES call leg, the same as a WebRTC transport's
 * without SRTP+ (DESIGN.md): an anomaly detector on the leg's ingress and a
 * stream guard that, while the detector (or the worker socket's) enforces,
 * drops before the HMAC what would certainly fail it (an index outside the
 * window around the stream's highest authenticated one, a replayed index, an
 * SSRC over its small allowance) and, when the worker is overloaded, admits
 * a flooded stream's packets with one fair chance. Nothing moves before
 * authentication: streams advance only on packets srtp_unprotect accepted.
 * Worker thread; one guard per leg. */
#ifndef MOAT_CALL_LEG_GUARD_H
#define MOAT_CALL_LEG_GUARD_H

#include "core/worker.h"
#include "prefilter/detector.h"
#include "prefilter/prefilter_settings.h"
#include "prefilter/stream_guard.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    moat_detector detector;
    moat_stream_guard guard;
    uint64_t next_tick_us;
} moat_call_leg_guard;

/* settings NULL: the built-in defaults of [prefilter]. */
void moat_call_leg_guard_init(moat_call_leg_guard *guard, const moat_prefilter_settings *settings,
                              uint64_t now_us);

/* Before srtp_unprotect of a plausible RTP (header of 12 bytes at least) or
 * RTCP packet: MOAT_GUARD_PASS (and, for RTP, its index for _result) or why
 * it is dropped. */
moat_guard_verdict moat_call_leg_guard_check(moat_call_leg_guard *guard, moat_worker *worker,
                                             const uint8_t *data, bool rtcp, uint64_t now_us,
                                             uint64_t *index);
/* After srtp_unprotect: an authenticated RTP packet advances its stream; a
 * failure feeds the detector. */
void moat_call_leg_guard_result(moat_call_leg_guard *guard, const uint8_t *data, bool rtcp,
                                bool authenticated, uint64_t index, uint64_t now_us);

#endif
