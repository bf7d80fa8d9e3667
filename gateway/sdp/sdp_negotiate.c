/* The decisions behind an SDP answer: which m-lines are accepted (BUNDLE,
 * protocol, rtcp-mux), with which codecs and header extensions, the transport
 * and DTLS roles, the SRTP+ scheme and the gateway's own SSRCs. */
#include "sdp_negotiate.h"
#include "sdp_direction.h"
#include "sdp_lex.h"
#include "sdp_srtpplus.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define URI_MID               "urn:ietf:params:rtp-hdrext:sdes:mid"
#define URI_AUDIO_LEVEL       "urn:ietf:params:rtp-hdrext:ssrc-audio-level"
#define URI_ABS_SEND          "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"
#define URI_VIDEO_ORIENTATION "urn:3gpp:video-orientation"
#define URI_RID               "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
#define URI_REPAIRED_RID      "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
#define URI_PLAYOUT_DELAY     "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"

static const char *const accepted_extensions[] = {
    URI_MID,
    URI_AUDIO_LEVEL,
    URI_ABS_SEND,
    "urn:ietf:params:rtp-hdrext:toffset",
    URI_VIDEO_ORIENTATION,
    URI_RID,
    URI_REPAIRED_RID,
    MOAT_SDP_URI_TRANSPORT_CC,
    URI_PLAYOUT_DELAY,
};

#define DEFAULT_MAX_MESSAGE_SIZE        262144
#define DEFAULT_REMOTE_SCTP_PORT        5000
#define DEFAULT_REMOTE_MAX_MESSAGE_SIZE 65536 /* RFC 8841 §6 when absent */

static bool in_bundle(const moat_sdp *offer, const moat_sdp_media *m)
{
    for (size_t i = 0; i < offer->n_bundle_mids && m->mid[0] != '\0'; i++)
        if (strcmp(offer->bundle_mids[i], m->mid) == 0)
            return true;
    return false;
}

/* The gateway runs one ICE/DTLS transport per session: with BUNDLE it takes
 * the m-lines of the (first) group, without it only the first m-line it
 * can accept, since every other one would need a transport of its own. */
static bool eligible(const moat_sdp *offer, const moat_sdp_media *m, bool have_transport)
{
    if (!m->kind_known || (m->port == 0 && !m->bundle_only))
        return false;
    if (offer->n_bundle_mids > 0)
        return in_bundle(offer, m);
    return !have_transport;
}

static bool rtp_proto_supported(const char *proto)
{
    /* JSEP (RFC 8829 §5.1.2) has answerers take both spellings of the
     * DTLS-SRTP profile and answer with the one offered. */
    return strcmp(proto, "UDP/TLS/RTP/SAVPF") == 0 || strcmp(proto, "RTP/SAVPF") == 0;
}

/* The pre-RFC 8841 form still written by some stacks (aiortc, older
 * SDKs): "m=application 9 DTLS/SCTP 5000" with a=sctpmap, the SCTP port as
 * the format. It is answered in the same form. */
static bool data_proto_legacy(const moat_sdp_media *m)
{
    if (strcmp(m->proto, "DTLS/SCTP") != 0 && strcmp(m->proto, "UDP/DTLS/SCTP") != 0)
        return false;
    char *end = NULL;
    long port = strtol(m->first_format, &end, 10);
    return end != m->first_format && *end == '\0' && port > 0 && port <= 65535;
}

static bool data_proto_supported(const moat_sdp_media *m)
{
    return (strcmp(m->proto, "UDP/DTLS/SCTP") == 0 &&
            strcmp(m->first_format, "webrtc-datachannel") == 0) ||
           data_proto_legacy(m);
}

static bool extension_accepted(const char *uri)
{
    for (size_t i = 0; i < G_N_ELEMENTS(accepted_extensions); i++)
        if (strcmp(uri, accepted_extensions[i]) == 0)
            return true;
    return false;
}

static bool rid_sent(const moat_sdp_media *m, const char *id)
{
    for (size_t i = 0; i < m->n_rids; i++) {
        if (m->rids[i].send && strcmp(m->rids[i].id, id) == 0)
            return true;
    }
    return false;
}

/* The peer sends simulcast layers the answer can take. */
static bool simulcast_offered(const moat_sdp_media *m)
{
    if (!moat_sdp_direction_sends(m->direction))
        return false;
    for (size_t i = 0; i < m->n_simulcast_send; i++) {
        if (rid_sent(m, m->simulcast_send[i]))
            return true;
    }
    return false;
}

/* The rid extensions are kept only where they name simulcast layers. */
static bool rid_extension(const char *uri)
{
    return strcmp(uri, URI_RID) == 0 || strcmp(uri, URI_REPAIRED_RID) == 0;
}

/* Extensions Moat writes into what it sends: its writer takes one-byte
 * headers (ids 1-14, rtp_extension_put.h), so a larger id is not answered
 * rather than promised and never sent. */
static bool written_and_out_of_range(const moat_sdp_extmap *x)
{
    bool written =
        strcmp(x->uri, MOAT_SDP_URI_TRANSPORT_CC) == 0 || strcmp(x->uri, URI_PLAYOUT_DELAY) == 0;
    return written && (x->id < 1 || x->id > 14);
}

static void select_extmaps(const moat_sdp_media *m, moat_sdp_plan_media *pm)
{
    bool simulcast = simulcast_offered(m);
    for (size_t i = 0; i < m->n_extmaps; i++) {
        if (!extension_accepted(m->extmaps[i].uri) || written_and_out_of_range(&m->extmaps[i]) ||
            (rid_extension(m->extmaps[i].uri) && !simulcast) ||
            (strcmp(m->extmaps[i].uri, MOAT_SDP_URI_TRANSPORT_CC) == 0 &&
             !moat_sdp_direction_sends(m->direction) &&
             !moat_sdp_direction_receives(m->direction)) ||
            /* a delay only the receiver of Moat's media applies */
            (strcmp(m->extmaps[i].uri, URI_PLAYOUT_DELAY) == 0 &&
             !moat_sdp_direction_receives(m->direction)))
            continue;
        bool duplicate = false;
        for (size_t j = 0; j < pm->n_extmaps && !duplicate; j++)
            duplicate = strcmp(m->extmaps[pm->extmaps[j]].uri, m->extmaps[i].uri) == 0;
        if (!duplicate)
            pm->extmaps[pm->n_extmaps++] = i;
    }
}

/* The offered rtx/90000 payload type with apt=<pt>, NULL none. */
static const moat_sdp_codec *offered_rtx(const moat_sdp_media *m, uint8_t pt)
{
    char apt[16];
    g_snprintf(apt, sizeof apt, "apt=%u", (unsigned)pt);
    for (size_t i = 0; i < m->n_codecs; i++) {
        const moat_sdp_codec *c = &m->codecs[i];
        if (g_ascii_strcasecmp(c->name, "rtx") != 0 || c->clock_rate != 90000)
            continue;
        /* fmtp "apt=96" or "apt=96;rtx-time=3000" */
        size_t n = strlen(apt);
        if (strncmp(c->fmtp, apt, n) == 0 && (c->fmtp[n] == '\0' || c->fmtp[n] == ';'))
            return c;
    }
    return NULL;
}

static void select_rtx(const moat_sdp_media *m, moat_sdp_plan_media *pm)
{
    for (size_t c = 0; c < pm->n_codecs; c++)
        pm->rtx[c] = m->kind == MOAT_MEDIA_KIND_VIDEO && !pm->codecs[c].telephone_event
                         ? offered_rtx(m, pm->codecs[c].offered->pt)
                         : NULL;
}

/* RFC 8843 section 9.1: within a bundle a payload type names one codec
 * configuration. */
static bool same_configuration(const moat_sdp_codec *a, const moat_sdp_codec *b)
{
    return g_ascii_strcasecmp(a->name, b->name) == 0 && a->clock_rate == b->clock_rate &&
           a->channels == b->channels && strcmp(a->fmtp, b->fmtp) == 0;
}

/* The codec or rtx an m-line accepted before `upto` gave `pt`, NULL none. */
static const moat_sdp_codec *accepted_pt(const moat_sdp_plan *plan, size_t upto, uint8_t pt)
{
    for (size_t j = 0; j < upto; j++) {
        const moat_sdp_plan_media *pm = &plan->media[j];
        for (size_t c = 0; pm->accepted && c < pm->n_codecs; c++) {
            if (pm->codecs[c].offered->pt == pt)
                return pm->codecs[c].offered;
            if (pm->rtx[c] && pm->rtx[c]->pt == pt)
                return pm->rtx[c];
        }
    }
    return NULL;
}

static bool clashes(const moat_sdp_plan *plan, size_t upto, const moat_sdp_codec *codec)
{
    const moat_sdp_codec *earlier = accepted_pt(plan, upto, codec->pt);
    return earlier && !same_configuration(earlier, codec);
}

/* Leaves out of m-line `index` the codecs (with their rtx) and the rtx
 * whose payload type an earlier accepted m-line gave another configuration,
 * so no number is answered for two codecs. Returns how many codecs are left. */
static size_t drop_payload_type_clashes(const moat_sdp_plan *plan, size_t index,
                                        moat_sdp_plan_media *pm)
{
    size_t kept = 0;
    for (size_t c = 0; c < pm->n_codecs; c++) {
        if (clashes(plan, index, pm->codecs[c].offered))
            continue;
        pm->codecs[kept] = pm->codecs[c];
        pm->rtx[kept] = pm->rtx[c] && !clashes(plan, index, pm->rtx[c]) ? pm->rtx[c] : NULL;
        kept++;
    }
    pm->n_codecs = kept;
    for (size_t c = 0; c < kept; c++)
        if (!pm->codecs[c].telephone_event)
            return kept;
    return 0; /* telephone-event alone carries no media */
}

static int rejected_rtcp_mux(size_t index, const moat_sdp_media *m, char *error, size_t error_size)
{
    if (m->mid[0] != '\0')
        moat_sdp_errorf(error, error_size, "m-line %zu (mid %s): rtcp-mux required", index + 1,
                        m->mid);
    else
        moat_sdp_errorf(error, error_size, "m-line %zu: rtcp-mux required", index + 1);
    return -1;
}

static int plan_media(const moat_sdp *offer, const moat_sdp_answer_params *params,
                      moat_sdp_plan *plan, char *error, size_t error_size)
{
    bool have_data = false;
    for (size_t i = 0; i < offer->n_media; i++) {
        const moat_sdp_media *m = &offer->media[i];
        moat_sdp_plan_media *pm = &plan->media[i];
        if (!eligible(offer, m, plan->transport != NULL))
            continue;
        if (m->kind == MOAT_MEDIA_KIND_APPLICATION) {
            if (!data_proto_supported(m) || have_data)
                continue;
            pm->data_channel = true;
            pm->data_channel_legacy = data_proto_legacy(m);
            have_data = true;
        } else {
            if (!m->is_rtp || !rtp_proto_supported(m->proto))
                continue;
            pm->n_codecs = moat_sdp_codec_select(m, pm->codecs, MOAT_SDP_MAX_ACCEPTED_CODECS);
            if (pm->n_codecs && params->accept_codec)
                pm->n_codecs =
                    moat_sdp_codec_filter(pm->codecs, pm->n_codecs, i, m->kind,
                                          params->accept_codec, params->accept_codec_user);
            select_rtx(m, pm);
            if (pm->n_codecs)
                pm->n_codecs = drop_payload_type_clashes(plan, i, pm);
            if (pm->n_codecs == 0)
                continue;
            if (!m->rtcp_mux)
                return rejected_rtcp_mux(i, m, error, error_size);
            select_extmaps(m, pm);
        }
        pm->accepted = true;
        if (plan->transport == NULL)
            plan->transport = m;
    }
    if (plan->transport == NULL) {
        moat_sdp_errorf(error, error_size, "no supported codec");
        return -1;
    }
    return 0;
}

static bool is_retransmission(const moat_sdp_media *m, uint32_t ssrc)
{
    for (size_t i = 0; i < m->n_fids; i++)
        if (m->fids[i].retransmission == ssrc)
            return true;
    return false;
}

static void remote_ssrcs(const moat_sdp_media *m, moat_sdp_negotiated_media *nm)
{
    for (size_t i = 0; i < m->n_ssrcs && nm->remote_ssrc == 0; i++)
        if (!is_retransmission(m, m->ssrcs[i].ssrc))
            nm->remote_ssrc = m->ssrcs[i].ssrc;
    for (size_t i = 0; i < m->n_fids && nm->remote_ssrc != 0; i++) {
        if (m->fids[i].primary == nm->remote_ssrc) {
            nm->remote_rtx_ssrc = m->fids[i].retransmission;
            break;
        }
    }
}

static bool ssrc_taken(const moat_sdp *offer, const moat_sdp_negotiation *out, uint32_t ssrc)
{
    for (size_t i = 0; i < offer->n_media; i++) {
        if (out->media[i].local_ssrc == ssrc)
            return true;
        for (size_t j = 0; j < offer->media[i].n_ssrcs; j++)
            if (offer->media[i].ssrcs[j].ssrc == ssrc)
                return true;
    }
    return false;
}

/* SSRCs are drawn from the kernel CSPRNG: a predictable SSRC would let an
 * off-path attacker aim forged packets at the stream. */
static int local_ssrc(const moat_sdp *offer, const moat_sdp_negotiation *out, uint32_t *ssrc,
                      char *error, size_t error_size)
{
    for (int attempt = 0; attempt < 32; attempt++) {
        uint32_t value;
        if (getrandom(&value, sizeof value, 0) != (ssize_t)sizeof value)
            break;
        if (value != 0 && !ssrc_taken(offer, out, value)) {
            *ssrc = value;
            return 0;
        }
    }
    moat_sdp_errorf(error, error_size, "cannot draw a random SSRC");
    return -1;
}

bool moat_sdp_plan_transport_cc(const moat_sdp_media *m, const moat_sdp_plan_media *pm)
{
    for (size_t e = 0; e < pm->n_extmaps; e++) {
        if (strcmp(m->extmaps[pm->extmaps[e]].uri, MOAT_SDP_URI_TRANSPORT_CC) == 0)
            return true;
    }
    return false;
}

static bool has_rtx(const moat_sdp_negotiated_media *nm)
{
    for (size_t c = 0; c < nm->n_payload_types; c++) {
        if (nm->rtx_payload_types[c])
            return true;
    }
    return false;
}

/* The RTX SSRC follows from the media SSRC (a bijection: as unpredictable,
 * and the same again when a renegotiation keeps the media SSRC); a fresh
 * one when that collides. */
static int rtx_ssrc(const moat_sdp *offer, const moat_sdp_negotiation *out,
                    moat_sdp_negotiated_media *nm, char *error, size_t error_size)
{
    uint32_t value = nm->local_ssrc * 2654435761u + 0x9e3779b9u;
    if (value != 0 && value != nm->local_ssrc && !ssrc_taken(offer, out, value)) {
        nm->local_rtx_ssrc = value;
        return 0;
    }
    return local_ssrc(offer, out, &nm->local_rtx_ssrc, error, error_size);
}

/* The answered rtcp-fb of an offered codec, as bits (sdp_types.h). */
static uint8_t feedback_bits(const moat_sdp_codec *codec, bool transport_cc)
{
    uint8_t bits = 0;
    for (size_t i = 0; i < codec->n_rtcp_fb; i++) {
        const char *fb = codec->rtcp_fb[i];
        if (strcmp(fb, "nack") == 0)
            bits |= 1u << 0;
        else if (strcmp(fb, "nack pli") == 0)
            bits |= 1u << 1;
        else if (strcmp(fb, "ccm fir") == 0)
            bits |= 1u << 2;
        else if (strcmp(fb, "goog-remb") == 0)
            bits |= 1u << 3;
        else if (strcmp(fb, "transport-cc") == 0 && transport_cc)
            bits |= 1u << 4;
    }
    return bits;
}

static void fill_rtp(const moat_sdp_media *m, const moat_sdp_plan_media *pm,
                     moat_sdp_negotiated_media *nm)
{
    for (size_t c = 0; c < pm->n_codecs; c++) {
        nm->payload_types[c] = pm->codecs[c].offered->pt;
        g_strlcpy(nm->codec_names[c], pm->codecs[c].name, sizeof nm->codec_names[c]);
        nm->clock_rates[c] = pm->codecs[c].clock_rate;
        nm->channels[c] = pm->codecs[c].channels;
        nm->rtx_payload_types[c] = pm->rtx[c] ? pm->rtx[c]->pt : 0;
        nm->rtcp_fb[c] = feedback_bits(pm->codecs[c].offered, moat_sdp_plan_transport_cc(m, pm));
        if (c < G_N_ELEMENTS(nm->fmtp) && pm->codecs[c].fmtp)
            g_strlcpy(nm->fmtp[c], pm->codecs[c].fmtp, sizeof nm->fmtp[c]);
    }
    nm->n_payload_types = pm->n_codecs;
    for (size_t e = 0; e < pm->n_extmaps; e++) {
        const moat_sdp_extmap *x = &m->extmaps[pm->extmaps[e]];
        uint8_t id = (uint8_t)x->id;
        if (strcmp(x->uri, URI_MID) == 0)
            nm->mid_extension_id = id;
        else if (strcmp(x->uri, URI_AUDIO_LEVEL) == 0)
            nm->audio_level_extension_id = id;
        else if (strcmp(x->uri, URI_ABS_SEND) == 0)
            nm->abs_send_time_extension_id = id;
        else if (strcmp(x->uri, URI_VIDEO_ORIENTATION) == 0)
            nm->video_orientation_extension_id = id;
        else if (strcmp(x->uri, URI_RID) == 0)
            nm->rid_extension_id = id;
        else if (strcmp(x->uri, URI_REPAIRED_RID) == 0)
            nm->repaired_rid_extension_id = id;
        else if (strcmp(x->uri, MOAT_SDP_URI_TRANSPORT_CC) == 0)
            nm->transport_cc_extension_id = id;
        else if (strcmp(x->uri, URI_PLAYOUT_DELAY) == 0)
            nm->playout_delay_extension_id = id;
    }
    remote_ssrcs(m, nm);
}

/* Simulcast (RFC 8853): the streams of the offer's send list that have an
 * a=rid ... send, the first MOAT_SDP_MAX_ANSWER_RIDS of them. Without the
 * rid header extension the layers could not be told apart: none. */
static void take_simulcast(const moat_sdp_media *m, moat_sdp_negotiated_media *nm)
{
    if (!nm->peer_sends || nm->rid_extension_id == 0)
        return;
    for (size_t i = 0; i < m->n_simulcast_send && nm->n_rids < MOAT_SDP_MAX_ANSWER_RIDS; i++) {
        if (rid_sent(m, m->simulcast_send[i]))
            g_strlcpy(nm->rids[nm->n_rids++], m->simulcast_send[i], sizeof nm->rids[0]);
    }
}

static void fill_transport(const moat_sdp *offer, const moat_sdp_answer_params *params,
                           const moat_sdp_plan *plan, moat_sdp_negotiation *out)
{
    const moat_sdp_media *t = plan->transport;
    g_strlcpy(out->remote_ufrag, t->ice_ufrag, sizeof out->remote_ufrag);
    g_strlcpy(out->remote_pwd, t->ice_pwd, sizeof out->remote_pwd);
    g_strlcpy(out->remote_fingerprint_alg, t->fingerprint_alg, sizeof out->remote_fingerprint_alg);
    g_strlcpy(out->remote_fingerprint, t->fingerprint, sizeof out->remote_fingerprint);
    if (t->setup == MOAT_SDP_SETUP_ACTIVE)
        out->local_setup = MOAT_SDP_SETUP_PASSIVE;
    else if (t->setup == MOAT_SDP_SETUP_PASSIVE)
        out->local_setup = MOAT_SDP_SETUP_ACTIVE;
    else
        out->local_setup = params->setup;

    /* SRTP+ is per transport: the scheme comes from the first accepted
     * m-line that lists any, and the answer repeats it on every m-line. */
    for (size_t i = 0; i < offer->n_media && !out->srtpplus; i++) {
        const moat_sdp_media *m = &offer->media[i];
        if (plan->media[i].accepted && m->n_srtpplus > 0)
            out->srtpplus =
                moat_sdp_srtpplus_choose(m->srtpplus, m->n_srtpplus, params->offer_srtpplus_prn,
                                         params->offer_srtpplus_chain, &out->srtpplus_scheme);
    }
}

int moat_sdp_negotiate(const moat_sdp *offer, const moat_sdp_answer_params *params,
                       moat_sdp_plan *plan, moat_sdp_negotiation *out, char *error,
                       size_t error_size)
{
    memset(plan, 0, sizeof *plan);
    memset(out, 0, sizeof *out);
    plan->max_message_size =
        params->max_message_size != 0 ? params->max_message_size : DEFAULT_MAX_MESSAGE_SIZE;
    if (plan_media(offer, params, plan, error, error_size) < 0)
        return -1;

    out->n_media = offer->n_media;
    for (size_t i = 0; i < offer->n_media; i++) {
        const moat_sdp_media *m = &offer->media[i];
        const moat_sdp_plan_media *pm = &plan->media[i];
        moat_sdp_negotiated_media *nm = &out->media[i];
        nm->kind = m->kind_known ? m->kind : MOAT_MEDIA_KIND_APPLICATION;
        g_strlcpy(nm->mid, m->mid, sizeof nm->mid);
        nm->accepted = pm->accepted;
        nm->answer_direction = MOAT_SDP_INACTIVE;
        if (!pm->accepted)
            continue;
        if (pm->data_channel) {
            nm->answer_direction = MOAT_SDP_SENDRECV;
            nm->peer_sends = nm->peer_receives = true;
            out->has_data_channel = true;
            out->remote_sctp_port = m->has_sctp_port ? m->sctp_port : DEFAULT_REMOTE_SCTP_PORT;
            if (pm->data_channel_legacy)
                out->remote_sctp_port = (uint16_t)strtol(m->first_format, NULL, 10);
            out->remote_max_message_size =
                m->has_max_message_size ? m->max_message_size : DEFAULT_REMOTE_MAX_MESSAGE_SIZE;
            continue;
        }
        nm->answer_direction = moat_sdp_direction_answer(m->direction);
        nm->peer_sends = moat_sdp_direction_sends(m->direction);
        nm->peer_receives = moat_sdp_direction_receives(m->direction);
        fill_rtp(m, pm, nm);
        take_simulcast(m, nm);
        if (!moat_sdp_direction_sends(nm->answer_direction))
            continue;
        if (i < params->n_local_ssrcs && params->local_ssrcs[i])
            nm->local_ssrc = params->local_ssrcs[i];
        else if (local_ssrc(offer, out, &nm->local_ssrc, error, error_size) < 0)
            return -1;
        if (has_rtx(nm) && rtx_ssrc(offer, out, nm, error, error_size) < 0)
            return -1;
    }
    fill_transport(offer, params, plan, out);
    return 0;
}
