/* Owns the transcoding decisions of the call layer's offer and answer
 * (call_transcode_plan.h): SDP in, transcoders on streams out. */
#include "call/call_transcode_plan.h"

#include "call/call_transcode.h"
#include "transcode/transcode_sdp.h"
#include "transcode/transcoder.h"

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

static const char *const refusal_names[MOAT_CALL_TRANSCODE_REFUSALS] = {
    [MOAT_CALL_TRANSCODE_UNSUPPORTED] = "unsupported",
    [MOAT_CALL_TRANSCODE_LIMIT] = "limit",
    [MOAT_CALL_TRANSCODE_FAILED] = "failed",
};

const char *moat_call_transcode_refusal_name(moat_call_transcode_refusal reason)
{
    return reason < MOAT_CALL_TRANSCODE_REFUSALS ? refusal_names[reason] : "unknown";
}

/* No transcoder on the m-line: whatever transcoder an earlier answer put
 * on the stream is taken off it (else it would eat the new codec's
 * packets). */
static void take_off(moat_call_stream *stream, size_t index,
                     const moat_call_transcode_limits *limits)
{
    if (limits->transcoded[index])
        moat_call_stream_set_transcode(stream, NULL);
    limits->transcoded[index] = false;
}

/* The m-line is relayed as is although its codecs differ: counted, and
 * the answer's reply warns. */
static bool relay_as_is(moat_call_stream *stream, size_t index,
                        const moat_call_transcode_limits *limits,
                        moat_call_transcode_refusal reason, const char *error, char *warning,
                        size_t warning_size)
{
    take_off(stream, index, limits);
    limits->refused[reason]++;
    snprintf(warning, warning_size, "m-line %zu relayed as is: %s", index, error);
    return false;
}

/* The transcoders of one m-line, or none; false with a warning (and none). */
static bool plan_stream(const char *offer_sdp, const moat_ng_request *request, size_t index,
                        moat_call_stream *stream, int offerer,
                        const moat_call_transcode_limits *limits, unsigned *room, char **sdp,
                        char *warning, size_t warning_size)
{
    moat_transcode_sdp_codecs offered, answered;
    moat_transcode_plan plan;
    char error[160];
    if (moat_transcode_sdp_codecs_of(offer_sdp, strlen(offer_sdp), index, &offered, error,
                                     sizeof error) != 0 ||
        moat_transcode_sdp_codecs_of(request->sdp, request->sdp_length, index, &answered, error,
                                     sizeof error) != 0 ||
        moat_transcode_plan_make(&offered, &answered, &plan, error, sizeof error) != 0)
        return relay_as_is(stream, index, limits, MOAT_CALL_TRANSCODE_UNSUPPORTED, error, warning,
                           warning_size);
    if (!plan.transcode) {
        take_off(stream, index, limits);
        return true;
    }
    if (*room < 2) {
        snprintf(error, sizeof error, "[call] max_transcoders (%u pipelines) reached",
                 limits->max_pipelines);
        return relay_as_is(stream, index, limits, MOAT_CALL_TRANSCODE_LIMIT, error, warning,
                           warning_size);
    }
    moat_transcoder_codec codecs[2];
    codecs[offerer & 1] = plan.sides[0];
    codecs[1 - (offerer & 1)] = plan.sides[1];
    GString *out = g_string_new(NULL);
    if (moat_transcode_sdp_restrict(*sdp, strlen(*sdp), index, &plan.sides[0], out, error,
                                    sizeof error) != 0) {
        g_string_free(out, TRUE);
        return relay_as_is(stream, index, limits, MOAT_CALL_TRANSCODE_UNSUPPORTED, error, warning,
                           warning_size);
    }
    moat_call_transcode *transcode = moat_call_transcode_new(codecs, error, sizeof error);
    if (!transcode) {
        g_string_free(out, TRUE);
        return relay_as_is(stream, index, limits, MOAT_CALL_TRANSCODE_FAILED, error, warning,
                           warning_size);
    }
    moat_call_stream_set_transcode(stream, transcode);
    limits->transcoded[index] = true;
    *room -= 2;
    g_free(*sdp);
    *sdp = g_string_free(out, FALSE);
    return true;
}

/* The pipelines this answer may run: max_pipelines less those live now
 * that are not this answer's m-lines' own (they are replaced; those of
 * earlier answers still stopping count). */
static unsigned answer_room(const moat_call_transcode_limits *limits, size_t n_streams)
{
    unsigned own = 0;
    for (size_t i = 0; i < n_streams; i++)
        own += limits->transcoded[i] ? 2 : 0;
    unsigned live = moat_transcoder_live();
    unsigned others = live > own ? live - own : 0;
    return limits->max_pipelines > others ? limits->max_pipelines - others : 0;
}

void moat_call_transcode_answer(const char *offer_sdp, const moat_ng_request *request,
                                moat_call_stream *const *streams, size_t n_streams, int offerer,
                                const moat_call_transcode_limits *limits, char **sdp, char *warning,
                                size_t warning_size)
{
    if (!*sdp)
        return;
    unsigned room = answer_room(limits, n_streams);
    for (size_t i = 0; i < n_streams; i++) {
        if (!offer_sdp || !limits->allowed)
            take_off(streams[i], i, limits); /* relayed as is, as asked */
        else
            plan_stream(offer_sdp, request, i, streams[i], offerer, limits, &room, sdp, warning,
                        warning_size);
    }
}
