/* Owns rewriting a SIP party's SDP for the other party (call_sdp.h): the
 * text is copied line by line; only the lines Moat answers for change. */
#include "call/call_sdp.h"

#include "sdp/sdp_lex.h"

#include <stdio.h>
#include <string.h>

/* Payload types (0-127) of one m-line that stripping removes. */
typedef struct {
    uint8_t stripped[MOAT_CALL_SDP_MAX_MEDIA][128];
    size_t kept[MOAT_CALL_SDP_MAX_MEDIA];
} strip_plan;

static const char *static_codec(uint32_t payload_type)
{
    switch (payload_type) {
    case 0:
        return "PCMU";
    case 3:
        return "GSM";
    case 4:
        return "G723";
    case 8:
        return "PCMA";
    case 9:
        return "G722";
    case 13:
        return "CN";
    case 18:
        return "G729";
    default:
        return NULL;
    }
}

static bool name_stripped(const moat_call_sdp_rewrite *how, moat_sdp_span name)
{
    for (size_t i = 0; i < how->n_strip; i++) {
        if (g_ascii_strcasecmp(how->strip[i], "all") == 0 ||
            moat_sdp_span_eq_nocase(name, how->strip[i]))
            return true;
    }
    return false;
}

static bool literal_stripped(const moat_call_sdp_rewrite *how, const char *name)
{
    if (!name)
        return false;
    moat_sdp_span span = {name, strlen(name)};
    return name_stripped(how, span);
}

/* "a=rtpmap:<pt> <name>/<rate>..." of m-line `index`. */
static void plan_rtpmap(strip_plan *plan, size_t index, moat_sdp_span rest,
                        const moat_call_sdp_rewrite *how)
{
    moat_sdp_span pt, encoding, name, tail;
    uint32_t number;
    if (!moat_sdp_span_next_token(&rest, &pt) || !moat_sdp_span_u32(pt, 127, &number) ||
        !moat_sdp_span_next_token(&rest, &encoding))
        return;
    moat_sdp_span_split(encoding, '/', &name, &tail);
    plan->stripped[index][number] = name_stripped(how, name) ? 1 : 0;
}

/* First pass: which payload types each m-line loses. */
static void plan_strip(const char *text, size_t length, const moat_call_sdp_rewrite *how,
                       strip_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    if (how->n_strip == 0)
        return;
    moat_sdp_lines lines;
    moat_sdp_lines_init(&lines, text, length);
    moat_sdp_span line, name, rest;
    char ignored[8];
    int index = -1;
    while (moat_sdp_lines_next(&lines, &line, ignored, sizeof ignored) == 1) {
        if (moat_sdp_span_has_prefix(line, "m=") && index + 1 < MOAT_CALL_SDP_MAX_MEDIA) {
            index++;
            for (uint32_t pt = 0; pt < 128; pt++)
                plan->stripped[index][pt] = literal_stripped(how, static_codec(pt)) ? 1 : 0;
        } else if (index >= 0 && moat_sdp_span_has_prefix(line, "a=rtpmap:")) {
            moat_sdp_span value = {line.p + 2, line.len - 2};
            moat_sdp_span_split(value, ':', &name, &rest);
            plan_rtpmap(plan, (size_t)index, rest, how);
        }
    }
}

static bool format_stripped(const strip_plan *plan, size_t index, moat_sdp_span format)
{
    uint32_t pt;
    return moat_sdp_span_u32(format, 127, &pt) && plan->stripped[index][pt];
}

static bool is_dropped_attribute(moat_sdp_span name, const moat_call_sdp_rewrite *how, int index)
{
    if (index >= 0 && how->replace_crypto[index] && moat_sdp_span_eq(name, "crypto"))
        return true;
    static const char *const always[] = {"ice-ufrag",         "ice-pwd",  "ice-options",
                                         "candidate",         "ice-lite", "end-of-candidates",
                                         "remote-candidates", "rtcp",     "rtcp-mux"};
    for (size_t i = 0; i < G_N_ELEMENTS(always); i++) {
        if (moat_sdp_span_eq(name, always[i]))
            return true;
    }
    const char *proto = how->transport_protocol;
    if (proto && !strstr(proto, "SAVP") && moat_sdp_span_eq(name, "crypto"))
        return true;
    if (proto && !strstr(proto, "TLS") &&
        (moat_sdp_span_eq(name, "fingerprint") || moat_sdp_span_eq(name, "setup") ||
         moat_sdp_span_eq(name, "tls-id")))
        return true;
    return false;
}

/* a=rtpmap/fmtp/rtcp-fb of a stripped payload type. */
static bool is_stripped_format_attribute(moat_sdp_span name, moat_sdp_span rest,
                                         const strip_plan *plan, int index)
{
    if (index < 0 || !(moat_sdp_span_eq(name, "rtpmap") || moat_sdp_span_eq(name, "fmtp") ||
                       moat_sdp_span_eq(name, "rtcp-fb")))
        return false;
    moat_sdp_span pt;
    return moat_sdp_span_next_token(&rest, &pt) && format_stripped(plan, (size_t)index, pt);
}

static void append_span(GString *out, moat_sdp_span span)
{
    g_string_append_len(out, span.p, (gssize)span.len);
}

static const char *address_type(const char *address)
{
    return strchr(address, ':') ? "IP6" : "IP4";
}

/* "o=<user> <id> <version> IN IP4 <address>": the last two fields replaced. */
static void write_origin(GString *out, moat_sdp_span value, const moat_call_sdp_rewrite *how)
{
    moat_sdp_span token;
    g_string_append(out, "o=");
    for (int i = 0; i < 3 && moat_sdp_span_next_token(&value, &token); i++) {
        append_span(out, token);
        g_string_append_c(out, ' ');
    }
    g_string_append_printf(out, "IN %s %s\r\n", address_type(how->address), how->address);
}

static int write_media_line(GString *out, moat_sdp_span value, size_t index,
                            const moat_call_sdp_rewrite *how, const strip_plan *plan, char *error,
                            size_t error_size)
{
    moat_sdp_span kind, port, proto, format;
    moat_sdp_span_next_token(&value, &kind);
    moat_sdp_span_next_token(&value, &port);
    moat_sdp_span_next_token(&value, &proto);
    g_string_append(out, "m=");
    append_span(out, kind);
    g_string_append_printf(out, " %u ", how->ports[index]);
    if (how->media_transport[index] && how->ports[index])
        g_string_append(out, how->media_transport[index]);
    else if (how->transport_protocol && how->ports[index])
        g_string_append(out, how->transport_protocol);
    else
        append_span(out, proto);
    size_t kept = 0;
    while (moat_sdp_span_next_token(&value, &format)) {
        if (format_stripped(plan, index, format))
            continue;
        g_string_append_c(out, ' ');
        append_span(out, format);
        kept++;
    }
    g_string_append(out, "\r\n");
    if (kept == 0) {
        moat_sdp_errorf(error, error_size, "no codec left on m=%.*s after strip", (int)kind.len,
                        kind.p);
        return -1;
    }
    return 0;
}

/* What Moat adds at the end of an m-line's section. */
static void close_media(GString *out, int index, const moat_call_sdp_rewrite *how)
{
    if (index < 0 || how->ports[index] == 0)
        return;
    if (how->replace_crypto[index]) {
        for (size_t i = 0; i < how->n_crypto[index]; i++)
            moat_sdp_crypto_write(out, &how->crypto[index][i]);
    }
    if (how->rtcp_mux[index])
        g_string_append(out, "a=rtcp-mux\r\n");
    else
        g_string_append_printf(out, "a=rtcp:%u\r\n", how->ports[index] + 1u);
}

/* "IN IP4 0.0.0.0" or "IN IP6 ::" (RFC 3264 hold). */
static bool is_hold_address(moat_sdp_span value)
{
    moat_sdp_span net, type, address;
    return moat_sdp_span_next_token(&value, &net) && moat_sdp_span_next_token(&value, &type) &&
           moat_sdp_span_next_token(&value, &address) &&
           (moat_sdp_span_eq(address, "0.0.0.0") || moat_sdp_span_eq(address, "::"));
}

static int rewrite_line(GString *out, moat_sdp_span line, int *index,
                        const moat_call_sdp_rewrite *how, const strip_plan *plan, char *error,
                        size_t error_size)
{
    moat_sdp_span value = {line.p + 2, line.len - 2}, name, rest;
    switch (line.p[0]) {
    case 'o':
        if (!how->replace_origin)
            break;
        write_origin(out, value, how);
        return 0;
    case 'c':
        if (is_hold_address(value))
            break; /* hold stays hold: the party sends nothing there */
        g_string_append_printf(out, "c=IN %s %s\r\n", address_type(how->address), how->address);
        return 0;
    case 'm':
        close_media(out, *index, how);
        *index += 1;
        return write_media_line(out, value, (size_t)*index, how, plan, error, error_size);
    case 'a':
        moat_sdp_span_split(value, ':', &name, &rest);
        if (is_dropped_attribute(name, how, *index) ||
            is_stripped_format_attribute(name, rest, plan, *index))
            return 0;
        break;
    default:
        break;
    }
    append_span(out, line);
    g_string_append(out, "\r\n");
    return 0;
}

int moat_call_sdp_rewrite_text(const char *text, size_t length, const moat_call_sdp_rewrite *how,
                               GString *out, char *error, size_t error_size)
{
    moat_call_sdp parsed;
    if (moat_call_sdp_parse(text, length, &parsed, error, error_size) != 0)
        return -1;
    strip_plan *plan = g_new(strip_plan, 1);
    plan_strip(text, length, how, plan);
    moat_sdp_lines lines;
    moat_sdp_lines_init(&lines, text, length);
    moat_sdp_span line;
    int index = -1, result = 0;
    while (result == 0 && moat_sdp_lines_next(&lines, &line, error, error_size) == 1) {
        if (line.len >= 2)
            result = rewrite_line(out, line, &index, how, plan, error, error_size);
    }
    if (result == 0)
        close_media(out, index, how);
    g_free(plan);
    return result;
}
