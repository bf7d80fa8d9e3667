/* Writes the SDP answer text from a negotiation plan (JSEP, RFC 8829 §5.3):
 * session lines, then per m-line the rejection or the transport, codecs,
 * extensions, simulcast, SSRCs and candidates. */
#include "sdp.h"
#include "sdp_answer_write.h"
#include "sdp_attr.h"
#include "sdp_direction.h"
#include "sdp_srtpplus.h"

#include <string.h>

#define STREAM_ID "moat"

static void write_session(GString *out, const moat_sdp *offer, const moat_sdp_answer_params *params,
                          const moat_sdp_plan *plan)
{
    g_string_append_printf(out,
                           "v=0\r\n"
                           "o=- %" G_GUINT64_FORMAT " 2 IN IP4 127.0.0.1\r\n"
                           "s=-\r\n"
                           "t=0 0\r\n"
                           "a=ice-lite\r\n",
                           params->session_id);
    /* An answerer may only keep a group the offer proposed (RFC 8843). */
    if (offer->n_bundle_mids > 0) {
        g_string_append(out, "a=group:BUNDLE");
        for (size_t i = 0; i < offer->n_media; i++)
            if (plan->media[i].accepted)
                g_string_append_printf(out, " %s", offer->media[i].mid);
        g_string_append(out, "\r\n");
    }
    g_string_append(out, "a=msid-semantic: WMS " STREAM_ID "\r\n");
}

static void write_rejected(GString *out, const moat_sdp_media *m)
{
    g_string_append_printf(out, "m=%s 0 %s %s\r\nc=IN IP4 0.0.0.0\r\n", m->media, m->proto,
                           m->first_format);
    if (m->mid[0] != '\0')
        g_string_append_printf(out, "a=mid:%s\r\n", m->mid);
}

static const char *setup_name(moat_sdp_setup setup)
{
    return setup == MOAT_SDP_SETUP_ACTIVE ? "active" : "passive";
}

static void write_transport(GString *out, const moat_sdp_media *m,
                            const moat_sdp_answer_params *params,
                            const moat_sdp_negotiation *negotiation)
{
    g_string_append_printf(out,
                           "c=IN IP4 0.0.0.0\r\n"
                           "a=ice-ufrag:%s\r\n"
                           "a=ice-pwd:%s\r\n"
                           "a=fingerprint:sha-256 %s\r\n"
                           "a=setup:%s\r\n",
                           params->ice_ufrag, params->ice_pwd, params->fingerprint_sha256,
                           setup_name(negotiation->local_setup));
    if (m->mid[0] != '\0')
        g_string_append_printf(out, "a=mid:%s\r\n", m->mid);
}

static void write_codecs(GString *out, const moat_sdp_plan_media *pm, bool transport_cc)
{
    for (size_t c = 0; c < pm->n_codecs; c++) {
        const moat_sdp_codec_choice *choice = &pm->codecs[c];
        unsigned pt = choice->offered->pt;
        g_string_append_printf(out, "a=rtpmap:%u %s/%u", pt, choice->name,
                               (unsigned)choice->clock_rate);
        if (choice->channels > 0)
            g_string_append_printf(out, "/%u", (unsigned)choice->channels);
        g_string_append(out, "\r\n");
        for (size_t f = 0; f < choice->offered->n_rtcp_fb; f++)
            if (moat_sdp_rtcp_fb_supported(choice->offered->rtcp_fb[f]) &&
                (transport_cc || strcmp(choice->offered->rtcp_fb[f], "transport-cc") != 0))
                g_string_append_printf(out, "a=rtcp-fb:%u %s\r\n", pt, choice->offered->rtcp_fb[f]);
        if (choice->fmtp[0] != '\0')
            g_string_append_printf(out, "a=fmtp:%u %s\r\n", pt, choice->fmtp);
    }
    for (size_t c = 0; c < pm->n_codecs; c++) {
        if (pm->rtx[c])
            g_string_append_printf(out, "a=rtpmap:%u rtx/90000\r\na=fmtp:%u apt=%u\r\n",
                                   (unsigned)pm->rtx[c]->pt, (unsigned)pm->rtx[c]->pt,
                                   (unsigned)pm->codecs[c].offered->pt);
    }
}

/* The layers the gateway receives: a=rid ... recv and a=simulcast:recv. */
static void write_simulcast(GString *out, const moat_sdp_negotiated_media *nm)
{
    if (nm->n_rids == 0)
        return;
    for (size_t r = 0; r < nm->n_rids; r++)
        g_string_append_printf(out, "a=rid:%s recv\r\n", nm->rids[r]);
    g_string_append(out, "a=simulcast:recv ");
    for (size_t r = 0; r < nm->n_rids; r++)
        g_string_append_printf(out, "%s%s", r ? ";" : "", nm->rids[r]);
    g_string_append(out, "\r\n");
}

static void write_rtp(GString *out, size_t index, const moat_sdp_media *m,
                      const moat_sdp_plan_media *pm, const moat_sdp_negotiated_media *nm,
                      const moat_sdp_answer_params *params)
{
    for (size_t e = 0; e < pm->n_extmaps; e++) {
        const moat_sdp_extmap *x = &m->extmaps[pm->extmaps[e]];
        g_string_append_printf(out, "a=extmap:%u %s\r\n", (unsigned)x->id, x->uri);
    }
    g_string_append_printf(out, "a=%s\r\n", moat_sdp_direction_name(nm->answer_direction));
    write_simulcast(out, nm);
    char track[40];
    g_snprintf(track, sizeof track, "%s%zu", m->media, index);
    bool sends = nm->local_ssrc != 0;
    if (sends)
        g_string_append_printf(out, "a=msid:" STREAM_ID " %s\r\n", track);
    g_string_append(out, "a=rtcp-mux\r\n");
    if (m->rtcp_rsize)
        g_string_append(out, "a=rtcp-rsize\r\n");
    write_codecs(out, pm, moat_sdp_plan_transport_cc(m, pm));
    if (sends && nm->local_rtx_ssrc)
        g_string_append_printf(out, "a=ssrc-group:FID %u %u\r\n", nm->local_ssrc,
                               nm->local_rtx_ssrc);
    if (sends)
        g_string_append_printf(out,
                               "a=ssrc:%u cname:%s\r\n"
                               "a=ssrc:%u msid:" STREAM_ID " %s\r\n",
                               nm->local_ssrc, params->cname, nm->local_ssrc, track);
    if (sends && nm->local_rtx_ssrc)
        g_string_append_printf(out,
                               "a=ssrc:%u cname:%s\r\n"
                               "a=ssrc:%u msid:" STREAM_ID " %s\r\n",
                               nm->local_rtx_ssrc, params->cname, nm->local_rtx_ssrc, track);
}

static void write_candidates(GString *out, const moat_sdp_answer_params *params)
{
    char line[256];
    for (size_t c = 0; c < params->n_candidates; c++)
        if (moat_sdp_candidate_format(&params->candidates[c], line, sizeof line) > 0)
            g_string_append_printf(out, "a=candidate:%s\r\n", line);
    g_string_append(out, "a=end-of-candidates\r\n");
}

static void write_accepted(GString *out, size_t index, const moat_sdp_media *m,
                           const moat_sdp_plan *plan, const moat_sdp_answer_params *params,
                           const moat_sdp_negotiation *negotiation)
{
    const moat_sdp_plan_media *pm = &plan->media[index];
    /* Port 0 would read as a rejection, so a candidate without a port
     * leaves the JSEP placeholder 9. */
    unsigned port = params->n_candidates > 0 && params->candidates[0].port != 0
                        ? params->candidates[0].port
                        : 9;
    if (pm->data_channel && pm->data_channel_legacy) {
        g_string_append_printf(out, "m=application %u %s 5000\r\n", port, m->proto);
    } else if (pm->data_channel) {
        g_string_append_printf(out, "m=application %u UDP/DTLS/SCTP webrtc-datachannel\r\n", port);
    } else {
        g_string_append_printf(out, "m=%s %u %s", m->media, port, m->proto);
        for (size_t c = 0; c < pm->n_codecs; c++)
            g_string_append_printf(out, " %u", (unsigned)pm->codecs[c].offered->pt);
        for (size_t c = 0; c < pm->n_codecs; c++)
            if (pm->rtx[c])
                g_string_append_printf(out, " %u", (unsigned)pm->rtx[c]->pt);
        g_string_append(out, "\r\n");
    }
    write_transport(out, m, params, negotiation);
    if (pm->data_channel && pm->data_channel_legacy)
        g_string_append_printf(
            out, "a=sctpmap:5000 webrtc-datachannel 1024\r\na=max-message-size:%u\r\n",
            plan->max_message_size);
    else if (pm->data_channel)
        g_string_append_printf(out, "a=sctp-port:5000\r\na=max-message-size:%u\r\n",
                               plan->max_message_size);
    else
        write_rtp(out, index, m, pm, &negotiation->media[index], params);
    if (negotiation->srtpplus)
        moat_sdp_srtpplus_write(out, &negotiation->srtpplus_scheme);
    write_candidates(out, params);
}

char *moat_sdp_answer_write(const moat_sdp *offer, const moat_sdp_answer_params *params,
                            const moat_sdp_plan *plan, const moat_sdp_negotiation *negotiation)
{
    GString *out = g_string_sized_new(2048);
    write_session(out, offer, params, plan);
    for (size_t i = 0; i < offer->n_media; i++) {
        if (plan->media[i].accepted)
            write_accepted(out, i, &offer->media[i], plan, params, negotiation);
        else
            write_rejected(out, &offer->media[i]);
    }
    return g_string_free(out, FALSE);
}
