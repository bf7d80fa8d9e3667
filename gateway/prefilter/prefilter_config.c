/* Owns the mapping from [prefilter] settings to detector, stream guard and
 * SRTP+ profile configurations (prefilter_config.h). */
#include "prefilter/prefilter_config.h"

moat_detector_config moat_prefilter_detector_config(const moat_prefilter_settings *settings,
                                                    uint32_t declared_pps)
{
    moat_detector_config config = {
        .mode = settings->mode,
        .hold_ms = settings->hold_ms,
        .rate_factor = settings->rate_factor,
        .min_excess_pps = settings->min_excess_pps,
        .auth_failures_per_s = settings->auth_failures_per_s,
        .declared_pps = declared_pps,
    };
    return config;
}

moat_stream_guard_config moat_prefilter_guard_config(const moat_prefilter_settings *settings)
{
    moat_stream_guard_config config = {
        .window_behind = settings->window_behind,
        .window_ahead = settings->window_ahead,
        .budget_factor = settings->legacy_budget_factor,
        .budget_min_pps = settings->budget_min_pps,
        .default_pps = 100,
    };
    return config;
}

enum srtpplus_profile moat_prefilter_srtpplus_profile(moat_srtp_profile profile)
{
    switch (profile) {
    case MOAT_SRTP_PROFILE_AES128_CM_SHA1_32:
        return SRTPPLUS_PROFILE_AES128_CM_SHA1_32;
    case MOAT_SRTP_PROFILE_AEAD_AES_128_GCM:
        return SRTPPLUS_PROFILE_AEAD_AES_128_GCM;
    default:
        return SRTPPLUS_PROFILE_AES128_CM_SHA1_80;
    }
}
