/* Owns the SDES leg's prefilter stages (call_leg_guard.h) over the shared
 * detector, stream guard (gateway/prefilter/) and SRTP+ receiver and sender
 * (srtpplus/). */
#include "call/call_leg_guard.h"
#include "prefilter/prefilter_config.h"

#include "srtpplus.h"

#include <glib.h>

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

/* prn: the receiver with our remote key, the sender with our local one. */
static int srtpplus_new(moat_call_leg_guard *guard, const moat_srtp_keying *keys)
{
    enum srtpplus_profile profile = moat_prefilter_srtpplus_profile(keys->profile);
    struct srtpplus_receiver_config rx;
    srtpplus_receiver_config_init(&rx, SRTPPLUS_SCHEME_PRN, profile);
    if (srtpplus_receiver_new(&rx, keys->remote_key, keys->key_length, keys->remote_salt,
                              keys->salt_length, &guard->rx) != 0)
        return -1;
    struct srtpplus_sender_config tx;
    srtpplus_sender_config_init(&tx, SRTPPLUS_SCHEME_PRN, profile);
    return srtpplus_sender_new(&tx, keys->local_key, keys->key_length, keys->local_salt,
                               keys->salt_length, &guard->tx);
}

moat_call_leg_guard *moat_call_leg_guard_new(const moat_srtp_keying *keying, bool srtpplus)
{
    moat_call_leg_guard *guard = g_new0(moat_call_leg_guard, 1);
    if (srtpplus && srtpplus_new(guard, keying) != 0) {
        moat_call_leg_guard_free(guard);
        return NULL;
    }
    return guard;
}

void moat_call_leg_guard_resume(moat_call_leg_guard *guard, const moat_srtp_position resume[2])
{
    if (guard && guard->tx && resume[0].valid)
        srtpplus_sender_add_ssrc(guard->tx, resume[0].ssrc, resume[0].roc);
    if (guard && guard->rx && resume[1].valid)
        srtpplus_receiver_add_ssrc(guard->rx, resume[1].ssrc, resume[1].roc);
}

void moat_call_leg_guard_free(moat_call_leg_guard *guard)
{
    if (!guard)
        return;
    srtpplus_receiver_free(guard->rx);
    srtpplus_sender_free(guard->tx);
    g_free(guard);
}

void moat_call_leg_guard_init(moat_call_leg_guard *guard, const moat_prefilter_settings *settings,
                              uint64_t now_us)
{
    if (!settings)
        settings = &default_settings;
    moat_detector_config detector = moat_prefilter_detector_config(settings, LEG_DECLARED_PPS);
    moat_detector_init(&guard->detector, &detector, now_us);
    moat_stream_guard_config config = moat_prefilter_guard_config(settings);
    moat_stream_guard_init(&guard->guard, &config);
    guard->next_tick_us = now_us + MOAT_DETECTOR_SLOT_US;
}

static uint32_t read32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static moat_call_guard_verdict of_srtpplus(enum srtpplus_verdict verdict)
{
    switch (verdict) {
    case SRTPPLUS_DROP_INDEX:
        return MOAT_CALL_GUARD_INDEX;
    case SRTPPLUS_DROP_TAG:
        return MOAT_CALL_GUARD_TAG;
    case SRTPPLUS_DROP_REPLAY:
        return MOAT_CALL_GUARD_REPLAY;
    case SRTPPLUS_DROP_BUDGET:
        return MOAT_CALL_GUARD_BUDGET;
    case SRTPPLUS_DROP_MALFORMED:
        return MOAT_CALL_GUARD_MALFORMED;
    default:
        return MOAT_CALL_GUARD_PASS;
    }
}

static moat_call_guard_verdict of_guard(moat_guard_verdict verdict)
{
    switch (verdict) {
    case MOAT_GUARD_PASS:
        return MOAT_CALL_GUARD_PASS;
    case MOAT_GUARD_DROP_REPLAY:
        return MOAT_CALL_GUARD_REPLAY;
    case MOAT_GUARD_DROP_UNKNOWN_SSRC:
        return MOAT_CALL_GUARD_SSRC;
    case MOAT_GUARD_DROP_BUDGET:
        return MOAT_CALL_GUARD_BUDGET;
    default:
        return MOAT_CALL_GUARD_INDEX;
    }
}

static moat_call_guard_verdict check_srtpplus(moat_call_leg_guard *guard, const uint8_t *data,
                                              size_t *length, bool rtcp, bool enforcing,
                                              uint64_t now_us, moat_call_guard_state *state)
{
    struct srtpplus_check check = {.len = *length};
    enum srtpplus_verdict verdict =
        rtcp ? srtpplus_receiver_check_rtcp(guard->rx, data, *length, enforcing, now_us * 1000u,
                                            &check)
             : srtpplus_receiver_check_rtp(guard->rx, data, *length, enforcing, now_us * 1000u,
                                           &check);
    if (srtpplus_verdict_is_drop(verdict))
        return of_srtpplus(verdict);
    *length = check.len;
    state->index = check.index;
    state->ssrc = check.ssrc;
    return MOAT_CALL_GUARD_PASS;
}

moat_call_guard_verdict moat_call_leg_guard_check(moat_call_leg_guard *guard, moat_worker *worker,
                                                  const uint8_t *data, size_t *length, bool rtcp,
                                                  uint64_t now_us, moat_call_guard_state *state)
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
    *state = (moat_call_guard_state){0};
    if (guard->rx)
        return check_srtpplus(guard, data, length, rtcp, load.enforcing, now_us, state);
    if (rtcp)
        return of_guard(moat_stream_guard_check_rtcp(&guard->guard, &load, now_us));
    state->ssrc = read32(data + 8);
    uint16_t sequence = (uint16_t)(data[2] << 8 | data[3]);
    return of_guard(moat_stream_guard_check_rtp(&guard->guard, state->ssrc, sequence, &load, now_us,
                                                &state->index));
}

void moat_call_leg_guard_result(moat_call_leg_guard *guard, uint8_t *data, size_t *length,
                                bool rtcp, bool authenticated, const moat_call_guard_state *state,
                                uint64_t now_us)
{
    if (!authenticated) {
        moat_detector_on_failure(&guard->detector, now_us);
        return;
    }
    if (!guard->rx) {
        if (!rtcp)
            moat_stream_guard_confirm_rtp(&guard->guard, state->ssrc, state->index, now_us);
        return;
    }
    if (rtcp) {
        srtpplus_receiver_confirm_rtcp(guard->rx, state->ssrc, state->index);
        return;
    }
    if (srtpplus_receiver_confirm_rtp(guard->rx, data, length, state->index) ==
        SRTPPLUS_CONFIRM_UNKNOWN_SSRC) {
        /* Authenticated, so the SSRC is the party's: track it from now on. */
        srtpplus_receiver_add_ssrc(guard->rx, state->ssrc, (uint32_t)(state->index >> 16));
        srtpplus_receiver_confirm_rtp(guard->rx, data, length, state->index);
    }
}

void moat_call_leg_guard_maintain(moat_call_leg_guard *guard)
{
    if (guard && guard->rx && srtpplus_receiver_maintenance_pending(guard->rx))
        srtpplus_receiver_maintain(guard->rx);
}

int moat_call_leg_guard_prepare(moat_call_leg_guard *guard, uint8_t *data, size_t *length,
                                size_t capacity, bool rtcp)
{
    if (!guard->tx || rtcp)
        return 0;
    return srtpplus_sender_prepare_rtp(guard->tx, data, length, capacity) == 0 ? 0 : -1;
}

int moat_call_leg_guard_tag(moat_call_leg_guard *guard, uint8_t *data, size_t *length,
                            size_t capacity, bool rtcp)
{
    if (!guard->tx)
        return 0;
    int status = rtcp ? srtpplus_sender_append_tag_rtcp(guard->tx, data, length, capacity)
                      : srtpplus_sender_append_tag_rtp(guard->tx, data, length, capacity);
    return status == 0 ? 0 : -1;
}
