/* What the configuration says about the prefilter, in the form the packet
 * path uses. One copy per gateway, read-only once workers run. */
#ifndef MOAT_PREFILTER_SETTINGS_H
#define MOAT_PREFILTER_SETTINGS_H

#include "prefilter/detector.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    moat_detector_mode mode;
    uint32_t hold_ms;
    double rate_factor;
    uint32_t min_excess_pps;
    uint32_t auth_failures_per_s;
    uint32_t budget_percent; /* SRTP+ transports: unverifiable packets, % of learned rate */
    uint32_t budget_min_pps;
    double legacy_budget_factor; /* transports without SRTP+: budget = factor x learned rate */
    uint32_t window_behind;
    uint32_t window_ahead;
    /* The worker socket's detector: floods spread over many 5-tuples. */
    uint32_t worker_failures_per_s;
    uint32_t worker_min_excess_pps;
    /* Authenticated RTP one session (not a cascade leg) may deliver, bytes
     * a second with one second's burst; beyond it packets drop as
     * rate_limit before any plugin sees them. 0: no cap. */
    uint64_t session_media_bytes_per_s;
} moat_prefilter_settings;

#endif
