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
} moat_prefilter_settings;

#endif
