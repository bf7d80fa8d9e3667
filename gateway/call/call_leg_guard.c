/* Owns the SDES leg's prefilter stages (call_leg_guard.h) over the shared
 * detector and stream guard of gateway/prefilter/. */
#include "call/call_leg_guard.h"

/* [prefilter] defaults (config.c), for workers without settings. */
static const moat_prefilter_settings default_settings = {
    .mode = MOAT_DETECTOR_MODE_AUTO,
    .hold_ms = 2000,
    .rate_factor = 4.0,
    .min_excess_pps = 200,
    .auth_failures_per_s = 50,
    .budget_min_pps = 20,
    .legacy_budget_factor = 2.0,
    .window_behind = 1024,
    .window_ahead = 4096,
};

/* An audio stream and its RTCP, as an SDP usually implies. */
#define LEG_DECLARED_PPS 70u

void moat_call_leg_guard_init(moat_call_leg_guard *guard, const moat_prefilter_settings *settings,
                              uint64_t now_us)
{
    if (!settings)
        settings = &default_settings;
    moat_detector_config detector = {
        .mode = settings->mode,
        .hold_ms = settings->hold_ms,
        .rate_factor = settings->rate_factor,
        .min_excess_pps = settings->min_excess_pps,
        .auth_failures_per_s = settings->auth_failures_per_s,
        .declared_pps = LEG_DECLARED_PPS,
    };
    moat_detector_init(&guard->detector, &detector, now_us);
    moat_stream_guard_config config = {
        .window_behind = settings->window_behind,
        .window_ahead = settings->window_ahead,
        .budget_factor = settings->legacy_budget_factor,
        .budget_min_pps = settings->budget_min_pps,
        .default_pps = 100,
    };
    moat_stream_guard_init(&guard->guard, &config);
    guard->next_tick_us = now_us + MOAT_DETECTOR_SLOT_US;
}

static uint32_t read32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

moat_guard_verdict moat_call_leg_guard_check(moat_call_leg_guard *guard, moat_worker *worker,
                                             const uint8_t *data, bool rtcp, uint64_t now_us,
                                             uint64_t *index)
{
    moat_detector_on_packet(&guard->detector, now_us);
    if (now_us >= guard->next_tick_us) {
        moat_detector_tick(&guard->detector, now_us);
        guard->next_tick_us = now_us + MOAT_DETECTOR_SLOT_US;
    }
    moat_guard_load load = {
        .enforcing = moat_detector_enforcing(&guard->detector) || moat_worker_enforcing(worker),
        .chance = moat_worker_admission_chance(worker),
    };
    if (rtcp)
        return moat_stream_guard_check_rtcp(&guard->guard, &load, now_us);
    uint16_t sequence = (uint16_t)(data[2] << 8 | data[3]);
    return moat_stream_guard_check_rtp(&guard->guard, read32(data + 8), sequence, &load, now_us,
                                       index);
}

void moat_call_leg_guard_result(moat_call_leg_guard *guard, const uint8_t *data, bool rtcp,
                                bool authenticated, uint64_t index, uint64_t now_us)
{
    if (!authenticated) {
        moat_detector_on_failure(&guard->detector, now_us);
        return;
    }
    if (!rtcp)
        moat_stream_guard_confirm_rtp(&guard->guard, read32(data + 8), index, now_us);
}
