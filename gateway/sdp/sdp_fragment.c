/* Trickle-ICE fragments (RFC 8840 application/trickle-ice-sdpfrag), the
 * bodies of WHIP/WHEP PATCH requests (RFC 9725 §4.3) and of the reply to an
 * ICE restart. */
#include "sdp.h"
#include "sdp_attr.h"
#include "sdp_candidate.h"
#include "sdp_lex.h"

#include <string.h>

typedef struct {
    moat_sdp_fragment *out;
    size_t section; /* SIZE_MAX before the first m= line */
    size_t line_no;
    char *error;
    size_t error_size;
} fragment_parser;

static int fail(fragment_parser *p, const char *what, const char *why)
{
    moat_sdp_errorf(p->error, p->error_size, "line %zu: %s: %s", p->line_no, what, why);
    return -1;
}

/* A fragment may repeat the credentials in every m= section, but they must
 * agree: two ufrags would mean two ICE generations in one body. */
static int store_credential(fragment_parser *p, const char *what, moat_sdp_span value,
                            bool (*valid)(moat_sdp_span), char *dst, size_t size)
{
    if (!valid(value))
        return fail(p, what, "invalid");
    if (dst[0] != '\0') {
        if (!moat_sdp_span_eq(value, dst))
            return fail(p, what, "conflicting values");
        return 0;
    }
    moat_sdp_span_copy(value, dst, size);
    return 0;
}

static int parse_bundle(fragment_parser *p, moat_sdp_span value)
{
    moat_sdp_fragment *f = p->out;
    moat_sdp_span rest = value, semantics, mid;
    if (!moat_sdp_span_next_token(&rest, &semantics))
        return fail(p, "a=group", "missing semantics");
    if (!moat_sdp_span_eq(semantics, "BUNDLE") || f->n_bundle_mids > 0)
        return 0;
    while (moat_sdp_span_next_token(&rest, &mid)) {
        if (!moat_sdp_mid_valid(mid))
            return fail(p, "a=group", "bad mid");
        if (f->n_bundle_mids >= MOAT_SDP_MAX_MEDIA)
            return fail(p, "a=group", "too many mids");
        moat_sdp_span_copy(mid, f->bundle_mids[f->n_bundle_mids++], MOAT_SDP_MID_SIZE);
    }
    return 0;
}

static int parse_mid(fragment_parser *p, moat_sdp_span value)
{
    moat_sdp_fragment *f = p->out;
    if (p->section == SIZE_MAX)
        return 0;
    if (!moat_sdp_mid_valid(value))
        return fail(p, "a=mid", "must be 1 to 31 token characters");
    if (f->mids[p->section][0] != '\0')
        return fail(p, "a=mid", "duplicate");
    for (size_t i = 0; i < f->n_media; i++)
        if (moat_sdp_span_eq(value, f->mids[i]))
            return fail(p, "a=mid", "used by two m= sections");
    moat_sdp_span_copy(value, f->mids[p->section], MOAT_SDP_MID_SIZE);
    return 0;
}

static int parse_candidate(fragment_parser *p, moat_sdp_span value)
{
    moat_sdp_fragment *f = p->out;
    if (f->n_candidates >= MOAT_SDP_FRAGMENT_MAX_CANDIDATES)
        return fail(p, "a=candidate", "too many candidates");
    moat_sdp_fragment_candidate *c = &f->candidates[f->n_candidates];
    const char *why;
    if (moat_sdp_candidate_parse_span(value, &c->candidate, &why) < 0)
        return fail(p, "a=candidate", why);
    c->media_index = p->section;
    f->n_candidates++;
    return 0;
}

static int parse_attribute(fragment_parser *p, moat_sdp_span value)
{
    moat_sdp_fragment *f = p->out;
    moat_sdp_span name, attribute_value;
    if (!moat_sdp_span_split(value, ':', &name, &attribute_value)) {
        if (moat_sdp_span_eq(name, "end-of-candidates"))
            f->end_of_candidates = true;
        return 0;
    }
    if (moat_sdp_span_eq(name, "ice-ufrag"))
        return store_credential(p, "a=ice-ufrag", attribute_value, moat_sdp_ice_ufrag_valid,
                                f->ice_ufrag, sizeof f->ice_ufrag);
    if (moat_sdp_span_eq(name, "ice-pwd"))
        return store_credential(p, "a=ice-pwd", attribute_value, moat_sdp_ice_pwd_valid, f->ice_pwd,
                                sizeof f->ice_pwd);
    if (moat_sdp_span_eq(name, "group"))
        return p->section == SIZE_MAX ? parse_bundle(p, attribute_value) : 0;
    if (moat_sdp_span_eq(name, "mid"))
        return parse_mid(p, attribute_value);
    if (moat_sdp_span_eq(name, "candidate"))
        return parse_candidate(p, attribute_value);
    return 0; /* ice-options and the like */
}

static int parse_line(fragment_parser *p, moat_sdp_span line)
{
    if (line.len == 0)
        return 0;
    if (line.len < 2 || line.p[1] != '=' || !g_ascii_islower(line.p[0])) {
        moat_sdp_errorf(p->error, p->error_size, "line %zu: expected <type>=<value>", p->line_no);
        return -1;
    }
    moat_sdp_span value = {line.p + 2, line.len - 2};
    if (line.p[0] == 'a')
        return parse_attribute(p, value);
    if (line.p[0] == 'm') {
        /* Only a section boundary here: RFC 8840 m= lines repeat the
         * original ones and carry nothing the candidates depend on. */
        if (p->out->n_media >= MOAT_SDP_MAX_MEDIA)
            return fail(p, "m=", "too many m= lines");
        p->section = p->out->n_media++;
    }
    return 0;
}

int moat_sdp_fragment_parse(const char *text, size_t length, moat_sdp_fragment *out, char *error,
                            size_t error_size)
{
    if (error != NULL && error_size > 0)
        error[0] = '\0';
    if (out == NULL) {
        moat_sdp_errorf(error, error_size, "missing argument");
        return -1;
    }
    memset(out, 0, sizeof *out);
    if (moat_sdp_text_check(text, length, MOAT_SDP_MAX_TEXT, error, error_size) < 0)
        return -1;
    fragment_parser p = {out, SIZE_MAX, 0, error, error_size};
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
    if (rc < 0) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    /* a=mid may follow the candidates of its section. */
    for (size_t i = 0; i < out->n_candidates; i++) {
        moat_sdp_fragment_candidate *c = &out->candidates[i];
        if (c->media_index != SIZE_MAX)
            memcpy(c->mid, out->mids[c->media_index], sizeof c->mid);
    }
    return 0;
}

static bool string_valid(const char *value, size_t max, bool (*valid)(moat_sdp_span))
{
    if (value == NULL)
        return false;
    size_t len = strnlen(value, max + 1);
    return len <= max && valid((moat_sdp_span){value, len});
}

char *moat_sdp_fragment_build(const char *ice_ufrag, const char *ice_pwd,
                              const moat_sdp_candidate *candidates, size_t n,
                              const char *const *mids, size_t n_mids)
{
    if (!string_valid(ice_ufrag, MOAT_SDP_ICE_CREDENTIAL_MAX, moat_sdp_ice_ufrag_valid) ||
        !string_valid(ice_pwd, MOAT_SDP_ICE_CREDENTIAL_MAX, moat_sdp_ice_pwd_valid) ||
        (n > 0 && candidates == NULL) || n > MOAT_SDP_FRAGMENT_MAX_CANDIDATES ||
        (n_mids > 0 && mids == NULL) || n_mids > MOAT_SDP_MAX_MEDIA)
        return NULL;
    for (size_t i = 0; i < n_mids; i++) {
        if (!string_valid(mids[i], MOAT_SDP_MID_SIZE - 1, moat_sdp_mid_valid))
            return NULL;
        for (size_t j = 0; j < i; j++)
            if (strcmp(mids[i], mids[j]) == 0)
                return NULL;
    }

    GString *out = g_string_sized_new(512);
    g_string_append_printf(out, "a=ice-lite\r\na=ice-ufrag:%s\r\na=ice-pwd:%s\r\n", ice_ufrag,
                           ice_pwd);
    if (n_mids > 0) {
        g_string_append(out, "a=group:BUNDLE");
        for (size_t i = 0; i < n_mids; i++)
            g_string_append_printf(out, " %s", mids[i]);
        g_string_append(out, "\r\n");
    }
    /* With BUNDLE every m= section shares the first one's transport, so the
     * candidates go there once; the other sections only name their mid. */
    for (size_t section = 0; section < (n_mids > 0 ? n_mids : 1); section++) {
        if (n_mids > 0)
            g_string_append_printf(out, "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=mid:%s\r\n",
                                   mids[section]);
        if (section != 0)
            continue;
        for (size_t i = 0; i < n; i++) {
            char line[256];
            if (moat_sdp_candidate_format(&candidates[i], line, sizeof line) < 0) {
                g_string_free(out, TRUE);
                return NULL;
            }
            g_string_append_printf(out, "a=candidate:%s\r\n", line);
        }
        g_string_append(out, "a=end-of-candidates\r\n");
    }
    return g_string_free(out, FALSE);
}
