/* A session's media description: the m-lines and codecs kept from the
 * SDP negotiation, the outgoing streams it sets up, transport-cc state,
 * and the SRTP keys installed once DTLS is done. The packet path is in
 * session_media.c. */
#include "session/session_internal.h"

#include <glib.h>
#include <openssl/rand.h>
#include <string.h>
static uint32_t random_ssrc(void)
{
    uint32_t value = 0;
    while (value == 0) {
        if (RAND_bytes((unsigned char *)&value, sizeof value) != 1)
            value = g_random_int();
    }
    return value;
}

/* Plugin API v2: the m-line's codecs and header extension ids. */
static void describe_codecs(const moat_sdp_negotiated_media *in, moat_media_info *out)
{
    size_t n =
        in->n_payload_types < MOAT_PLUGIN_MAX_CODECS ? in->n_payload_types : MOAT_PLUGIN_MAX_CODECS;
    for (size_t c = 0; c < n; c++) {
        moat_codec_info *codec = &out->codecs[c];
        codec->payload_type = in->payload_types[c];
        g_strlcpy(codec->name, in->codec_names[c], sizeof codec->name);
        codec->clock_rate = in->clock_rates[c];
        codec->channels = in->channels[c];
        if (c < G_N_ELEMENTS(in->fmtp)) /* kept for the first codecs only */
            g_strlcpy(codec->fmtp, in->fmtp[c], sizeof codec->fmtp);
        /* sdp_types.h bits 0..4 are nack, pli, fir, remb, transport-cc as
         * MOAT_RTCP_FB_* */
        codec->rtcp_fb = in->rtcp_fb[c];
        codec->rtx_payload_type = in->rtx_payload_types[c];
    }
    out->n_codecs = n;
    out->extensions.mid = in->mid_extension_id;
    out->extensions.audio_level = in->audio_level_extension_id;
    out->extensions.abs_send_time = in->abs_send_time_extension_id;
    out->extensions.video_orientation = in->video_orientation_extension_id;
    out->extensions.rid = in->rid_extension_id;
    out->extensions.repaired_rid = in->repaired_rid_extension_id;
    out->extensions.transport_wide_cc = in->transport_cc_extension_id;
    out->extensions.playout_delay = in->playout_delay_extension_id;
    for (size_t r = 0; r < in->n_rids && r < G_N_ELEMENTS(out->rids); r++)
        g_strlcpy(out->rids[r], in->rids[r], sizeof out->rids[r]);
    out->n_rids = in->n_rids < G_N_ELEMENTS(out->rids) ? in->n_rids : G_N_ELEMENTS(out->rids);
}

/* BUNDLE: one transport, one extension id (the first m-line's that has it). */
static void init_transport_cc(moat_session *session)
{
    g_free(session->twcc);
    session->twcc = NULL;
    session->twcc_id = 0;
    for (size_t i = 0; i < session->n_media && session->twcc_id == 0; i++)
        session->twcc_id = session->media[i].extensions.transport_wide_cc;
    if (session->twcc_id == 0)
        return;
    session->twcc = g_new(moat_twcc_recorder, 1);
    moat_twcc_recorder_init(session->twcc);
}

static void init_transport_cc_both(moat_session *session)
{
    init_transport_cc(session);
    moat_session_bwe_init(session);
}

/* One outgoing stream of the m-line `out` (the last described) on `ssrc`. */
static void add_outgoing(moat_session *session, size_t capacity,
                         const moat_sdp_negotiated_media *in, const moat_media_info *out,
                         uint32_t ssrc, uint32_t rtx_ssrc)
{
    if (session->n_outgoing >= capacity)
        return;
    moat_outgoing_stream *stream = &session->outgoing[session->n_outgoing++];
    memset(stream, 0, sizeof *stream);
    stream->ssrc = ssrc;
    stream->media_index = (int)(session->n_media - 1);
    stream->clock_rate = in->n_payload_types ? in->clock_rates[0] : 90000;
    stream->kind = in->kind;
    stream->rtx_ssrc = rtx_ssrc;
    stream->rtx_sequence = (uint16_t)random_ssrc();
    for (size_t c = 0; c < out->n_codecs; c++)
        stream->nack |= (out->codecs[c].rtcp_fb & MOAT_RTCP_FB_NACK) != 0;
    moat_retransmit_budget_init(&stream->budget);
}

void moat_session_media_init(moat_session *session, const moat_sdp_negotiation *negotiation)
{
    session->n_media = 0;
    size_t n_lines =
        negotiation->n_media < MOAT_PLUGIN_MAX_MEDIA ? negotiation->n_media : MOAT_PLUGIN_MAX_MEDIA;
    g_free(session->media);
    /* Sized to the m-lines (a described m-line is about 1.6 KB). */
    session->media = g_new0(moat_media_info, n_lines ? n_lines : 1);
    /* One outgoing stream per m-line the peer receives on with our SSRC. */
    size_t n_outgoing = 0;
    for (size_t i = 0; i < n_lines; i++) {
        const moat_sdp_negotiated_media *in = &negotiation->media[i];
        bool sends = in->accepted && in->peer_receives && in->local_ssrc;
        n_outgoing += sends;
        if (sends && in->kind == MOAT_MEDIA_KIND_VIDEO)
            n_outgoing += session->relay_layers;
    }
    if (n_outgoing > MOAT_SESSION_MAX_STREAMS)
        n_outgoing = MOAT_SESSION_MAX_STREAMS;
    g_free(session->outgoing);
    session->n_outgoing = 0;
    session->outgoing = n_outgoing ? g_new0(moat_outgoing_stream, n_outgoing) : NULL;
    for (size_t i = 0; i < n_lines; i++) {
        const moat_sdp_negotiated_media *in = &negotiation->media[i];
        moat_media_info *out = &session->media[session->n_media++];
        memset(out, 0, sizeof *out);
        out->kind = in->kind;
        g_strlcpy(out->mid, in->mid, sizeof out->mid);
        out->peer_sends = in->accepted && in->peer_sends;
        out->peer_receives = in->accepted && in->peer_receives;
        out->remote_ssrc = in->remote_ssrc;
        out->remote_rtx_ssrc = in->remote_rtx_ssrc;
        out->local_ssrc = in->local_ssrc;
        size_t n = in->n_payload_types < 16 ? in->n_payload_types : 16;
        memcpy(out->payload_types, in->payload_types, n);
        out->n_payload_types = n;
        out->mid_extension_id = in->mid_extension_id;
        describe_codecs(in, out);
        if (out->peer_receives && out->local_ssrc) {
            add_outgoing(session, n_outgoing, in, out, out->local_ssrc, in->local_rtx_ssrc);
            for (size_t l = 0; out->kind == MOAT_MEDIA_KIND_VIDEO && l < session->relay_layers;
                 l++) {
                out->local_layer_ssrcs[l] = random_ssrc();
                out->n_local_layers = l + 1;
                /* Each layer its own RTX stream where the answer took RTX. */
                add_outgoing(session, n_outgoing, in, out, out->local_layer_ssrcs[l],
                             in->local_rtx_ssrc ? random_ssrc() : 0);
            }
        }
    }
    session->rtcp_ssrc = session->n_outgoing ? session->outgoing[0].ssrc : random_ssrc();
    moat_rtp_demux_init(&session->demux, session->media, session->n_media);
    init_transport_cc_both(session);
    moat_session_playout_init(session);
}

void moat_session_media_clear(moat_session *session)
{
    for (size_t i = 0; i < session->n_outgoing; i++) {
        moat_retransmit_cache_free(session->outgoing[i].cache);
        session->outgoing[i].cache = NULL;
        moat_retransmit_map_free(session->outgoing[i].map);
        session->outgoing[i].map = NULL;
    }
    session->n_outgoing = 0;
    g_free(session->outgoing);
    session->outgoing = NULL;
    session->n_incoming = 0;
    session->incoming_capacity = 0;
    g_free(session->incoming);
    session->incoming = NULL;
    g_free(session->twcc);
    session->twcc = NULL;
    moat_session_bwe_free(session);
    g_free(session->media);
    session->media = NULL;
    session->n_media = 0;
    moat_srtp_session_free(session->srtp);
    session->srtp = NULL;
}

int moat_session_media_keys(moat_session *session, const moat_srtp_keying *keys)
{
    char error[256];
    moat_srtp_session_free(session->srtp);
    session->srtp = moat_srtp_session_new(keys, error, sizeof error);
    if (!session->srtp) {
        moat_session_log(session, MOAT_LOG_WARN, "session", "session %s: %s", session->label,
                         error);
        return -1;
    }
    /* Streams evicted for a new SSRC's (srtp_session.h), on /metrics. */
    moat_srtp_session_count_evictions(
        session->srtp, &moat_worker_counters_mut(session->worker)->srtp_streams_evicted);
    return 0;
}
