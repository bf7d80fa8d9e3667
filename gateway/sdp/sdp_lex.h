/* The lexical layer shared by the SDP parsers: splitting hostile text into
 * bounded lines, lines into tokens, tokens into numbers and fixed-size
 * strings. Nothing here allocates; every read is bounded by a span's length. */
#ifndef MOAT_SDP_LEX_H
#define MOAT_SDP_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

/* A view into the text: not NUL-terminated. */
typedef struct {
    const char *p;
    size_t len;
} moat_sdp_span;

typedef struct {
    const char *text;
    size_t length;
    size_t pos;
    size_t line_no; /* 1-based number of the line last returned */
} moat_sdp_lines;

/* Rejects text that is too long or not UTF-8 (which includes NUL bytes). */
int moat_sdp_text_check(const char *text, size_t length, size_t max_length, char *error,
                        size_t error_size);

void moat_sdp_lines_init(moat_sdp_lines *lines, const char *text, size_t length);

/* Returns 1 and the next line without its CRLF or LF, 0 at the end, or -1
 * with a message naming the line when it is too long or holds control
 * characters (a lone CR included). */
int moat_sdp_lines_next(moat_sdp_lines *lines, moat_sdp_span *line, char *error, size_t error_size);

/* Splits off the next token separated by spaces; false when none is left. */
bool moat_sdp_span_next_token(moat_sdp_span *rest, moat_sdp_span *token);

/* Splits at the first `separator`: head before it, tail after it. False (and
 * head = the whole span, tail empty) when the separator is absent. */
bool moat_sdp_span_split(moat_sdp_span span, char separator, moat_sdp_span *head,
                         moat_sdp_span *tail);

moat_sdp_span moat_sdp_span_trim(moat_sdp_span span);
bool moat_sdp_span_eq(moat_sdp_span span, const char *literal);
bool moat_sdp_span_eq_nocase(moat_sdp_span span, const char *literal);
bool moat_sdp_span_has_prefix(moat_sdp_span span, const char *literal);

/* Decimal digits only (no sign, no spaces), value <= max. */
bool moat_sdp_span_u32(moat_sdp_span span, uint32_t max, uint32_t *out);
bool moat_sdp_span_u64(moat_sdp_span span, uint64_t *out);

/* Copies into dst as a NUL-terminated string; false if it does not fit. */
bool moat_sdp_span_copy(moat_sdp_span span, char *dst, size_t size);

/* RFC 8866 token-char and RFC 8839 ice-char checks over a whole span. */
bool moat_sdp_span_is_token(moat_sdp_span span);
bool moat_sdp_span_is_ice_chars(moat_sdp_span span);

void moat_sdp_errorf(char *error, size_t error_size, const char *format, ...) G_GNUC_PRINTF(3, 4);

#endif
