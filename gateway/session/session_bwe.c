/* transport-cc toward the peer: the transport-wide sequence number stamped
 * on every RTP packet the session sends, the peer's feedback into the
 * sender-side estimator (rtp/send_side_bwe.h), probes (padding-only RTX
 * packets of our own up to a target rate) and the plugin calls that read
 * the estimate and start a probe. The session's worker only. */
#include "session/session_internal.h"

#include "engine/worker.h"
#include "rtp/rtp_bytes.h"
#include "rtp/rtp_extension_put.h"

#include <glib.h>
#include <jansson.h>
#include <string.h>

#define INITIAL_BPS      1500000u
#define PADDING_BYTES    255u /* RFC 3550: the count is one octet */
#define PADDING_PER_TICK 64u
#define MAX_PROBE_US     2000000u
#define MAX_PROBE_BPS    50000000u

/* The transport-cc extension id of an m-line the peer receives on, 0 none. */
static uint8_t send_extension(const moat_session *session)
{
    for (size_t i = 0; i < session->n_media; i++) {
        const moat_media_info *m = &session->media[i];
        if (m->peer_receives && m->extensions.transport_wide_cc)
            return m->extensions.transport_wide_cc;
    }
    return 0;
}

void moat_session_bwe_init(moat_session *session)
{
    moat_session_bwe_free(session);
    uint8_t id = send_extension(session);
    if (id == 0)
        return;
    session->twcc_id = id; /* BUNDLE: one id for the transport */
    session->bwe = g_new(moat_ssbwe, 1);
    moat_ssbwe_init(session->bwe, INITIAL_BPS);
    session->twcc_sent = g_new0(moat_twcc_sent, MOAT_TWCC_SENT_HISTORY);
}

void moat_session_bwe_free(moat_session *session)
{
    g_free(session->bwe);
    session->bwe = NULL;
    g_free(session->twcc_sent);
    session->twcc_sent = NULL;
    memset(&session->probe, 0, sizeof session->probe);
}

/* Writes `seq` into the packet's one-byte-header extension `id`
 * (rtp_extension_put.h). */
static bool put_sequence(uint8_t *d, size_t *length, size_t capacity, uint8_t id, uint16_t seq)
{
    const uint8_t value[2] = {(uint8_t)(seq >> 8), (uint8_t)seq};
    return moat_rtp_put_extension(d, length, capacity, id, value, sizeof value);
}

void moat_session_bwe_stamp(moat_session *session, uint8_t *buffer, size_t *length, size_t capacity)
{
    if (!session->bwe)
        return;
    moat_ssbwe *e = session->bwe;
    uint16_t seq = e->next_seq;
    if (!put_sequence(buffer, length, capacity, session->twcc_id, seq))
        return;
    uint64_t now = moat_worker_now_us(session->worker);
    moat_ssbwe_on_send(e, *length, now, false);
    moat_session_note_sent(session, buffer, *length, seq);
    if (session->probe.active)
        session->probe.bytes_sent += *length;
}

/* What a feedback or a probe's end changed in the estimator's statistics, added to the
 * worker's counters (/metrics). */
static void count_estimator_changes(moat_session *session, const moat_ssbwe_stats *before)
{
    const moat_ssbwe_stats *after = &session->bwe->stats;
    moat_counters *c = moat_worker_counters_mut(session->worker);
    moat_counter_add(&c->bwe_feedback_received, after->feedbacks - before->feedbacks);
    moat_counter_add(&c->bwe_packets_reported_lost, after->packets_lost - before->packets_lost);
    moat_counter_add(&c->bwe_overuse_events, after->overuse_events - before->overuse_events);
    moat_counter_add(&c->bwe_probes_confirmed, after->probes_confirmed - before->probes_confirmed);
    moat_counter_add(&c->bwe_probes_failed, after->probes_failed - before->probes_failed);
}

void moat_session_bwe_feedback(moat_session *session, const moat_rtcp_fb *feedback)
{
    if (!session->bwe)
        return;
    moat_twcc_header header;
    int64_t arrival[MOAT_TWCC_MAX_STATUS];
    int n = moat_twcc_parse(feedback, &header, arrival, MOAT_TWCC_MAX_STATUS);
    if (n <= 0)
        return;
    moat_ssbwe_stats before = session->bwe->stats;
    moat_ssbwe_on_feedback(session->bwe, header.base_seq, arrival, (size_t)n,
                           moat_worker_now_us(session->worker));
    count_estimator_changes(session, &before);
    moat_session_repair_lost(session);
}

/* The RTX stream and payload type padding goes on: a video m-line's. */
static moat_outgoing_stream *padding_stream(moat_session *session, uint8_t *pt)
{
    for (size_t i = 0; i < session->n_outgoing; i++) {
        moat_outgoing_stream *stream = &session->outgoing[i];
        if (!stream->rtx_ssrc || stream->media_index < 0 ||
            (size_t)stream->media_index >= session->n_media)
            continue;
        const moat_media_info *m = &session->media[stream->media_index];
        for (size_t c = 0; c < m->n_codecs; c++) {
            if (m->codecs[c].rtx_payload_type) {
                *pt = m->codecs[c].rtx_payload_type;
                return stream;
            }
        }
    }
    return NULL;
}

/* One padding-only RTX packet (RFC 3550 5.1: P set, the last octet counts
 * the padding). */
static int send_padding(moat_session *session, moat_outgoing_stream *stream, uint8_t pt)
{
    uint8_t packet[12 + PADDING_BYTES];
    memset(packet, 0, sizeof packet);
    packet[0] = 0x80 | 0x20;
    packet[1] = pt & 0x7f;
    moat_wr16(packet + 2, stream->rtx_sequence++);
    moat_wr32(packet + 4, stream->last_rtp_timestamp);
    moat_wr32(packet + 8, stream->rtx_ssrc);
    packet[sizeof packet - 1] = PADDING_BYTES;
    if (moat_session_send_protected(session, packet, sizeof packet, false) != 0)
        return -1;
    session->padding_packets++;
    moat_counters *c = moat_worker_counters_mut(session->worker);
    moat_counter_add(&c->bwe_padding_packets, 1);
    moat_counter_add(&c->bwe_padding_bytes, sizeof packet);
    return 0;
}

void moat_session_bwe_tick(moat_session *session, uint64_t now_us)
{
    if (!session->bwe || !session->probe.active)
        return;
    /* Over when its window is, or as soon as the path says it is too much
     * (loss among its packets): what is queued hurts media. */
    if (now_us >= session->probe.end_us || session->bwe->probe_lost > 0) {
        moat_ssbwe_stats before = session->bwe->stats;
        session->probe.active = false;
        moat_ssbwe_probe_end(session->bwe, now_us);
        count_estimator_changes(session, &before);
        return;
    }
    uint8_t pt;
    moat_outgoing_stream *stream = padding_stream(session, &pt);
    if (!stream)
        return;
    /* What should have gone by the next tick, media included. */
    uint64_t elapsed = now_us - session->probe.start_us + MOAT_WORKER_TICK_MS * 1000u;
    uint64_t due = session->probe.target_bps * elapsed / 8000000u;
    for (unsigned i = 0; i < PADDING_PER_TICK && session->probe.bytes_sent < due; i++) {
        if (send_padding(session, stream, pt) != 0)
            break;
    }
}

int moat_session_bwe_estimate(moat_plugin_session *handle, moat_plugin_estimate *out)
{
    moat_session *session = moat_session_handle_get(handle);
    if (!session || !session->bwe || session->bwe->stats.feedbacks == 0)
        return -1;
    const moat_ssbwe *e = session->bwe;
    memset(out, 0, sizeof *out);
    out->bitrate_bps = moat_ssbwe_estimate(e);
    out->acked_bps = e->acked_bps;
    out->feedbacks = e->stats.feedbacks;
    out->probes_confirmed = e->stats.probes_confirmed;
    out->probes_failed = e->stats.probes_failed;
    out->padding_packets = session->padding_packets;
    out->loss = e->loss_fraction;
    out->usage = (int)moat_ssbwe_usage_now(e);
    out->probing = session->probe.active || e->probe_have_first;
    return 0;
}

int moat_session_bwe_probe(moat_plugin_session *handle, uint64_t target_bps, uint64_t duration_us)
{
    moat_session *session = moat_session_handle_get(handle);
    uint8_t pt;
    if (!session || !session->bwe || session->probe.active || session->bwe->probe_have_first ||
        !padding_stream(session, &pt) || target_bps == 0 || duration_us == 0)
        return -1;
    uint64_t now = moat_worker_now_us(session->worker);
    session->probe.active = true;
    session->probe.target_bps = target_bps < MAX_PROBE_BPS ? target_bps : MAX_PROBE_BPS;
    session->probe.start_us = now;
    session->probe.end_us = now + (duration_us < MAX_PROBE_US ? duration_us : MAX_PROBE_US);
    session->probe.bytes_sent = 0;
    moat_ssbwe_probe_start(session->bwe, session->probe.target_bps, now);
    moat_counter_add(&moat_worker_counters_mut(session->worker)->bwe_probes_started, 1);
    return 0;
}

json_t *moat_session_bwe_describe(const moat_session *session)
{
    static const char *const usage_names[] = {"normal", "overusing", "underusing"};
    const moat_ssbwe *e = session->bwe;
    if (!e || e->stats.feedbacks == 0)
        return json_null();
    moat_ssbwe_usage usage = moat_ssbwe_usage_now(e);
    return json_pack("{s:I, s:I, s:f, s:s, s:b}", "estimate_bps",
                     (json_int_t)moat_ssbwe_estimate(e), "acked_bps", (json_int_t)e->acked_bps,
                     "loss", e->loss_fraction, "usage",
                     (unsigned)usage < 3 ? usage_names[usage] : "normal", "probing",
                     session->probe.active || e->probe_have_first);
}
