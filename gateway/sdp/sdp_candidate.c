/* a=candidate values (RFC 8839 §5.1): parses one with each field checked (for
 * the offer and trickle-fragment parsers) and formats one back into SDP. */
#include "sdp.h"
#include "sdp_candidate.h"

#include <stdio.h>
#include <string.h>

static bool is_address_char(char c)
{
    /* IPv4, IPv6 (hex, ':' and '.') and host names such as the mDNS
     * "<uuid>.local" browsers put in host candidates. Anything else is
     * refused so that a stored address can be written back into SDP as is. */
    return g_ascii_isalnum(c) || c == '.' || c == ':' || c == '-';
}

static bool address_valid(moat_sdp_span span)
{
    if (span.len == 0)
        return false;
    for (size_t i = 0; i < span.len; i++)
        if (!is_address_char(span.p[i]))
            return false;
    return true;
}

static bool type_known(const char *type)
{
    return strcmp(type, "host") == 0 || strcmp(type, "srflx") == 0 || strcmp(type, "prflx") == 0 ||
           strcmp(type, "relay") == 0;
}

static bool copy_lower(moat_sdp_span span, char *dst, size_t size)
{
    if (!moat_sdp_span_copy(span, dst, size))
        return false;
    for (char *c = dst; *c != '\0'; c++)
        *c = g_ascii_tolower(*c);
    return true;
}

int moat_sdp_candidate_parse_span(moat_sdp_span value, moat_sdp_candidate *out, const char **why)
{
    moat_sdp_candidate c;
    memset(&c, 0, sizeof c);
    moat_sdp_span rest = value, token;
    uint32_t number;

    if (moat_sdp_span_has_prefix(rest, "candidate:")) {
        rest.p += 10;
        rest.len -= 10;
    }
    *why = "bad foundation";
    if (!moat_sdp_span_next_token(&rest, &token) || token.len > 32 ||
        !moat_sdp_span_is_ice_chars(token) || !moat_sdp_span_copy(token, c.foundation, 33))
        return -1;
    *why = "bad component";
    if (!moat_sdp_span_next_token(&rest, &token) || !moat_sdp_span_u32(token, 256, &number) ||
        number == 0)
        return -1;
    c.component = number;
    *why = "bad transport";
    if (!moat_sdp_span_next_token(&rest, &token) || !moat_sdp_span_is_token(token) ||
        !copy_lower(token, c.transport, sizeof c.transport))
        return -1;
    *why = "bad priority";
    if (!moat_sdp_span_next_token(&rest, &token) ||
        !moat_sdp_span_u32(token, UINT32_MAX, &c.priority))
        return -1;
    *why = "bad address";
    if (!moat_sdp_span_next_token(&rest, &token) || !address_valid(token) ||
        !moat_sdp_span_copy(token, c.address, sizeof c.address))
        return -1;
    *why = "bad port";
    if (!moat_sdp_span_next_token(&rest, &token) || !moat_sdp_span_u32(token, 65535, &number))
        return -1;
    c.port = (uint16_t)number;
    *why = "expected typ";
    if (!moat_sdp_span_next_token(&rest, &token) || !moat_sdp_span_eq(token, "typ"))
        return -1;
    *why = "bad type";
    if (!moat_sdp_span_next_token(&rest, &token) || !copy_lower(token, c.type, sizeof c.type) ||
        !type_known(c.type))
        return -1;
    /* raddr, rport, generation, tcptype, ufrag, network-id, ... are not
     * needed by an ICE-lite agent; they are skipped whatever they hold. */
    *out = c;
    *why = NULL;
    return 0;
}

int moat_sdp_candidate_parse(const char *value, moat_sdp_candidate *out)
{
    if (value == NULL || out == NULL)
        return -1;
    size_t len = strnlen(value, MOAT_SDP_MAX_LINE + 1);
    if (len > MOAT_SDP_MAX_LINE || !g_utf8_validate_len(value, len, NULL))
        return -1;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)value[i] < 0x20 && value[i] != '\t')
            return -1;
    moat_sdp_span span = {value, len};
    const char *why;
    return moat_sdp_candidate_parse_span(span, out, &why);
}

int moat_sdp_candidate_format(const moat_sdp_candidate *candidate, char *buf, size_t size)
{
    if (candidate == NULL || buf == NULL || size == 0)
        return -1;
    buf[0] = '\0';
    size_t flen = strnlen(candidate->foundation, sizeof candidate->foundation);
    size_t tlen = strnlen(candidate->transport, sizeof candidate->transport);
    size_t alen = strnlen(candidate->address, sizeof candidate->address);
    size_t ylen = strnlen(candidate->type, sizeof candidate->type);
    /* Fields are checked as the parser would so that nothing the caller
     * filled in can break the line it lands on. */
    if (flen == 0 || flen > 32 || tlen == sizeof candidate->transport ||
        alen == sizeof candidate->address || ylen == sizeof candidate->type ||
        candidate->component > 256)
        return -1;
    if (!moat_sdp_span_is_ice_chars((moat_sdp_span){candidate->foundation, flen}) ||
        !address_valid((moat_sdp_span){candidate->address, alen}))
        return -1;
    if (tlen > 0 && !moat_sdp_span_is_token((moat_sdp_span){candidate->transport, tlen}))
        return -1;
    if (ylen > 0 && !type_known(candidate->type))
        return -1;
    int n =
        snprintf(buf, size, "%s %u %s %u %s %u typ %s", candidate->foundation,
                 candidate->component != 0 ? candidate->component : 1u,
                 tlen > 0 ? candidate->transport : "udp", candidate->priority, candidate->address,
                 (unsigned)candidate->port, ylen > 0 ? candidate->type : "host");
    if (n < 0 || (size_t)n >= size) {
        buf[0] = '\0';
        return -1;
    }
    return n;
}
