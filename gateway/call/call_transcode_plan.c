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

/* The m-line is relayed as is: whatever transcoder an earlier answer put on
 * the stream is taken off it (else it would eat the new codec's packets). */
static bool relay_as_is(moat_call_stream *stream, size_t index, const char *error, char *warning,
                        size_t warning_size)
{
    moat_call_stream_set_transcode(stream, NULL);
    snprintf(warning, warning_size, "m-line %zu relayed as is: %s", index, error);
    return false;
}

/* The transcoders of one m-line, or none; false with a warning (and none). */
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
        moat_transcode_plan_make(&offered, &answered, &plan, error, sizeof error) != 0)
        return relay_as_is(stream, index, error, warning, warning_size);
    if (!plan.transcode) {
        moat_call_stream_set_transcode(stream, NULL);
        return true;
    }
    moat_transcoder_codec codecs[2];
    codecs[offerer & 1] = plan.sides[0];
    codecs[1 - (offerer & 1)] = plan.sides[1];
    GString *out = g_string_new(NULL);
    moat_call_transcode *transcode = NULL;
    if (moat_transcode_sdp_restrict(*sdp, strlen(*sdp), index, &plan.sides[0], out, error,
                                    sizeof error) != 0 ||
        !(transcode = moat_call_transcode_new(codecs, error, sizeof error))) {
        g_string_free(out, TRUE);
        return relay_as_is(stream, index, error, warning, warning_size);
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
