/* The session's flood defence: the SRTP+ sender and receiver when the peer
 * negotiated SRTP+, the structural stream guard when it did not, and the
 * transport's anomaly detector that decides when either enforces. */
#include "session/session_internal.h"
#include "prefilter/prefilter_config.h"

#include "srtpplus.h"

#include <jansson.h>

#include <string.h>

/* What the SDP lets a transport expect, so a fresh transport has a rate to
 * compare against before it learned one. */
uint32_t moat_session_declared_pps(const moat_session *session)
{
    uint32_t pps = 0;
    for (size_t i = 0; i < session->n_media; i++) {
        if (!session->media[i].peer_sends)
            continue;
        pps += session->media[i].kind == MOAT_MEDIA_KIND_VIDEO ? 400 : 60;
    }
    return pps + 20; /* RTCP */
}

void moat_session_prefilter_init(moat_session *session, const moat_prefilter_settings *settings)
{
    session->prefilter = settings;
    moat_detector_config detector =
        moat_prefilter_detector_config(settings, moat_session_declared_pps(session));
    moat_detector_init(&session->detector, &detector, 0);
    moat_stream_guard_config guard = moat_prefilter_guard_config(settings);
    moat_stream_guard_init(&session->guard, &guard);
    for (size_t i = 0; i < session->n_media; i++) {
        uint32_t expected = session->media[i].kind == MOAT_MEDIA_KIND_VIDEO ? 400 : 60;
        moat_stream_guard_declare(&session->guard, session->media[i].remote_ssrc, expected);
        moat_stream_guard_declare(&session->guard, session->media[i].remote_rtx_ssrc, expected / 4);
    }
}

/* SRTPPLUS.md section 5: the verification budget of unverifiable RTP is
 * budget_percent of the transport's learned packet rate (the declared rate
 * until it has learned one), at least budget_min_pps. */
static uint32_t srtpplus_rate(const moat_session *session)
{
    const moat_detector *detector = &session->detector;
    double learned = detector->learned_slots > 0 && detector->baseline_pps > 0
                         ? detector->baseline_pps
                         : detector->config.declared_pps;
    double rate = learned * session->prefilter->budget_percent / 100.0;
    uint32_t floor = session->prefilter->budget_min_pps;
    return rate > floor ? (uint32_t)rate : floor;
}

/* Resized when the learned rate moved by more than a fifth: a resize refills
 * the bucket, so it must not happen at every tick. */
static void update_srtpplus_budget(moat_session *session)
{
    uint32_t rate = srtpplus_rate(session);
    uint32_t current = srtpplus_receiver_class_budget(session->srtpplus_rx, SRTPPLUS_BUDGET_RTP);
    if (rate * 5 < current * 6 && rate * 6 > current * 5)
        return;
    srtpplus_receiver_set_class_budget(session->srtpplus_rx, SRTPPLUS_BUDGET_RTP, rate, rate);
}

int moat_session_prefilter_keys(moat_session *session, const moat_srtp_keying *keys)
{
    if (!session->negotiation.srtpplus)
        return 0;
    const moat_sdp_srtpplus *scheme = &session->negotiation.srtpplus_scheme;
    enum srtpplus_scheme kind =
        strcmp(scheme->scheme, "chain") == 0 ? SRTPPLUS_SCHEME_CHAIN : SRTPPLUS_SCHEME_PRN;
    enum srtpplus_profile profile = moat_prefilter_srtpplus_profile(keys->profile);

    struct srtpplus_receiver_config rx;
    srtpplus_receiver_config_init(&rx, kind, profile);
    rx.chain.depth = scheme->depth;
    rx.chain.copies = scheme->copies;
    rx.window_behind = session->prefilter->window_behind;
    rx.window_ahead = session->prefilter->window_ahead;
    rx.budget_rate = srtpplus_rate(session);
    rx.budget_burst = rx.budget_rate;
    if (srtpplus_receiver_new(&rx, keys->remote_key, keys->key_length, keys->remote_salt,
                              keys->salt_length, &session->srtpplus_rx) != 0)
        return -1;
    struct srtpplus_sender_config tx;
    srtpplus_sender_config_init(&tx, kind, profile);
    tx.chain.depth = scheme->depth;
    tx.chain.copies = scheme->copies;
    if (srtpplus_sender_new(&tx, keys->local_key, keys->key_length, keys->local_salt,
                            keys->salt_length, &session->srtpplus_tx) != 0)
        return -1;
    for (size_t i = 0; i < session->n_media; i++) {
        if (session->media[i].remote_ssrc)
            srtpplus_receiver_add_ssrc(session->srtpplus_rx, session->media[i].remote_ssrc, 0);
    }
    moat_session_log(session, MOAT_LOG_INFO, "prefilter",
                     "session %s: SRTP+ %s (depth %u, copies %u)", session->label, scheme->scheme,
                     scheme->depth, scheme->copies);
    return 0;
}

void moat_session_prefilter_clear(moat_session *session)
{
    srtpplus_receiver_free(session->srtpplus_rx);
    srtpplus_sender_free(session->srtpplus_tx);
    session->srtpplus_rx = NULL;
    session->srtpplus_tx = NULL;
}

static void report_event(moat_session *session, moat_detector_event event, const char *scope)
{
    if (event == MOAT_DETECTOR_EVENT_NONE)
        return;
    moat_counters *counters = moat_worker_counters_mut(session->worker);
    uint64_t now = moat_worker_now_us(session->worker);
    if (event == MOAT_DETECTOR_EVENT_ON) {
        moat_counter_add(&counters->detector_switches_on, 1);
        session->first_anomaly_us = session->first_anomaly_us ? session->first_anomaly_us : now;
        /* A rate anomaly comes with no bad packet: it was detected at once. */
        if (!session->first_bad_us)
            session->first_bad_us = now;
        moat_session_log_repeating(
            session, MOAT_LOG_WARN, "prefilter",
            "session %s: detector on (%s: %s), %.1f ms after the first bad packet, "
            "ingress %.0f pkt/s",
            session->label, scope, moat_anomaly_name(session->detector.last_anomaly),
            (now - session->first_bad_us) / 1000.0, moat_detector_rate(&session->detector));
        session->enforcing_since_us = now;
        session->last_detection_delay_us = now - session->first_bad_us;
    } else {
        moat_counter_add(&counters->detector_switches_off, 1);
        /* The baseline is the peer's own rate when that rate alone (no
         * failure for the hold time) kept the detector on. */
        moat_session_log_repeating(session, MOAT_LOG_INFO, "prefilter",
                                   "session %s: detector off after %.1f s, baseline %.0f pkt/s",
                                   session->label, (now - session->enforcing_since_us) / 1e6,
                                   session->detector.baseline_pps);
        session->first_bad_us = 0;
    }
}

void moat_session_prefilter_packet(moat_session *session)
{
    uint64_t arrival = moat_worker_arrival_us(session->worker);
    report_event(session, moat_detector_on_packet(&session->detector, arrival), "transport");
}

void moat_session_prefilter_bad(moat_session *session)
{
    uint64_t now = moat_worker_now_us(session->worker);
    if (!session->first_bad_us)
        session->first_bad_us = now;
    report_event(session, moat_detector_on_failure(&session->detector, now), "transport");
}

void moat_session_prefilter_tick(moat_session *session, uint64_t now_us)
{
    moat_detector_event event = moat_detector_tick(&session->detector, now_us);
    report_event(session, event, "transport");
    if (session->srtpplus_rx && srtpplus_receiver_maintenance_pending(session->srtpplus_rx))
        srtpplus_receiver_maintain(session->srtpplus_rx);
    if (session->srtpplus_rx && !moat_detector_enforcing(&session->detector))
        update_srtpplus_budget(session);
    if (!moat_detector_enforcing(&session->detector) && session->first_bad_us &&
        now_us - session->first_bad_us > 1000000u && session->detector.window_failures == 0)
        session->first_bad_us = 0;
}

bool moat_session_own_enforcing(const moat_session *session)
{
    return moat_detector_enforcing(&session->detector);
}

bool moat_session_enforcing(const moat_session *session)
{
    return moat_detector_enforcing(&session->detector) || moat_worker_enforcing(session->worker);
}

moat_guard_load moat_session_guard_load(const moat_session *session, bool enforcing)
{
    moat_guard_load load = {.enforcing = enforcing,
                            .chance = moat_worker_admission_chance(session->worker)};
    return load;
}

/* The bytes of the retransmission arenas of what the session sends. */
static json_int_t retransmit_cache_bytes(const moat_session *session)
{
    size_t bytes = 0;
    for (size_t i = 0; i < session->n_outgoing; i++)
        if (session->outgoing[i].cache)
            bytes += moat_retransmit_cache_bytes(session->outgoing[i].cache);
    return (json_int_t)bytes;
}

json_t *moat_session_describe(const moat_session *session)
{
    json_t *drops = json_object();
    for (int reason = 0; reason < MOAT_DROP_REASON_COUNT; reason++)
        json_object_set_new(drops, moat_drop_reason_name(reason),
                            json_integer((json_int_t)session->counters.dropped[reason]));
    const moat_detector *detector = &session->detector;
    json_t *srtpplus = session->srtpplus_rx
                           ? json_string(session->negotiation.srtpplus_scheme.scheme)
                           : json_null();
    json_t *description = json_pack(
        "{s:s, s:b, s:o, s:o, s:I, s:I, s:{s:b, s:s, s:f, s:f, s:I, s:I, s:I, s:f, s:f}}", "id",
        session->id, "enforcing", moat_session_enforcing(session), "srtpplus", srtpplus, "drops",
        drops, "rtp_received", (json_int_t)session->counters.rtp_received, "rtp_sent",
        (json_int_t)session->counters.rtp_sent, "detector", "enforcing",
        moat_detector_enforcing(detector), "last_anomaly",
        moat_anomaly_name(detector->last_anomaly), "ingress_pps", moat_detector_rate(detector),
        "baseline_pps", detector->baseline_pps, "switches_on", (json_int_t)detector->switches_on,
        "switches_off", (json_int_t)detector->switches_off, "rates_adopted",
        (json_int_t)detector->rates_adopted, "enforcing_since_s", session->enforcing_since_us / 1e6,
        "detection_delay_ms", session->last_detection_delay_us / 1000.0);
    if (description) {
        json_object_set_new(description, "datachannel", moat_session_data_describe(session));
        json_object_set_new(description, "bwe", moat_session_bwe_describe(session));
        /* From the peer's reception reports (LSR/DLSR); null before one. */
        json_object_set_new(description, "rtt_ms",
                            session->rtt_us ? json_real((double)session->rtt_us / 1000.0)
                                            : json_null());
        json_object_set_new(description, "retransmit_cache_bytes",
                            json_integer(retransmit_cache_bytes(session)));
    }
    return description;
}
