/* Builds an SDP offer (JSEP, RFC 8829) as a full ICE agent with DTLS-SRTP:
 * checks the parameters, then writes one BUNDLE group with rtcp-mux, host
 * candidates and the SRTP+ schemes (what moat-flood sends to WHIP). */
#include "sdp_offer.h"
#include "sdp.h"
#include "sdp_attr.h"
#include "sdp_srtpplus.h"

#include <glib.h>
#include <stdarg.h>
#include <string.h>

#define STREAM_ID "moat-flood"

static bool fail(char *error, size_t error_size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail(char *error, size_t error_size, const char *format, ...)
{
    if (error != NULL && error_size > 0) {
        va_list args;
        va_start(args, format);
        g_vsnprintf(error, error_size, format, args);
        va_end(args);
    }
    return false;
}

static moat_sdp_span span_of(const char *value)
{
    moat_sdp_span span = {value ? value : "", value ? strlen(value) : 0};
    return span;
}

/* An RFC 8866 token no longer than max. */
static bool token(const char *value, size_t max)
{
    return value != NULL && strlen(value) <= max && moat_sdp_span_is_token(span_of(value));
}

/* Printable ASCII without CR and LF: what may follow a fixed prefix on a line. */
static bool line_text(const char *value, size_t max)
{
    if (value == NULL || strlen(value) > max)
        return false;
    for (const char *p = value; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
            return false;
    return true;
}

static bool fingerprint_valid(const char *value)
{
    if (value == NULL || strlen(value) != 95)
        return false;
    for (size_t i = 0; i < 95; i++) {
        bool colon = i % 3 == 2;
        if (colon ? value[i] != ':' : !g_ascii_isxdigit(value[i]))
            return false;
    }
    return true;
}

static bool srtpplus_valid(const moat_sdp_srtpplus *s)
{
    if (strcmp(s->scheme, "prn") == 0)
        return true;
    return strcmp(s->scheme, "chain") == 0 && s->depth >= 1 && s->copies >= 1 && s->copies <= 4 &&
           s->copies <= s->depth;
}

static bool codec_valid(const moat_sdp_offer_codec *c, char *error, size_t error_size)
{
    if (c->pt > 127)
        return fail(error, error_size, "payload type %u above 127", (unsigned)c->pt);
    if (!token(c->name, 31) || c->clock_rate == 0)
        return fail(error, error_size, "payload type %u: bad codec name or clock rate",
                    (unsigned)c->pt);
    if (c->fmtp != NULL && !line_text(c->fmtp, MOAT_SDP_FMTP_SIZE - 1))
        return fail(error, error_size, "payload type %u: bad fmtp", (unsigned)c->pt);
    for (size_t i = 0; i < MOAT_SDP_OFFER_MAX_RTCP_FB && c->rtcp_fb[i]; i++)
        if (c->rtcp_fb[i][0] == '\0' || !line_text(c->rtcp_fb[i], MOAT_SDP_RTCP_FB_SIZE - 1))
            return fail(error, error_size, "payload type %u: bad rtcp-fb", (unsigned)c->pt);
    return true;
}

static bool media_valid(const moat_sdp_offer_media *m, char *error, size_t error_size)
{
    if (m->kind != MOAT_MEDIA_KIND_AUDIO && m->kind != MOAT_MEDIA_KIND_VIDEO)
        return fail(error, error_size, "only audio and video m-lines are offered");
    if (m->mid == NULL || !moat_sdp_mid_valid(span_of(m->mid)))
        return fail(error, error_size, "bad mid");
    if (m->n_codecs == 0 || m->codecs == NULL || m->n_codecs > MOAT_SDP_MAX_CODECS)
        return fail(error, error_size, "mid %s: no codecs", m->mid);
    for (size_t i = 0; i < m->n_codecs; i++)
        if (!codec_valid(&m->codecs[i], error, error_size))
            return false;
    return true;
}

static bool params_valid(const moat_sdp_offer_params *p, char *error, size_t error_size)
{
    if (p->ice_ufrag == NULL || p->ice_pwd == NULL ||
        !moat_sdp_ice_ufrag_valid(span_of(p->ice_ufrag)) ||
        !moat_sdp_ice_pwd_valid(span_of(p->ice_pwd)))
        return fail(error, error_size, "bad ICE credentials");
    if (!fingerprint_valid(p->fingerprint_sha256))
        return fail(error, error_size, "bad sha-256 fingerprint");
    if (p->cname != NULL && !token(p->cname, MOAT_SDP_CNAME_SIZE - 1))
        return fail(error, error_size, "bad cname");
    if (p->n_media == 0 || p->media == NULL || p->n_media > MOAT_SDP_MAX_MEDIA)
        return fail(error, error_size, "an offer needs 1 to %d m-lines", MOAT_SDP_MAX_MEDIA);
    if (p->n_srtpplus > MOAT_SDP_MAX_SRTPPLUS || (p->n_srtpplus > 0 && p->srtpplus == NULL))
        return fail(error, error_size, "too many SRTP+ schemes");
    for (size_t i = 0; i < p->n_srtpplus; i++)
        if (!srtpplus_valid(&p->srtpplus[i]))
            return fail(error, error_size, "bad SRTP+ scheme");
    if (p->n_candidates > MOAT_SDP_MAX_CANDIDATES || (p->n_candidates > 0 && !p->candidates))
        return fail(error, error_size, "too many candidates");
    for (size_t i = 0; i < p->n_media; i++) {
        if (!media_valid(&p->media[i], error, error_size))
            return false;
        for (size_t j = 0; j < i; j++)
            if (strcmp(p->media[i].mid, p->media[j].mid) == 0)
                return fail(error, error_size, "duplicate mid %s", p->media[i].mid);
    }
    return true;
}

static const char *setup_name(moat_sdp_setup setup)
{
    switch (setup) {
    case MOAT_SDP_SETUP_ACTIVE:
        return "active";
    case MOAT_SDP_SETUP_PASSIVE:
        return "passive";
    default:
        return "actpass";
    }
}

static void write_codec(GString *out, const moat_sdp_offer_codec *c)
{
    g_string_append_printf(out, "a=rtpmap:%u %s/%u", (unsigned)c->pt, c->name,
                           (unsigned)c->clock_rate);
    if (c->channels > 0)
        g_string_append_printf(out, "/%u", (unsigned)c->channels);
    g_string_append(out, "\r\n");
    for (size_t i = 0; i < MOAT_SDP_OFFER_MAX_RTCP_FB && c->rtcp_fb[i]; i++)
        g_string_append_printf(out, "a=rtcp-fb:%u %s\r\n", (unsigned)c->pt, c->rtcp_fb[i]);
    if (c->fmtp != NULL && c->fmtp[0] != '\0')
        g_string_append_printf(out, "a=fmtp:%u %s\r\n", (unsigned)c->pt, c->fmtp);
}

static bool write_candidates(GString *out, const moat_sdp_offer_params *p, char *error,
                             size_t error_size)
{
    char line[256];
    for (size_t i = 0; i < p->n_candidates; i++) {
        if (moat_sdp_candidate_format(&p->candidates[i], line, sizeof line) < 0)
            return fail(error, error_size, "candidate %zu does not format", i);
        g_string_append_printf(out, "a=candidate:%s\r\n", line);
    }
    g_string_append(out, "a=end-of-candidates\r\n");
    return true;
}

static bool write_media(GString *out, size_t index, const moat_sdp_offer_params *p, char *error,
                        size_t error_size)
{
    const moat_sdp_offer_media *m = &p->media[index];
    g_string_append_printf(out, "m=%s 9 UDP/TLS/RTP/SAVPF",
                           m->kind == MOAT_MEDIA_KIND_AUDIO ? "audio" : "video");
    for (size_t i = 0; i < m->n_codecs; i++)
        g_string_append_printf(out, " %u", (unsigned)m->codecs[i].pt);
    g_string_append_printf(out,
                           "\r\nc=IN IP4 0.0.0.0\r\n"
                           "a=ice-ufrag:%s\r\n"
                           "a=ice-pwd:%s\r\n"
                           "a=ice-options:trickle\r\n"
                           "a=fingerprint:sha-256 %s\r\n"
                           "a=setup:%s\r\n"
                           "a=mid:%s\r\n"
                           "a=%s\r\n"
                           "a=rtcp-mux\r\n"
                           "a=rtcp-rsize\r\n",
                           p->ice_ufrag, p->ice_pwd, p->fingerprint_sha256, setup_name(p->setup),
                           m->mid, moat_sdp_direction_name(m->direction));
    if (m->ssrc != 0)
        g_string_append_printf(out, "a=msid:" STREAM_ID " track%zu\r\n", index);
    for (size_t i = 0; i < m->n_codecs; i++)
        write_codec(out, &m->codecs[i]);
    if (m->ssrc != 0)
        g_string_append_printf(out,
                               "a=ssrc:%u cname:%s\r\n"
                               "a=ssrc:%u msid:" STREAM_ID " track%zu\r\n",
                               m->ssrc, p->cname ? p->cname : "moat", m->ssrc, index);
    for (size_t i = 0; i < p->n_srtpplus; i++)
        moat_sdp_srtpplus_write(out, &p->srtpplus[i]);
    if (index == 0)
        return write_candidates(out, p, error, error_size);
    return true;
}

char *moat_sdp_offer_create(const moat_sdp_offer_params *params, char *error, size_t error_size)
{
    if (params == NULL) {
        fail(error, error_size, "no parameters");
        return NULL;
    }
    if (!params_valid(params, error, error_size))
        return NULL;
    GString *out = g_string_sized_new(2048);
    g_string_append_printf(out,
                           "v=0\r\n"
                           "o=- %" G_GUINT64_FORMAT " 2 IN IP4 127.0.0.1\r\n"
                           "s=-\r\n"
                           "t=0 0\r\n"
                           "a=group:BUNDLE",
                           (guint64)params->session_id);
    for (size_t i = 0; i < params->n_media; i++)
        g_string_append_printf(out, " %s", params->media[i].mid);
    g_string_append(out, "\r\na=msid-semantic: WMS " STREAM_ID "\r\n");
    for (size_t i = 0; i < params->n_media; i++) {
        if (!write_media(out, i, params, error, error_size)) {
            g_string_free(out, TRUE);
            return NULL;
        }
    }
    return g_string_free(out, FALSE);
}
