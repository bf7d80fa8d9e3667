/* RTP attributes of an m-line: a=rtpmap, a=fmtp, a=rtcp-fb, a=extmap,
 * a=ssrc, a=ssrc-group and a=msid. */
#include "sdp_attr.h"

#include <string.h>

static moat_sdp_codec *codec_by_pt(moat_sdp_media *m, uint32_t pt)
{
    for (size_t i = 0; i < m->n_codecs; i++)
        if (m->codecs[i].pt == pt)
            return &m->codecs[i];
    return NULL;
}

/* Reads the leading payload type; a PT that is not on the m= line makes the
 * attribute irrelevant (RFC 8866 lets such lines be ignored). */
static int leading_pt(moat_sdp_span *rest, uint32_t *pt, const char **why)
{
    moat_sdp_span token;
    if (!moat_sdp_span_next_token(rest, &token) || !moat_sdp_span_u32(token, 127, pt)) {
        *why = "bad payload type";
        return -1;
    }
    return 0;
}

int moat_sdp_attr_rtpmap(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    uint32_t pt, clock, channels = 0;
    moat_sdp_span rest = value, encoding, name, after_name, rate, after_rate;
    if (leading_pt(&rest, &pt, why) < 0)
        return -1;
    if (!moat_sdp_span_next_token(&rest, &encoding)) {
        *why = "missing encoding";
        return -1;
    }
    if (!moat_sdp_span_split(encoding, '/', &name, &after_name) || name.len == 0) {
        *why = "missing clock rate";
        return -1;
    }
    if (!moat_sdp_span_is_token(name) || name.len >= sizeof m->codecs[0].name) {
        *why = "bad encoding name";
        return -1;
    }
    bool has_channels = moat_sdp_span_split(after_name, '/', &rate, &after_rate);
    if (!moat_sdp_span_u32(rate, UINT32_MAX, &clock) || clock == 0) {
        *why = "bad clock rate";
        return -1;
    }
    if (has_channels && (!moat_sdp_span_u32(after_rate, 255, &channels) || channels == 0)) {
        *why = "bad channel count";
        return -1;
    }
    moat_sdp_codec *codec = codec_by_pt(m, pt);
    if (codec == NULL)
        return 1;
    if (codec->has_rtpmap) {
        *why = "duplicate payload type";
        return -1;
    }
    codec->has_rtpmap = true;
    moat_sdp_span_copy(name, codec->name, sizeof codec->name);
    codec->clock_rate = clock;
    codec->channels = (uint8_t)channels;
    return 0;
}

int moat_sdp_attr_fmtp(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    uint32_t pt;
    moat_sdp_span rest = value;
    if (leading_pt(&rest, &pt, why) < 0)
        return -1;
    moat_sdp_span parameters = moat_sdp_span_trim(rest);
    moat_sdp_codec *codec = codec_by_pt(m, pt);
    if (codec == NULL)
        return 1;
    if (codec->fmtp[0] != '\0') {
        *why = "duplicate payload type";
        return -1;
    }
    if (!moat_sdp_span_copy(parameters, codec->fmtp, sizeof codec->fmtp)) {
        *why = "parameters too long";
        return -1;
    }
    return 0;
}

static int add_feedback(moat_sdp_codec *codec, const char *feedback, const char **why)
{
    for (size_t i = 0; i < codec->n_rtcp_fb; i++)
        if (strcmp(codec->rtcp_fb[i], feedback) == 0)
            return 0;
    if (codec->n_rtcp_fb >= MOAT_SDP_MAX_RTCP_FB) {
        *why = "too many feedback types for one payload type";
        return -1;
    }
    g_strlcpy(codec->rtcp_fb[codec->n_rtcp_fb++], feedback, MOAT_SDP_RTCP_FB_SIZE);
    return 0;
}

int moat_sdp_attr_rtcp_fb(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    moat_sdp_span rest = value, token;
    if (!moat_sdp_span_next_token(&rest, &token)) {
        *why = "missing payload type";
        return -1;
    }
    bool wildcard = moat_sdp_span_eq(token, "*");
    uint32_t pt = 0;
    if (!wildcard && !moat_sdp_span_u32(token, 127, &pt)) {
        *why = "bad payload type";
        return -1;
    }
    /* Normalised to single spaces so that "nack  pli" and "nack pli" are one
     * feedback type when the answer filters them. */
    char feedback[MOAT_SDP_RTCP_FB_SIZE];
    size_t used = 0;
    while (moat_sdp_span_next_token(&rest, &token)) {
        if (used + (used > 0) + token.len >= sizeof feedback)
            return 1; /* longer than any feedback type the gateway knows */
        if (used > 0)
            feedback[used++] = ' ';
        memcpy(feedback + used, token.p, token.len);
        used += token.len;
    }
    if (used == 0) {
        *why = "missing feedback type";
        return -1;
    }
    feedback[used] = '\0';
    if (wildcard) {
        for (size_t i = 0; i < m->n_codecs; i++)
            if (add_feedback(&m->codecs[i], feedback, why) < 0)
                return -1;
        return 0;
    }
    moat_sdp_codec *codec = codec_by_pt(m, pt);
    if (codec == NULL)
        return 1;
    return add_feedback(codec, feedback, why);
}

int moat_sdp_attr_extmap(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    moat_sdp_span rest = value, token, id_span, direction_span;
    uint32_t id;
    if (!moat_sdp_span_next_token(&rest, &token)) {
        *why = "missing id";
        return -1;
    }
    bool has_direction = moat_sdp_span_split(token, '/', &id_span, &direction_span);
    if (!moat_sdp_span_u32(id_span, 255, &id) || id == 0) {
        *why = "bad id";
        return -1;
    }
    moat_sdp_direction direction = MOAT_SDP_SENDRECV;
    if (has_direction && !moat_sdp_direction_from_name(direction_span, &direction)) {
        *why = "bad direction";
        return -1;
    }
    moat_sdp_span uri;
    if (!moat_sdp_span_next_token(&rest, &uri)) {
        *why = "missing URI";
        return -1;
    }
    if (uri.len >= MOAT_SDP_URI_SIZE) {
        *why = "URI too long";
        return -1;
    }
    for (size_t i = 0; i < m->n_extmaps; i++) {
        if (m->extmaps[i].id == id) {
            *why = "duplicate id";
            return -1;
        }
    }
    if (m->n_extmaps >= MOAT_SDP_MAX_EXTMAPS) {
        *why = "too many extensions";
        return -1;
    }
    moat_sdp_extmap *e = &m->extmaps[m->n_extmaps++];
    e->id = (uint16_t)id;
    e->has_direction = has_direction;
    e->direction = direction;
    moat_sdp_span_copy(uri, e->uri, sizeof e->uri);
    return 0;
}

static bool parse_ssrc(moat_sdp_span token, uint32_t *ssrc)
{
    /* 0 is legal in RTP but the gateway uses it for "none declared". */
    return moat_sdp_span_u32(token, UINT32_MAX, ssrc) && *ssrc != 0;
}

int moat_sdp_attr_ssrc(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    moat_sdp_span rest = value, token;
    uint32_t ssrc;
    if (!moat_sdp_span_next_token(&rest, &token) || !parse_ssrc(token, &ssrc)) {
        *why = "bad SSRC";
        return -1;
    }
    moat_sdp_ssrc *entry = NULL;
    for (size_t i = 0; i < m->n_ssrcs && entry == NULL; i++)
        if (m->ssrcs[i].ssrc == ssrc)
            entry = &m->ssrcs[i];
    if (entry == NULL) {
        if (m->n_ssrcs >= MOAT_SDP_MAX_SSRCS) {
            *why = "too many SSRCs";
            return -1;
        }
        entry = &m->ssrcs[m->n_ssrcs++];
        entry->ssrc = ssrc;
    }
    moat_sdp_span attribute = moat_sdp_span_trim(rest), name, attribute_value;
    if (!moat_sdp_span_split(attribute, ':', &name, &attribute_value))
        return 1;
    attribute_value = moat_sdp_span_trim(attribute_value);
    if (moat_sdp_span_eq(name, "cname")) {
        if (attribute_value.len == 0 ||
            !moat_sdp_span_copy(attribute_value, entry->cname, sizeof entry->cname)) {
            *why = "bad cname";
            return -1;
        }
        return 0;
    }
    if (moat_sdp_span_eq(name, "msid")) {
        if (attribute_value.len == 0 ||
            !moat_sdp_span_copy(attribute_value, entry->msid, sizeof entry->msid)) {
            *why = "bad msid";
            return -1;
        }
        return 0;
    }
    return 1;
}

int moat_sdp_attr_ssrc_group(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    moat_sdp_span rest = value, semantics, token;
    if (!moat_sdp_span_next_token(&rest, &semantics)) {
        *why = "missing semantics";
        return -1;
    }
    if (!moat_sdp_span_eq(semantics, "FID"))
        return 1; /* SIM, FEC-FR, ...: the gateway does not use them */
    uint32_t ssrcs[2];
    size_t n = 0;
    while (moat_sdp_span_next_token(&rest, &token)) {
        if (n == 2 || !parse_ssrc(token, &ssrcs[n])) {
            *why = "FID needs two SSRCs";
            return -1;
        }
        n++;
    }
    if (n != 2) {
        *why = "FID needs two SSRCs";
        return -1;
    }
    if (m->n_fids >= MOAT_SDP_MAX_SSRC_FIDS) {
        *why = "too many FID groups";
        return -1;
    }
    m->fids[m->n_fids].primary = ssrcs[0];
    m->fids[m->n_fids].retransmission = ssrcs[1];
    m->n_fids++;
    return 0;
}

int moat_sdp_attr_msid(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    moat_sdp_span rest = value, stream, track = {"", 0};
    if (!moat_sdp_span_next_token(&rest, &stream) || stream.len > 64) {
        *why = "bad stream id";
        return -1;
    }
    if (moat_sdp_span_next_token(&rest, &track) && track.len > 64) {
        *why = "bad track id";
        return -1;
    }
    /* A track may belong to several streams (several a=msid lines); the
     * first one is kept. */
    if (m->msid[0] != '\0')
        return 1;
    if (track.len > 0)
        g_snprintf(m->msid, sizeof m->msid, "%.*s %.*s", (int)stream.len, stream.p, (int)track.len,
                   track.p);
    else
        moat_sdp_span_copy(stream, m->msid, sizeof m->msid);
    return 0;
}
