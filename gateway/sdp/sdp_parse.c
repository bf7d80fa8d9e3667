/* The offer parser: walks the lines of a description, builds the session and
 * its m-lines, and dispatches each a= line to its attribute parser. */
#include "sdp.h"
#include "sdp_attr.h"
#include "sdp_lex.h"
#include "sdp_parse_state.h"

#include <string.h>

typedef int (*attribute_fn)(moat_sdp_media *m, moat_sdp_span value, const char **why);

typedef struct {
    const char *name;
    attribute_fn parse;
    bool media_only; /* ignored at session level */
} attribute_entry;

static const attribute_entry attributes[] = {
    {"rtpmap", moat_sdp_attr_rtpmap, true},
    {"fmtp", moat_sdp_attr_fmtp, true},
    {"rtcp-fb", moat_sdp_attr_rtcp_fb, true},
    {"extmap", moat_sdp_attr_extmap, false},
    {"ssrc", moat_sdp_attr_ssrc, true},
    {"ssrc-group", moat_sdp_attr_ssrc_group, true},
    {"msid", moat_sdp_attr_msid, true},
    {"rid", moat_sdp_attr_rid, true},
    {"simulcast", moat_sdp_attr_simulcast, true},
    {"ice-ufrag", moat_sdp_attr_ice_ufrag, false},
    {"ice-pwd", moat_sdp_attr_ice_pwd, false},
    {"fingerprint", moat_sdp_attr_fingerprint, false},
    {"setup", moat_sdp_attr_setup, false},
    {"sctp-port", moat_sdp_attr_sctp_port, true},
    {"max-message-size", moat_sdp_attr_max_message_size, true},
    {"candidate", moat_sdp_attr_candidate, true},
    {"mid", moat_sdp_attr_mid, true},
    {"srtpplus", moat_sdp_attr_srtpplus, false},
};

/* RFC 3551 static payload types, for offers that list them without a=rtpmap. */
static const struct {
    uint8_t pt;
    const char *name;
    uint32_t clock_rate;
    uint8_t channels;
} static_payload_types[] = {
    {0, "PCMU", 8000, 1},   {3, "GSM", 8000, 1},    {4, "G723", 8000, 1},  {8, "PCMA", 8000, 1},
    {9, "G722", 8000, 1},   {13, "CN", 8000, 1},    {18, "G729", 8000, 1}, {26, "JPEG", 90000, 0},
    {31, "H261", 90000, 0}, {34, "H263", 90000, 0},
};

typedef struct {
    moat_sdp_parse_state state;
    moat_sdp_media *current;             /* the m-line being parsed, or state.session */
    size_t current_index;                /* index of current in sdp->media, or SIZE_MAX */
    size_t unsupported_fingerprint_line; /* in the current section; 0 if none */
    size_t line_no;
    char *error;
    size_t error_size;
} parser;

static int fail(parser *p, const char *what, const char *why)
{
    moat_sdp_errorf(p->error, p->error_size, "line %zu: %s: %s", p->line_no, what, why);
    return -1;
}

static int parse_origin(parser *p, moat_sdp_span value)
{
    moat_sdp_origin *o = &p->state.sdp->origin;
    moat_sdp_span rest = value, fields[6];
    uint64_t number;
    if (p->state.has_origin)
        return fail(p, "o=", "duplicate");
    for (size_t i = 0; i < 6; i++)
        if (!moat_sdp_span_next_token(&rest, &fields[i]))
            return fail(p, "o=", "expected 6 fields");
    if (!moat_sdp_span_copy(fields[0], o->username, sizeof o->username))
        return fail(p, "o=", "username too long");
    if (!moat_sdp_span_u64(fields[1], &number) ||
        !moat_sdp_span_copy(fields[1], o->session_id, sizeof o->session_id))
        return fail(p, "o=", "bad session id");
    if (!moat_sdp_span_u64(fields[2], &number) ||
        !moat_sdp_span_copy(fields[2], o->session_version, sizeof o->session_version))
        return fail(p, "o=", "bad session version");
    if (!moat_sdp_span_eq(fields[3], "IN") ||
        !(moat_sdp_span_eq(fields[4], "IP4") || moat_sdp_span_eq(fields[4], "IP6")))
        return fail(p, "o=", "expected IN IP4 or IN IP6");
    if (!moat_sdp_span_copy(fields[5], o->address, sizeof o->address))
        return fail(p, "o=", "address too long");
    p->state.has_origin = true;
    return 0;
}

static int parse_group(parser *p, moat_sdp_span value)
{
    moat_sdp *sdp = p->state.sdp;
    moat_sdp_span rest = value, semantics, mid;
    if (!moat_sdp_span_next_token(&rest, &semantics))
        return fail(p, "a=group", "missing semantics");
    /* A second BUNDLE group asks for a second transport, which the gateway
     * does not run: its m-lines are answered with port 0. */
    if (!moat_sdp_span_eq(semantics, "BUNDLE") || sdp->n_bundle_mids > 0)
        return 0;
    while (moat_sdp_span_next_token(&rest, &mid)) {
        if (!moat_sdp_mid_valid(mid))
            return fail(p, "a=group", "bad mid");
        for (size_t i = 0; i < sdp->n_bundle_mids; i++)
            if (moat_sdp_span_eq(mid, sdp->bundle_mids[i]))
                return fail(p, "a=group", "duplicate mid");
        if (sdp->n_bundle_mids >= MOAT_SDP_MAX_MEDIA)
            return fail(p, "a=group", "too many mids");
        moat_sdp_span_copy(mid, sdp->bundle_mids[sdp->n_bundle_mids++], MOAT_SDP_MID_SIZE);
    }
    if (sdp->n_bundle_mids == 0)
        return fail(p, "a=group", "empty BUNDLE group");
    return 0;
}

/* Attributes without a value, or whose value is not stored. */
static bool parse_flag(parser *p, moat_sdp_span name)
{
    moat_sdp_media *m = p->current;
    bool session = p->current_index == SIZE_MAX;
    moat_sdp_direction direction;
    if (moat_sdp_direction_from_name(name, &direction)) {
        m->direction = direction;
        if (!session)
            p->state.media_has_direction[p->current_index] = true;
    } else if (moat_sdp_span_eq(name, "rtcp-mux") || moat_sdp_span_eq(name, "rtcp-mux-only")) {
        m->rtcp_mux = true;
    } else if (moat_sdp_span_eq(name, "rtcp-rsize")) {
        m->rtcp_rsize = true;
    } else if (moat_sdp_span_eq(name, "end-of-candidates")) {
        m->end_of_candidates = true;
    } else if (moat_sdp_span_eq(name, "bundle-only")) {
        m->bundle_only = !session;
    } else if (moat_sdp_span_eq(name, "ice-lite")) {
        p->state.sdp->ice_lite = p->state.sdp->ice_lite || session;
    } else if (moat_sdp_span_eq(name, "extmap-allow-mixed")) {
        p->state.sdp->extmap_allow_mixed = true;
    } else {
        return false;
    }
    return true;
}

static int parse_attribute(parser *p, moat_sdp_span value)
{
    moat_sdp_span name, attribute_value;
    bool has_value = moat_sdp_span_split(value, ':', &name, &attribute_value);
    if (name.len == 0)
        return fail(p, "a=", "missing attribute name");
    if (!has_value) {
        parse_flag(p, name); /* unknown flags are ignored */
        return 0;
    }
    if (moat_sdp_span_eq(name, "group"))
        return p->current_index == SIZE_MAX ? parse_group(p, attribute_value) : 0;
    for (size_t i = 0; i < G_N_ELEMENTS(attributes); i++) {
        if (!moat_sdp_span_eq(name, attributes[i].name))
            continue;
        if (attributes[i].media_only && p->current_index == SIZE_MAX)
            return 0;
        const char *why = NULL;
        int rc = attributes[i].parse(p->current, attribute_value, &why);
        if (rc < 0) {
            char what[32];
            g_snprintf(what, sizeof what, "a=%s", attributes[i].name);
            return fail(p, what, why);
        }
        /* An ignored fingerprint with a reason has a hash the gateway does
         * not take: that fails the section only if no usable one follows. */
        if (rc == 1 && attributes[i].parse == moat_sdp_attr_fingerprint &&
            p->unsupported_fingerprint_line == 0 && why != NULL)
            p->unsupported_fingerprint_line = p->line_no;
        return 0;
    }
    return 0; /* attributes the gateway does not use */
}

static int parse_bandwidth(parser *p, moat_sdp_span value)
{
    moat_sdp_span type, amount;
    uint32_t number;
    if (!moat_sdp_span_split(value, ':', &type, &amount) ||
        !moat_sdp_span_u32(amount, UINT32_MAX, &number))
        return fail(p, "b=", "expected <type>:<number>");
    if (moat_sdp_span_eq(type, "AS"))
        p->current->bandwidth_as_kbps = number;
    else if (moat_sdp_span_eq(type, "TIAS"))
        p->current->bandwidth_tias_bps = number;
    return 0;
}

static bool proto_valid(moat_sdp_span proto)
{
    if (proto.len == 0 || proto.len >= sizeof((moat_sdp_media *)0)->proto)
        return false;
    for (size_t i = 0; i < proto.len; i++) {
        moat_sdp_span one = {proto.p + i, 1};
        if (proto.p[i] != '/' && !moat_sdp_span_is_token(one))
            return false;
    }
    return true;
}

static int parse_formats(parser *p, moat_sdp_media *m, moat_sdp_span formats)
{
    moat_sdp_span rest = formats, token;
    size_t count = 0;
    while (moat_sdp_span_next_token(&rest, &token))
        count++;
    if (count == 0)
        return fail(p, "m=", "no formats");
    rest = formats;
    moat_sdp_span_next_token(&rest, &token);
    if (!moat_sdp_span_is_token(token) ||
        !moat_sdp_span_copy(token, m->first_format, sizeof m->first_format))
        return fail(p, "m=", "bad format");
    if (!m->is_rtp)
        return 0;
    if (count > MOAT_SDP_MAX_CODECS)
        return fail(p, "m=", "too many payload types");
    m->codecs = g_new0(moat_sdp_codec, count);
    bool seen[128] = {false};
    rest = formats;
    while (moat_sdp_span_next_token(&rest, &token)) {
        uint32_t pt;
        if (!moat_sdp_span_u32(token, 127, &pt))
            return fail(p, "m=", "bad payload type");
        if (seen[pt])
            return fail(p, "m=", "duplicate payload type");
        seen[pt] = true;
        moat_sdp_codec *codec = &m->codecs[m->n_codecs++];
        codec->pt = (uint8_t)pt;
        for (size_t i = 0; i < G_N_ELEMENTS(static_payload_types); i++) {
            if (static_payload_types[i].pt == pt) {
                g_strlcpy(codec->name, static_payload_types[i].name, sizeof codec->name);
                codec->clock_rate = static_payload_types[i].clock_rate;
                codec->channels = static_payload_types[i].channels;
            }
        }
    }
    return 0;
}

static int parse_media_line(parser *p, moat_sdp_span value)
{
    moat_sdp *sdp = p->state.sdp;
    moat_sdp_media *m = &sdp->media[sdp->n_media];
    moat_sdp_span rest = value, media, port_field, port, count, proto;
    uint32_t number;
    if (!moat_sdp_span_next_token(&rest, &media) || !moat_sdp_span_is_token(media) ||
        !moat_sdp_span_copy(media, m->media, sizeof m->media))
        return fail(p, "m=", "bad media type");
    if (!moat_sdp_span_next_token(&rest, &port_field))
        return fail(p, "m=", "missing port");
    moat_sdp_span_split(port_field, '/', &port, &count);
    if (!moat_sdp_span_u32(port, 65535, &number))
        return fail(p, "m=", "bad port");
    m->port = (uint16_t)number;
    if (!moat_sdp_span_next_token(&rest, &proto) || !proto_valid(proto))
        return fail(p, "m=", "bad proto");
    moat_sdp_span_copy(proto, m->proto, sizeof m->proto);
    m->is_rtp = strstr(m->proto, "RTP/") != NULL;
    m->kind_known = true;
    if (strcmp(m->media, "audio") == 0)
        m->kind = MOAT_MEDIA_KIND_AUDIO;
    else if (strcmp(m->media, "video") == 0)
        m->kind = MOAT_MEDIA_KIND_VIDEO;
    else if (strcmp(m->media, "application") == 0)
        m->kind = MOAT_MEDIA_KIND_APPLICATION;
    else
        m->kind_known = false;
    /* Counted now so that moat_sdp_free releases the codecs even when the
     * formats turn out bad. */
    sdp->n_media++;
    return parse_formats(p, m, rest);
}

/* A section ends at the next m= line or at the end of the text. */
static int finish_section(parser *p)
{
    if (p->current_index == SIZE_MAX && p->current->fingerprint[0] == '\0') {
        /* The session's: m-lines may carry usable ones (sdp_resolve.c). */
        p->state.session_unsupported_fingerprint_line = p->unsupported_fingerprint_line;
        p->unsupported_fingerprint_line = 0;
        return 0;
    }
    if (p->unsupported_fingerprint_line != 0 && p->current->fingerprint[0] == '\0') {
        p->line_no = p->unsupported_fingerprint_line;
        return fail(p, "a=fingerprint", "unsupported hash");
    }
    p->unsupported_fingerprint_line = 0;
    return 0;
}

static int parse_line(parser *p, moat_sdp_span line)
{
    if (p->line_no == 1 && !moat_sdp_span_eq(line, "v=0"))
        return fail(p, "v=", "expected v=0 first");
    if (line.len == 0)
        return 0; /* blank lines, usually a trailing one, carry nothing */
    if (line.len < 2 || line.p[1] != '=' || !g_ascii_islower(line.p[0])) {
        moat_sdp_errorf(p->error, p->error_size, "line %zu: expected <type>=<value>", p->line_no);
        return -1;
    }
    moat_sdp_span value = {line.p + 2, line.len - 2};
    switch (line.p[0]) {
    case 'v':
        return p->line_no == 1 ? 0 : fail(p, "v=", "repeated");
    case 'o':
        return p->current_index == SIZE_MAX ? parse_origin(p, value)
                                            : fail(p, "o=", "inside a media section");
    case 'm':
        if (finish_section(p) < 0)
            return -1;
        if (p->state.sdp->n_media >= MOAT_SDP_MAX_MEDIA)
            return fail(p, "m=", "too many m= lines");
        p->current_index = p->state.sdp->n_media;
        p->current = &p->state.sdp->media[p->current_index];
        return parse_media_line(p, value);
    case 'a':
        return parse_attribute(p, value);
    case 'b':
        return p->current_index == SIZE_MAX ? 0 : parse_bandwidth(p, value);
    default:
        return 0; /* s=, t=, c=, i=, ...: nothing the gateway uses */
    }
}

/* A first pass counts m= lines so that the media array is allocated once,
 * with its final size, and so that a text without any fails early. */
static int count_media(const char *text, size_t length, size_t *count, char *error,
                       size_t error_size)
{
    moat_sdp_lines lines;
    moat_sdp_span line;
    int rc;
    *count = 0;
    moat_sdp_lines_init(&lines, text, length);
    while ((rc = moat_sdp_lines_next(&lines, &line, error, error_size)) > 0) {
        if (line.len >= 2 && line.p[0] == 'm' && line.p[1] == '=' &&
            ++*count > MOAT_SDP_MAX_MEDIA) {
            moat_sdp_errorf(error, error_size, "line %zu: more than %d m= lines", lines.line_no,
                            MOAT_SDP_MAX_MEDIA);
            return -1;
        }
    }
    if (rc < 0)
        return -1;
    if (*count == 0) {
        moat_sdp_errorf(error, error_size, "no m= line");
        return -1;
    }
    return 0;
}

moat_sdp *moat_sdp_parse(const char *text, size_t length, char *error, size_t error_size)
{
    size_t n_media;
    if (error != NULL && error_size > 0)
        error[0] = '\0';
    if (moat_sdp_text_check(text, length, MOAT_SDP_MAX_TEXT, error, error_size) < 0 ||
        count_media(text, length, &n_media, error, error_size) < 0)
        return NULL;

    parser p;
    memset(&p, 0, sizeof p);
    p.error = error;
    p.error_size = error_size;
    p.state.sdp = g_new0(moat_sdp, 1);
    p.state.sdp->media = g_new0(moat_sdp_media, n_media);
    p.state.session = g_new0(moat_sdp_media, 1);
    p.current = p.state.session;
    p.current_index = SIZE_MAX;

    moat_sdp_lines lines;
    moat_sdp_span line;
    int rc;
    moat_sdp_lines_init(&lines, text, length);
    while ((rc = moat_sdp_lines_next(&lines, &line, error, error_size)) > 0) {
        p.line_no = lines.line_no;
        if (parse_line(&p, line) < 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0)
        rc = finish_section(&p);
    if (rc == 0)
        rc = moat_sdp_resolve(&p.state, error, error_size);
    g_free(p.state.session);
    if (rc < 0) {
        moat_sdp_free(p.state.sdp);
        return NULL;
    }
    return p.state.sdp;
}

void moat_sdp_free(moat_sdp *sdp)
{
    if (sdp == NULL)
        return;
    for (size_t i = 0; i < sdp->n_media; i++)
        g_free(sdp->media[i].codecs);
    g_free(sdp->media);
    g_free(sdp);
}

const moat_sdp_media *moat_sdp_media_by_mid(const moat_sdp *sdp, const char *mid)
{
    if (sdp == NULL || mid == NULL || mid[0] == '\0')
        return NULL;
    for (size_t i = 0; i < sdp->n_media; i++)
        if (strcmp(sdp->media[i].mid, mid) == 0)
            return &sdp->media[i];
    return NULL;
}
