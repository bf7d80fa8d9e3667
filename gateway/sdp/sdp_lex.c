/* The SDP parsers' lexical layer: checks the text (length, UTF-8), splits it
 * into bounded lines and tokens, and reads numbers and fixed-size strings from
 * spans, without allocating. */
#include "sdp_lex.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sdp_types.h"

void moat_sdp_errorf(char *error, size_t error_size, const char *format, ...)
{
    if (error == NULL || error_size == 0)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(error, error_size, format, args);
    va_end(args);
}

int moat_sdp_text_check(const char *text, size_t length, size_t max_length, char *error,
                        size_t error_size)
{
    if (text == NULL && length > 0) {
        moat_sdp_errorf(error, error_size, "no text");
        return -1;
    }
    if (length > max_length) {
        moat_sdp_errorf(error, error_size, "longer than %zu bytes", max_length);
        return -1;
    }
    /* g_utf8_validate_len also refuses NUL bytes, so later code may treat
     * copied values as C strings without surprises. */
    if (length > 0 && !g_utf8_validate_len(text, length, NULL)) {
        moat_sdp_errorf(error, error_size, "not valid UTF-8");
        return -1;
    }
    return 0;
}

void moat_sdp_lines_init(moat_sdp_lines *lines, const char *text, size_t length)
{
    lines->text = text;
    lines->length = length;
    lines->pos = 0;
    lines->line_no = 0;
}

int moat_sdp_lines_next(moat_sdp_lines *lines, moat_sdp_span *line, char *error, size_t error_size)
{
    if (lines->pos >= lines->length)
        return 0;
    lines->line_no++;
    const char *start = lines->text + lines->pos;
    size_t left = lines->length - lines->pos;
    const char *newline = memchr(start, '\n', left);
    size_t raw = newline != NULL ? (size_t)(newline - start) : left;
    lines->pos += newline != NULL ? raw + 1 : raw;
    size_t len = raw;
    if (len > 0 && start[len - 1] == '\r')
        len--;
    if (len > MOAT_SDP_MAX_LINE) {
        moat_sdp_errorf(error, error_size, "line %zu: longer than %d bytes", lines->line_no,
                        MOAT_SDP_MAX_LINE);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)start[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            moat_sdp_errorf(error, error_size, "line %zu: control character 0x%02x", lines->line_no,
                            c);
            return -1;
        }
    }
    line->p = start;
    line->len = len;
    return 1;
}

bool moat_sdp_span_next_token(moat_sdp_span *rest, moat_sdp_span *token)
{
    size_t i = 0;
    while (i < rest->len && (rest->p[i] == ' ' || rest->p[i] == '\t'))
        i++;
    size_t start = i;
    while (i < rest->len && rest->p[i] != ' ' && rest->p[i] != '\t')
        i++;
    if (i == start) {
        rest->p += rest->len;
        rest->len = 0;
        return false;
    }
    token->p = rest->p + start;
    token->len = i - start;
    rest->p += i;
    rest->len -= i;
    return true;
}

bool moat_sdp_span_split(moat_sdp_span span, char separator, moat_sdp_span *head,
                         moat_sdp_span *tail)
{
    const char *at = span.len > 0 ? memchr(span.p, separator, span.len) : NULL;
    if (at == NULL) {
        *head = span;
        tail->p = span.p + span.len;
        tail->len = 0;
        return false;
    }
    size_t offset = (size_t)(at - span.p);
    head->p = span.p;
    head->len = offset;
    tail->p = at + 1;
    tail->len = span.len - offset - 1;
    return true;
}

moat_sdp_span moat_sdp_span_trim(moat_sdp_span span)
{
    while (span.len > 0 && (span.p[0] == ' ' || span.p[0] == '\t')) {
        span.p++;
        span.len--;
    }
    while (span.len > 0 && (span.p[span.len - 1] == ' ' || span.p[span.len - 1] == '\t'))
        span.len--;
    return span;
}

bool moat_sdp_span_eq(moat_sdp_span span, const char *literal)
{
    size_t n = strlen(literal);
    return span.len == n && memcmp(span.p, literal, n) == 0;
}

bool moat_sdp_span_eq_nocase(moat_sdp_span span, const char *literal)
{
    size_t n = strlen(literal);
    return span.len == n && g_ascii_strncasecmp(span.p, literal, n) == 0;
}

bool moat_sdp_span_has_prefix(moat_sdp_span span, const char *literal)
{
    size_t n = strlen(literal);
    return span.len >= n && memcmp(span.p, literal, n) == 0;
}

bool moat_sdp_span_u64(moat_sdp_span span, uint64_t *out)
{
    if (span.len == 0 || span.len > 20)
        return false;
    uint64_t value = 0;
    for (size_t i = 0; i < span.len; i++) {
        char c = span.p[i];
        if (c < '0' || c > '9')
            return false;
        uint64_t digit = (uint64_t)(c - '0');
        if (value > (UINT64_MAX - digit) / 10)
            return false;
        value = value * 10 + digit;
    }
    *out = value;
    return true;
}

bool moat_sdp_span_u32(moat_sdp_span span, uint32_t max, uint32_t *out)
{
    uint64_t value;
    if (!moat_sdp_span_u64(span, &value) || value > max)
        return false;
    *out = (uint32_t)value;
    return true;
}

bool moat_sdp_span_copy(moat_sdp_span span, char *dst, size_t size)
{
    if (size == 0 || span.len >= size)
        return false;
    memcpy(dst, span.p, span.len);
    dst[span.len] = '\0';
    return true;
}

static bool is_token_char(unsigned char c)
{
    /* RFC 8866 token-char: %x21 / %x23-27 / %x2A-2B / %x2D-2E / %x30-39 /
     * %x41-5A / %x5E-7E */
    return c == 0x21 || (c >= 0x23 && c <= 0x27) || c == 0x2a || c == 0x2b || c == 0x2d ||
           c == 0x2e || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) ||
           (c >= 0x5e && c <= 0x7e);
}

bool moat_sdp_span_is_token(moat_sdp_span span)
{
    if (span.len == 0)
        return false;
    for (size_t i = 0; i < span.len; i++)
        if (!is_token_char((unsigned char)span.p[i]))
            return false;
    return true;
}

bool moat_sdp_span_is_ice_chars(moat_sdp_span span)
{
    if (span.len == 0)
        return false;
    for (size_t i = 0; i < span.len; i++) {
        char c = span.p[i];
        if (!g_ascii_isalnum(c) && c != '+' && c != '/')
            return false;
    }
    return true;
}
