/* The session's media: SRTP in and out, RTP stream statistics, RTCP
 * (receiver/sender reports; NACKs go to session_retransmit.c, the rest to
 * the plugin) and the calls plugins send through. */
#include "session/session_internal.h"

#include "rtp/rtcp_feedback.h"
#include "rtp/rtcp_packet.h"
#include "rtp/rtp_packet.h"
#include "srtpplus.h"

#include <glib.h>
#include <openssl/rand.h>
#include <string.h>
#include <time.h>

#define REPORT_INTERVAL_US 1000000ull
/* Round-trip times over this (10 s, in 1/65536 s) are not believed. */
#define RTT_MAX_NTP (10u * 65536u)

static uint32_t clock_rate_of(const moat_session *session, uint8_t payload_type)
{
    for (size_t i = 0; i < session->n_media; i++) {
        const moat_media_info *media = &session->media[i];
        for (size_t j = 0; j < media->n_codecs && j < MOAT_PLUGIN_MAX_CODECS; j++) {
            if (media->codecs[j].payload_type == payload_type)
                return media->codecs[j].clock_rate;
        }
    }
    return 90000;
}

static moat_incoming_stream *incoming_stream(moat_session *session, uint32_t ssrc,
                                             uint8_t payload_type)
{
    for (size_t i = 0; i < session->n_incoming; i++) {
        if (session->incoming[i].ssrc == ssrc)
            return &session->incoming[i];
    }
    if (session->n_incoming == MOAT_SESSION_MAX_STREAMS)
        return NULL;
    if (session->n_incoming == session->incoming_capacity) {
        /* A new SSRC, not a packet: at most four times in a session's life. */
        size_t capacity = session->incoming_capacity ? session->incoming_capacity * 2 : 2;
        if (capacity > MOAT_SESSION_MAX_STREAMS)
            capacity = MOAT_SESSION_MAX_STREAMS;
        session->incoming = g_renew(moat_incoming_stream, session->incoming, capacity);
        session->incoming_capacity = capacity;
    }
    /* Only reached after srtp_unprotect succeeded: an authenticated SSRC. */
    moat_incoming_stream *stream = &session->incoming[session->n_incoming++];
    memset(stream, 0, sizeof *stream);
    stream->ssrc = ssrc;
    stream->media_index = -1;
    stream->clock_rate = clock_rate_of(session, payload_type);
    /* SRTP already authenticated the source: no probation needed. */
    moat_rtp_receive_stats_init(&stream->stats, ssrc, 0);
    return stream;
}

moat_outgoing_stream *moat_session_outgoing_stream(moat_session *session, uint32_t ssrc)
{
    for (size_t i = 0; i < session->n_outgoing; i++) {
        if (session->outgoing[i].ssrc == ssrc)
            return &session->outgoing[i];
    }
    return NULL;
}

/* Protects a plaintext packet into the worker's send batch; `copies` > 1
 * queues the same protected datagram again (the receiver's SRTP drops a
 * copy as a replay once one got through, so a second copy counts only when
 * the first was lost). */
int moat_session_send_protected_copies(moat_session *session, const uint8_t *packet, size_t length,
                                       bool rtcp, unsigned copies)
{
    if (!session->srtp || !session->has_selected || session->ending)
        return -1;
    if (session->consent_withheld) {
        moat_session_drop(session, MOAT_DROP_NO_CONSENT);
        return -1;
    }
    size_t capacity;
    uint8_t *buffer = moat_worker_send_buffer(session->worker, &capacity);
    if (length + 64 > capacity)
        return -1;
    memcpy(buffer, packet, length);
    if (!rtcp) { /* room left for SRTP's tag and SRTP+; the estimator sees the final size */
        moat_session_playout_stamp(session, buffer, &length, capacity - 56);
        moat_session_bwe_stamp(session, buffer, &length, capacity - 56);
    }
    /* SRTP+: the chain block goes into the plaintext, the tag after SRTP. */
    if (session->srtpplus_tx && !rtcp &&
        srtpplus_sender_prepare_rtp(session->srtpplus_tx, buffer, &length, capacity) != 0)
        return -1;
    int status = rtcp ? moat_srtp_protect_rtcp(session->srtp, buffer, &length, capacity)
                      : moat_srtp_protect_rtp(session->srtp, buffer, &length, capacity);
    if (status != MOAT_SRTP_OK)
        return -1;
    if (session->srtpplus_tx &&
        (rtcp ? srtpplus_sender_append_tag_rtcp(session->srtpplus_tx, buffer, &length, capacity)
              : srtpplus_sender_append_tag_rtp(session->srtpplus_tx, buffer, &length, capacity)) !=
            0)
        return -1;
    /* The worker counts it once the kernel took it (moat_worker_flush). */
    moat_send_kind kind = rtcp ? MOAT_SEND_RTCP : MOAT_SEND_RTP;
    moat_worker_send_commit(session->worker, &session->selected, length, kind);
    moat_counter_add(rtcp ? &session->counters.rtcp_sent : &session->counters.rtp_sent, 1);
    for (unsigned i = 1; i < copies; i++) {
        /* A slot other than buffer's (a flush starts again at slot 0, and
         * buffer was the last one then). */
        uint8_t *copy = moat_worker_send_buffer(session->worker, &capacity);
        memcpy(copy, buffer, length);
        moat_worker_send_commit(session->worker, &session->selected, length, kind);
    }
    return 0;
}

int moat_session_send_protected(moat_session *session, const uint8_t *packet, size_t length,
                                bool rtcp)
{
    return moat_session_send_protected_copies(session, packet, length, rtcp, 1);
}

static uint64_t ntp_now(void);

/* The round-trip time (RFC 3550 §6.4.1: arrival - LSR - DLSR) from report
 * blocks about a stream we send; it sizes the retransmission caches
 * (session_plugin_calls.c). Rises at once, falls slowly (1/8 a report). */
static void learn_rtt(moat_session *session, const moat_rtcp_report_block *blocks, size_t n)
{
    uint32_t now = (uint32_t)(ntp_now() >> 16);
    for (size_t i = 0; i < n; i++) {
        const moat_rtcp_report_block *b = &blocks[i];
        if (b->last_sr == 0 || !moat_session_outgoing_stream(session, b->ssrc))
            continue;
        uint32_t rtt = now - b->last_sr - b->delay_since_last_sr; /* 1/65536 s */
        if (rtt > RTT_MAX_NTP)
            continue; /* a clock step, or a report we cannot have caused */
        uint64_t rtt_us = ((uint64_t)rtt * 1000000u >> 16) + 1; /* 0 means unknown */
        session->rtt_us = rtt_us > session->rtt_us || session->rtt_us == 0
                              ? rtt_us
                              : (7 * session->rtt_us + rtt_us) / 8;
    }
}

static void handle_rtcp(moat_session *session, uint8_t *packet, size_t length)
{
    moat_rtcp_iter it;
    moat_rtcp_header header;
    bool for_plugin = false;
    unsigned answered = 0;
    moat_rtcp_iter_init(&it, packet, length);
    while (moat_rtcp_iter_next(&it, &header) > 0) {
        if (header.type == MOAT_RTCP_SR) {
            moat_rtcp_sr report;
            if (moat_rtcp_parse_sr(&header, &report) != 0)
                continue;
            learn_rtt(session, report.reports, report.n_reports);
            for (size_t i = 0; i < session->n_incoming; i++) {
                if (session->incoming[i].ssrc == report.ssrc)
                    moat_rtp_receive_stats_on_sr(&session->incoming[i].stats, report.ntp_timestamp,
                                                 moat_worker_now_us(session->worker));
            }
        } else if (header.type == MOAT_RTCP_RTPFB || header.type == MOAT_RTCP_PSFB) {
            moat_rtcp_fb feedback;
            if (moat_rtcp_parse_fb(&header, &feedback) != 0)
                continue;
            if (moat_rtcp_fb_is_nack(&feedback))
                moat_session_answer_nack(session, &feedback, &answered);
            else if (feedback.type == MOAT_RTCP_RTPFB && feedback.fmt == MOAT_RTCP_FMT_TRANSPORT_CC)
                moat_session_bwe_feedback(session, &feedback);
            else
                for_plugin = true; /* PLI, FIR, REMB: the plugin decides */
        } else if (header.type == MOAT_RTCP_RR && header.count > 0) {
            moat_rtcp_rr report;
            if (moat_rtcp_parse_rr(&header, &report) == 0)
                learn_rtt(session, report.reports, report.n_reports);
            for_plugin = true; /* loss reports: a plugin may estimate bandwidth */
        }
    }
    if (for_plugin && session->plugin->on_rtcp)
        session->plugin->on_rtcp(session->plugin_state, packet, length);
}

static moat_drop_reason reason_of(enum srtpplus_verdict verdict)
{
    switch (verdict) {
    case SRTPPLUS_DROP_INDEX:
        return MOAT_DROP_INDEX;
    case SRTPPLUS_DROP_TAG:
        return MOAT_DROP_TAG;
    case SRTPPLUS_DROP_REPLAY:
        return MOAT_DROP_REPLAY;
    case SRTPPLUS_DROP_BUDGET:
        return MOAT_DROP_BUDGET;
    default:
        return MOAT_DROP_MALFORMED;
    }
}

static moat_drop_reason guard_reason(moat_guard_verdict verdict)
{
    switch (verdict) {
    case MOAT_GUARD_DROP_INDEX:
        return MOAT_DROP_INDEX;
    case MOAT_GUARD_DROP_UNKNOWN_SSRC:
        return MOAT_DROP_UNKNOWN_SSRC;
    case MOAT_GUARD_DROP_REPLAY:
        return MOAT_DROP_REPLAY;
    default:
        return MOAT_DROP_BUDGET;
    }
}

static void unprotect_failed(moat_session *session, int status)
{
    moat_session_drop(session, status == MOAT_SRTP_ERR_REPLAY ? MOAT_DROP_REPLAY : MOAT_DROP_AUTH);
}

static void receive_rtcp(moat_session *session, const moat_path *path, uint8_t *data, size_t length,
                         bool enforcing, uint64_t now)
{
    moat_guard_load load = moat_session_guard_load(session, enforcing);
    struct srtpplus_check check = {.len = length};
    if (session->srtpplus_rx) {
        enum srtpplus_verdict verdict = srtpplus_receiver_check_rtcp(
            session->srtpplus_rx, data, length, enforcing, now * 1000u, &check);
        if (srtpplus_verdict_is_drop(verdict)) {
            moat_session_drop(session, reason_of(verdict));
            return;
        }
        length = check.len;
    } else if (moat_stream_guard_check_rtcp(&session->guard, &load, now) != MOAT_GUARD_PASS) {
        moat_session_drop(session, MOAT_DROP_BUDGET);
        return;
    }
    int status = moat_srtp_unprotect_rtcp(session->srtp, data, &length);
    if (status != MOAT_SRTP_OK) {
        unprotect_failed(session, status);
        return;
    }
    if (session->srtpplus_rx)
        srtpplus_receiver_confirm_rtcp(session->srtpplus_rx, check.ssrc, check.index);
    if (path)
        moat_session_confirm_path(session, path);
    if (session->cascade_leg)
        moat_session_refresh_consent(session);
    moat_counter_add(&moat_worker_counters_mut(session->worker)->rtcp_received, 1);
    moat_counter_add(&session->counters.rtcp_received, 1);
    handle_rtcp(session, data, length);
}

/* The receive path of DESIGN.md: structure, SRTP+ tag or stream guard, budget,
 * then srtp_unprotect; cheapest first, each drop with its reason. */
bool moat_session_handle_srtp(moat_session *session, const moat_path *path, uint8_t *data,
                              size_t length, size_t capacity)
{
    moat_session_prefilter_packet(session);
    if (!session->srtp || session->ending) {
        moat_session_drop(session, MOAT_DROP_NOT_READY);
        return false;
    }
    uint64_t now = moat_worker_now_us(session->worker);
    bool enforcing = moat_session_enforcing(session);
    if (moat_rtp_is_rtcp(data, length)) {
        if (length < 8) {
            moat_session_drop(session, MOAT_DROP_MALFORMED);
            return false;
        }
        receive_rtcp(session, path, data, length, enforcing, now);
        return false;
    }
    /* Before authentication only the fixed header is read: the padding count
     * is encrypted, and libsrtp checks the rest itself. */
    if (length < 12) {
        moat_session_drop(session, MOAT_DROP_MALFORMED);
        return false;
    }
    uint32_t ssrc =
        (uint32_t)data[8] << 24 | (uint32_t)data[9] << 16 | (uint32_t)data[10] << 8 | data[11];
    uint16_t sequence = (uint16_t)(data[2] << 8 | data[3]);
    struct srtpplus_check check = {.len = length};
    uint64_t index = 0;
    if (session->srtpplus_rx) {
        enum srtpplus_verdict verdict = srtpplus_receiver_check_rtp(
            session->srtpplus_rx, data, length, enforcing, now * 1000u, &check);
        if (srtpplus_verdict_is_drop(verdict)) {
            moat_session_drop(session, reason_of(verdict));
            return false;
        }
        length = check.len;
    } else {
        moat_guard_load load = moat_session_guard_load(session, enforcing);
        moat_guard_verdict verdict =
            moat_stream_guard_check_rtp(&session->guard, ssrc, sequence, &load, now, &index);
        if (verdict != MOAT_GUARD_PASS) {
            moat_session_drop(session, guard_reason(verdict));
            return false;
        }
    }
    int status = moat_srtp_unprotect_rtp(session->srtp, data, &length);
    if (status != MOAT_SRTP_OK) {
        unprotect_failed(session, status);
        return false;
    }
    if (session->srtpplus_rx) {
        if (srtpplus_receiver_confirm_rtp(session->srtpplus_rx, data, &length, check.index) ==
            SRTPPLUS_CONFIRM_UNKNOWN_SSRC) {
            /* Authenticated, so the SSRC is the peer's: track it from now on. */
            srtpplus_receiver_add_ssrc(session->srtpplus_rx, ssrc, (uint32_t)(check.index >> 16));
            srtpplus_receiver_confirm_rtp(session->srtpplus_rx, data, &length, check.index);
        }
    } else {
        moat_stream_guard_confirm_rtp(&session->guard, ssrc, index, now);
    }
    if (path)
        moat_session_confirm_path(session, path);
    if (session->cascade_leg)
        moat_session_refresh_consent(session);
    return moat_session_deliver_rtp(session, data, length, capacity, now);
}

/* The transport-wide sequence number of a packet, for the feedback. */
static void note_transport_sequence(moat_session *session, const uint8_t *data,
                                    const moat_rtp_header *header, uint64_t now)
{
    const uint8_t *value;
    size_t length;
    if (header->extension &&
        moat_rtp_find_extension(data, header, session->twcc_id, &value, &length) == 0 &&
        length >= 2)
        moat_twcc_recorder_on_packet(session->twcc, (uint16_t)(value[0] << 8 | value[1]), now);
}

/* What is due of the transport-wide feedback (every MOAT_TWCC_INTERVAL_US). */
static void send_transport_cc(moat_session *session, uint64_t now_us)
{
    uint8_t buffer[1200];
    moat_rtcp_writer writer;
    moat_rtcp_writer_init(&writer, buffer, sizeof buffer);
    uint32_t media_ssrc = session->n_incoming ? session->incoming[0].ssrc : 0;
    int built =
        moat_twcc_recorder_build(session->twcc, &writer, session->rtcp_ssrc, media_ssrc, now_us);
    if (built > 0 && moat_session_send_protected(session, buffer, writer.length, true) == 0)
        moat_counter_add(&moat_worker_counters_mut(session->worker)->transport_cc_feedback_sent,
                         (uint64_t)built);
}

/* [limits] session_media_kbps: one peer's authenticated RTP, in bytes, before
 * any plugin fans it out. A cascade leg carries many sessions' media and is
 * not capped. */
static bool within_media_rate(moat_session *session, size_t length, uint64_t now)
{
    if (session->media_rate.rate <= 0 || session->cascade_leg ||
        moat_token_bucket_take_n(&session->media_rate, (double)length, now))
        return true;
    moat_session_drop(session, MOAT_DROP_RATE_LIMIT);
    moat_session_log_repeating(session, MOAT_LOG_WARN, "session",
                               "session %s: RTP over the session's %.0f kbit/s "
                               "([limits] session_media_kbps), dropped",
                               session->label, session->media_rate.rate * 8 / 1000);
    return false;
}

bool moat_session_deliver_rtp(moat_session *session, uint8_t *data, size_t length, size_t capacity,
                              uint64_t now)
{
    moat_rtp_header header;
    if (moat_rtp_parse(data, length, &header) != 0) {
        /* Authentic but not RTP we can relay (e.g. bad padding from the peer). */
        moat_session_drop(session, MOAT_DROP_MALFORMED);
        return false;
    }
    if (!within_media_rate(session, length, now))
        return false;
    moat_counter_add(&moat_worker_counters_mut(session->worker)->rtp_received, 1);
    moat_counter_add(&session->counters.rtp_received, 1);
    moat_incoming_stream *stream = incoming_stream(session, header.ssrc, header.payload_type);
    if (stream) {
        uint32_t arrival = (uint32_t)(now * stream->clock_rate / 1000000u);
        moat_rtp_receive_stats_update(&stream->stats, header.sequence, header.timestamp, arrival);
        stream->packets++;
    }
    if (session->twcc)
        note_transport_sequence(session, data, &header, now);
    if (session->tap.ops)
        moat_session_tap_rtp(session, data, length, header.ssrc, now);
    if (session->plugin->on_media) {
        moat_rtp_packet packet;
        moat_rtp_demux_parsed(&session->demux, data, length, capacity, &header, now, &packet);
        /* Mapped to an m-line that never accepted its payload type: no plugin
         * can forward it (the room looked it up per subscriber, under its lock). */
        if (packet.media_index >= 0 &&
            !moat_rtp_demux_accepts(&session->demux, packet.media_index, packet.payload_type)) {
            moat_session_drop(session, MOAT_DROP_PAYLOAD_TYPE);
            return false;
        }
        if (packet.repaired) {
            moat_counter_add(&moat_worker_counters_mut(session->worker)->rtx_received, 1);
            moat_counter_add(&session->counters.rtx_received, 1);
        }
        moat_plugin_session *outer = moat_session_rtp_source_enter(session->handle);
        session->plugin->on_media(session->plugin_state, &packet);
        moat_session_rtp_source_leave(outer);
    } else if (session->plugin->on_rtp) {
        moat_plugin_session *outer = moat_session_rtp_source_enter(session->handle);
        session->plugin->on_rtp(session->plugin_state, data, length, capacity);
        moat_session_rtp_source_leave(outer);
    }
    return true;
}

static uint64_t ntp_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t seconds = (uint64_t)now.tv_sec + 2208988800ull;
    uint64_t fraction = ((uint64_t)now.tv_nsec << 32) / 1000000000ull;
    return (seconds << 32) | fraction;
}

static void send_reports(moat_session *session, uint64_t now_us)
{
    uint8_t buffer[1200];
    moat_rtcp_writer writer;
    moat_rtcp_writer_init(&writer, buffer, sizeof buffer);
    moat_rtcp_report_block blocks[MOAT_SESSION_MAX_STREAMS];
    size_t n_blocks = 0;
    for (size_t i = 0; i < session->n_incoming; i++) {
        if (moat_rtp_receive_stats_fill_report(&session->incoming[i].stats, now_us,
                                               &blocks[n_blocks]))
            n_blocks++;
    }
    /* A sender report for each stream we send, the first one carrying the
     * reception report blocks; otherwise a plain receiver report. */
    bool wrote_reports = false;
    uint64_t ntp = ntp_now();
    for (size_t i = 0; i < session->n_outgoing; i++) {
        moat_outgoing_stream *stream = &session->outgoing[i];
        if (!stream->has_sent)
            continue;
        moat_rtcp_sr report;
        memset(&report, 0, sizeof report);
        report.ssrc = stream->ssrc;
        report.ntp_timestamp = ntp;
        /* Extrapolate the relayed timestamps to now. */
        report.rtp_timestamp =
            stream->last_rtp_timestamp +
            (uint32_t)((now_us - stream->last_sent_us) * stream->clock_rate / 1000000u);
        report.packet_count = stream->packets_sent;
        report.octet_count = stream->octets_sent;
        if (!wrote_reports) {
            report.n_reports = n_blocks;
            memcpy(report.reports, blocks, n_blocks * sizeof blocks[0]);
            wrote_reports = true;
        }
        if (moat_rtcp_build_sr(&writer, &report) != 0)
            return;
    }
    if (!wrote_reports && moat_rtcp_build_rr(&writer, session->rtcp_ssrc, blocks, n_blocks) != 0)
        return;
    if (moat_rtcp_build_sdes_cname(&writer, session->rtcp_ssrc, "moat", 4) != 0)
        return;
    moat_session_send_protected(session, buffer, writer.length, true);
}

void moat_session_media_tick(moat_session *session, uint64_t now_us)
{
    if (session->plugin_timer_us != 0 && now_us >= session->plugin_timer_us && !session->ending) {
        session->plugin_timer_us = 0;
        if (session->plugin && session->plugin->on_timer)
            session->plugin->on_timer(session->plugin_state, now_us);
    }
    moat_session_rtx_share_sweep(session->worker, now_us);
    if (!session->srtp || !session->has_selected)
        return;
    moat_session_send_pending_keyframes(session, now_us);
    if (session->twcc)
        send_transport_cc(session, now_us);
    moat_session_bwe_tick(session, now_us);
    if (now_us >= session->next_report_us) {
        session->next_report_us = now_us + REPORT_INTERVAL_US;
        send_reports(session, now_us);
    }
}
