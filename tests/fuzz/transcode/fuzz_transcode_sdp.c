/* The transcoder's SDP reading and offer rewrite on hostile text: every
 * m-line's codecs, a plan between the first two m-lines, and the
 * codec-transcode rewrite, whose output must read back. Compiled with the
 * SDP sources alone: GStreamer is replaced by the list of codecs a full
 * installation supports. */
#include "transcode/transcode_sdp.h"

#include <stdio.h>
#include <stdlib.h>

bool moat_transcoder_supports(const char *name)
{
    static const char *const supported[] = {"opus", "PCMU", "PCMA", "G722"};
    for (size_t i = 0; name && i < G_N_ELEMENTS(supported); i++) {
        if (g_ascii_strcasecmp(name, supported[i]) == 0)
            return true;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char error[160];
    moat_transcode_sdp_codecs codecs[2];
    size_t read = 0;
    for (size_t i = 0; i < 4; i++) {
        moat_transcode_sdp_codecs *slot = &codecs[read < 2 ? read : 1];
        if (moat_transcode_sdp_codecs_of(text, size, i, slot, error, sizeof error) == 0)
            read++;
    }
    if (read >= 2) {
        moat_transcode_plan plan;
        moat_transcode_plan_make(&codecs[0], &codecs[1], &plan, error, sizeof error);
    }
    static const char *const add[] = {"opus", "PCMU", "PCMA", "G722"};
    GString *out = g_string_new(NULL);
    if (moat_transcode_sdp_add_codecs(text, size, add, 4, out, error, sizeof error) == 0 &&
        out->len > 0 &&
        moat_transcode_sdp_codecs_of(out->str, out->len, 0, &codecs[0], error, sizeof error) != 0 &&
        moat_transcode_sdp_codecs_of(text, size, 0, &codecs[1], error, sizeof error) == 0) {
        fprintf(stderr, "rewrite unreadable: %s\n", error);
        abort(); /* the rewrite broke an m-line that read before */
    }
    g_string_truncate(out, 0);
    static const moat_transcoder_codec pcmu = {"PCMU", 8000, 1, 0, 101, 8000};
    if (moat_transcode_sdp_restrict(text, size, 0, &pcmu, out, error, sizeof error) == 0 &&
        moat_transcode_sdp_codecs_of(out->str, out->len, 0, &codecs[0], error, sizeof error) != 0 &&
        moat_transcode_sdp_codecs_of(text, size, 0, &codecs[1], error, sizeof error) == 0) {
        fprintf(stderr, "restricted unreadable: %s\n", error);
        abort();
    }
    g_string_free(out, TRUE);
    return 0;
}
