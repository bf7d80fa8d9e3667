/* The ng `codec-transcode` rewrite of an offer (transcode_sdp.h) and the
 * line splitting it shares with the codec reader. */
#include "sdp/sdp_lex.h"
#include "sdp/sdp_types.h"
#include "transcode/transcode_sdp.h"
#include "transcode/transcode_sdp_section.h"

#include <stdio.h>
#include <string.h>

int moat_transcode_sdp_lines_read(const char *text, size_t length, moat_transcode_sdp_lines *out,
                                  char *error, size_t error_size)
{
    memset(out, 0, sizeof *out);
    if (moat_sdp_text_check(text, length, MOAT_TRANSCODE_SDP_MAX_LENGTH, error, error_size) != 0)
        return -1;
    out->lines = g_array_new(FALSE, FALSE, sizeof(moat_sdp_span));
    moat_sdp_lines lines;
    moat_sdp_lines_init(&lines, text, length);
    moat_sdp_span line;
    int more;
    while ((more = moat_sdp_lines_next(&lines, &line, error, error_size)) == 1) {
        if (line.len == 0)
            continue;
        if (line.len < 2 || line.p[1] != '=') {
            moat_sdp_errorf(error, error_size, "line is not <type>=<value>");
            more = -1;
            break;
        }
        if (line.p[0] == 'm') {
            if (out->n_sections == MOAT_TRANSCODE_SDP_MAX_SECTIONS) {
                moat_sdp_errorf(error, error_size, "more than %d m-lines",
                                MOAT_TRANSCODE_SDP_MAX_SECTIONS);
                more = -1;
                break;
            }
            out->section_start[out->n_sections++] = out->lines->len;
        }
        g_array_append_val(out->lines, line);
    }
    if (more < 0) {
        moat_transcode_sdp_lines_clear(out);
        return -1;
    }
    return 0;
}

void moat_transcode_sdp_lines_clear(moat_transcode_sdp_lines *lines)
{
    if (lines->lines)
        g_array_unref(lines->lines);
    lines->lines = NULL;
}

int moat_transcode_sdp_lines_section(const char *text, size_t length, size_t media_index,
                                     moat_transcode_sdp_lines *lines, size_t *first, size_t *end,
                                     char *error, size_t error_size)
{
    if (moat_transcode_sdp_lines_read(text, length, lines, error, error_size) != 0)
        return -1;
    if (media_index >= lines->n_sections) {
        moat_sdp_errorf(error, error_size, "SDP has no m-line %zu", media_index);
        moat_transcode_sdp_lines_clear(lines);
        return -1;
    }
    *first = lines->section_start[media_index];
    *end = media_index + 1 < lines->n_sections ? lines->section_start[media_index + 1]
                                               : lines->lines->len;
    return 0;
}

/* ---- adding codecs to one m-section ---- */

typedef struct {
    const char *name;
    uint8_t static_type;  /* 0xff: dynamic */
    uint32_t clock_rate;  /* RTP clock */
    const char *encoding; /* rtpmap text after the payload type */
} addable_codec;

static const addable_codec addable[] = {
    {"PCMU", 0, 8000, "PCMU/8000"},
    {"PCMA", 8, 8000, "PCMA/8000"},
    {"G722", 9, 8000, "G722/8000"},
    {"opus", 0xff, 48000, "opus/48000/2"},
};

static const addable_codec *addable_of(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(addable); i++) {
        if (g_ascii_strcasecmp(name, addable[i].name) == 0)
            return &addable[i];
    }
    return NULL;
}

typedef struct {
    bool used[128];
    size_t n_formats; /* the m-line's, added ones included */
    GString *formats; /* " 0 96" appended to m= */
    GString *rtpmaps; /* a= lines appended to the section */
} section_edit;

static int free_type(section_edit *edit, uint8_t preferred)
{
    if (edit->n_formats >= MOAT_TRANSCODE_SDP_MAX_CODECS)
        return -1;
    if (preferred < 128 && !edit->used[preferred])
        return preferred;
    for (int pt = 96; pt < 128; pt++) {
        if (!edit->used[pt])
            return pt;
    }
    return -1;
}

static void add_format(section_edit *edit, int pt, const char *encoding)
{
    edit->used[pt] = true;
    edit->n_formats++;
    g_string_append_printf(edit->formats, " %d", pt);
    g_string_append_printf(edit->rtpmaps, "a=rtpmap:%d %s\r\n", pt, encoding);
}

static bool has_codec(const moat_transcode_sdp_codecs *codecs, const char *name, uint32_t clock)
{
    for (size_t i = 0; i < codecs->n_codecs; i++) {
        if (g_ascii_strcasecmp(codecs->codecs[i].name, name) == 0 &&
            (!clock || codecs->codecs[i].clock_rate == clock))
            return true;
    }
    return false;
}

static void add_event(section_edit *edit, moat_transcode_sdp_codecs *codecs, uint32_t clock)
{
    if (!has_codec(codecs, "telephone-event", 0) || has_codec(codecs, "telephone-event", clock))
        return;
    int pt = free_type(edit, 0xff);
    if (pt < 0)
        return;
    char encoding[48];
    snprintf(encoding, sizeof encoding, "telephone-event/%u", clock);
    add_format(edit, pt, encoding);
    g_string_append_printf(edit->rtpmaps, "a=fmtp:%d 0-16\r\n", pt);
    moat_transcode_sdp_codec *added = &codecs->codecs[codecs->n_codecs++];
    *added = (moat_transcode_sdp_codec){"telephone-event", clock, 1, (uint8_t)pt};
}

static void plan_additions(const moat_transcode_sdp_section *section, const char *const *add,
                           size_t n_add, section_edit *edit)
{
    moat_transcode_sdp_codecs codecs;
    moat_transcode_sdp_section_codecs(section, &codecs);
    for (size_t i = 0; i < section->n_formats; i++)
        edit->used[section->formats[i]] = true;
    edit->n_formats = section->n_formats;
    for (size_t i = 0; i < n_add; i++) {
        const addable_codec *codec = addable_of(add[i]);
        if (!codec || !moat_transcoder_supports(codec->name) ||
            has_codec(&codecs, codec->name, codec->clock_rate))
            continue;
        int pt = free_type(edit, codec->static_type);
        if (pt < 0)
            continue;
        add_format(edit, pt, codec->encoding);
        codecs.codecs[codecs.n_codecs++] =
            (moat_transcode_sdp_codec){"", codec->clock_rate, 1, (uint8_t)pt};
        g_strlcpy(codecs.codecs[codecs.n_codecs - 1].name, codec->name, 32);
        add_event(edit, &codecs, codec->clock_rate);
    }
}

static void append_line(GString *out, moat_sdp_span line)
{
    g_string_append_len(out, line.p, (gssize)line.len);
    g_string_append(out, "\r\n");
}

static int rewrite_section(const moat_sdp_span *lines, size_t n_lines, const char *const *add,
                           size_t n_add, GString *out, char *error, size_t error_size)
{
    moat_transcode_sdp_section section;
    if (moat_transcode_sdp_section_read(lines, n_lines, &section, error, error_size) != 0)
        return -1;
    section_edit edit = {.formats = g_string_new(NULL), .rtpmaps = g_string_new(NULL)};
    /* An m= line with no room left for " 127" (the lexer's bound) is kept. */
    if (section.audio && lines[0].len + 5 * MOAT_TRANSCODE_SDP_MAX_CODECS < MOAT_SDP_MAX_LINE)
        plan_additions(&section, add, n_add, &edit);
    g_string_append_len(out, lines[0].p, (gssize)lines[0].len);
    g_string_append(out, edit.formats->str);
    g_string_append(out, "\r\n");
    for (size_t i = 1; i < n_lines; i++)
        append_line(out, lines[i]);
    g_string_append(out, edit.rtpmaps->str);
    g_string_free(edit.formats, TRUE);
    g_string_free(edit.rtpmaps, TRUE);
    return 0;
}

int moat_transcode_sdp_add_codecs(const char *text, size_t length, const char *const *add,
                                  size_t n_add, GString *out, char *error, size_t error_size)
{
    moat_transcode_sdp_lines lines;
    if (moat_transcode_sdp_lines_read(text, length, &lines, error, error_size) != 0)
        return -1;
    const moat_sdp_span *all = (const moat_sdp_span *)(void *)lines.lines->data;
    size_t first_media = lines.n_sections ? lines.section_start[0] : lines.lines->len;
    for (size_t i = 0; i < first_media; i++)
        append_line(out, all[i]);
    int result = 0;
    for (size_t s = 0; s < lines.n_sections && result == 0; s++) {
        size_t end = s + 1 < lines.n_sections ? lines.section_start[s + 1] : lines.lines->len;
        result = rewrite_section(all + lines.section_start[s], end - lines.section_start[s], add,
                                 n_add, out, error, error_size);
    }
    moat_transcode_sdp_lines_clear(&lines);
    return result;
}
