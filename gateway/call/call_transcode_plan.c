/* Owns the transcoding decisions of the call layer's offer and answer
 * (call_transcode_plan.h): SDP in, transcoders on streams out. */
#include "call/call_transcode_plan.h"

#include "call/call_transcode.h"
#include "transcode/transcode_sdp.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

bool moat_call_transcode_offer(const moat_ng_request *request, char **sdp, char *error,
                               size_t error_size)
{
    if (request->codec_transcode.count == 0)
        return true;
    GString *out = g_string_new(NULL);
    if (moat_transcode_sdp_add_codecs(*sdp, strlen(*sdp), request->codec_transcode.names,
                                      request->codec_transcode.count, out, error,
                                      error_size) != 0) {
        g_string_free(out, TRUE);
        return false;
    }
    g_free(*sdp);
    *sdp = g_string_free(out, FALSE);
    return true;
}

/* The transcoders of one m-line, or none; false with a warning. */
static bool plan_stream(const char *offer_sdp, const moat_ng_request *request, size_t index,
                        moat_call_stream *stream, int offerer, char **sdp, char *warning,
                        size_t warning_size)
{
    moat_transcode_sdp_codecs offered, answered;
    moat_transcode_plan plan;
    char error[160];
    if (moat_transcode_sdp_codecs_of(offer_sdp, strlen(offer_sdp), index, &offered, error,
                                     sizeof error) != 0 ||
        moat_transcode_sdp_codecs_of(request->sdp, request->sdp_length, index, &answered, error,
                                     sizeof error) != 0 ||
        moat_transcode_plan_make(&offered, &answered, &plan, error, sizeof error) != 0) {
        snprintf(warning, warning_size, "m-line %zu relayed as is: %s", index, error);
        return false;
    }
    if (!plan.transcode) {
        moat_call_stream_set_transcode(stream, NULL);
        return true;
    }
    moat_transcoder_codec codecs[2];
    codecs[offerer & 1] = plan.sides[0];
    codecs[1 - (offerer & 1)] = plan.sides[1];
    GString *out = g_string_new(NULL);
    if (moat_transcode_sdp_restrict(*sdp, strlen(*sdp), index, &plan.sides[0], out, error,
                                    sizeof error) != 0) {
        snprintf(warning, warning_size, "m-line %zu relayed as is: %s", index, error);
        g_string_free(out, TRUE);
        return false;
    }
    moat_call_transcode *transcode = moat_call_transcode_new(codecs, error, sizeof error);
    if (!transcode) {
        snprintf(warning, warning_size, "m-line %zu relayed as is: %s", index, error);
        g_string_free(out, TRUE);
        return false;
    }
    moat_call_stream_set_transcode(stream, transcode);
    g_free(*sdp);
    *sdp = g_string_free(out, FALSE);
    return true;
}

void moat_call_transcode_answer(const char *offer_sdp, const moat_ng_request *request,
                                moat_call_stream *const *streams, size_t n_streams, int offerer,
                                char **sdp, char *warning, size_t warning_size)
{
    if (!offer_sdp || !*sdp)
        return;
    for (size_t i = 0; i < n_streams; i++)
        plan_stream(offer_sdp, request, i, streams[i], offerer, sdp, warning, warning_size);
}
