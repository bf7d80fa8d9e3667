/* Private to transcode_sdp*.c: an SDP split into lines and m-sections, and
 * one m-section's formats and rtpmaps. */
#ifndef MOAT_TRANSCODE_SDP_SECTION_H
#define MOAT_TRANSCODE_SDP_SECTION_H

#include "sdp/sdp_lex.h"
#include "transcode/transcode_sdp.h"

#define MOAT_TRANSCODE_SDP_MAX_SECTIONS 16

typedef struct {
    GArray *lines;                                         /* moat_sdp_span into the text */
    size_t section_start[MOAT_TRANSCODE_SDP_MAX_SECTIONS]; /* index of each m= line */
    size_t n_sections;
} moat_transcode_sdp_lines;

int moat_transcode_sdp_lines_read(const char *text, size_t length, moat_transcode_sdp_lines *out,
                                  char *error, size_t error_size);
void moat_transcode_sdp_lines_clear(moat_transcode_sdp_lines *lines);
/* moat_transcode_sdp_lines_read, then m-section media_index's lines are
 * [*first, *end) of lines->lines. On error *lines is already cleared. */
int moat_transcode_sdp_lines_section(const char *text, size_t length, size_t media_index,
                                     moat_transcode_sdp_lines *lines, size_t *first, size_t *end,
                                     char *error, size_t error_size);

typedef struct {
    bool audio;
    uint8_t formats[MOAT_TRANSCODE_SDP_MAX_CODECS];
    size_t n_formats;
    moat_transcode_sdp_codec rtpmaps[MOAT_TRANSCODE_SDP_MAX_CODECS];
    size_t n_rtpmaps;
} moat_transcode_sdp_section;

/* lines[0] is the m= line, the rest its section. */
int moat_transcode_sdp_section_read(const moat_sdp_span *lines, size_t n_lines,
                                    moat_transcode_sdp_section *out, char *error,
                                    size_t error_size);
void moat_transcode_sdp_section_codecs(const moat_transcode_sdp_section *section,
                                       moat_transcode_sdp_codecs *out);

#endif
