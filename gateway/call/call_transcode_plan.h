/* Where the call layer's offer/answer meet transcoding: the ng
 * codec-transcode codecs added to an offer, and at the answer, per m-line,
 * a transcoder pair on the stream when the offer asked for transcoding and
 * the answerer chose a codec the offerer lacks (the SDP back to the
 * offerer then names the offerer's codec), within [call] max_transcoders.
 * Control thread only. */
#ifndef MOAT_CALL_TRANSCODE_PLAN_H
#define MOAT_CALL_TRANSCODE_PLAN_H

#include "call/call_media.h"
#include "ng/ng_request.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Replaces *sdp (g_malloc'ed, the rewritten offer) when the request names
 * codecs to transcode to. False with a message on malformed SDP. */
bool moat_call_transcode_offer(const moat_ng_request *request, char **sdp, char *error,
                               size_t error_size);

/* Why an m-line the answer would transcode is relayed as is instead. */
typedef enum {
    MOAT_CALL_TRANSCODE_UNSUPPORTED = 0, /* no codec both sides can be given, SDP it cannot read */
    MOAT_CALL_TRANSCODE_LIMIT,           /* [call] max_transcoders pipelines run already */
    MOAT_CALL_TRANSCODE_FAILED,          /* the pipelines (or their threads) did not start */
    MOAT_CALL_TRANSCODE_REFUSALS
} moat_call_transcode_refusal;

const char *moat_call_transcode_refusal_name(moat_call_transcode_refusal reason);

/* What an answer may start. */
typedef struct {
    /* Transcoding was asked for: an offer of the call carried
     * codec-transcode, or a party is on a WebRTC session of Moat's (whose
     * codec Moat's own answer chose). Else every m-line is relayed as is,
     * whatever the answer's codecs. */
    bool allowed;
    /* [call] max_transcoders: pipelines (two per transcoded m-line) live
     * at most, counting those still stopping; 0: none. */
    unsigned max_pipelines;
    /* transcoded[i]: m-line i has a pair of this call's (kept up to date). */
    bool *transcoded;
    uint64_t *refused; /* MOAT_CALL_TRANSCODE_REFUSALS counters */
} moat_call_transcode_limits;

/* offer_sdp: the offer as the offerer sent it; the request carries the
 * answer; *sdp is the rewritten answer for the offerer (replaced when a
 * stream is transcoded). Streams whose codecs match, and every stream when
 * transcoding was not asked for, get no transcoder. Problems (no common
 * codec, max_pipelines reached, a failed pipeline or thread) become a
 * warning, are counted, and leave the stream without a transcoder, relayed
 * as is (one an earlier answer set up is taken off). A stream's own pair
 * makes room for its replacement (a re-answer at the limit keeps
 * transcoding). */
void moat_call_transcode_answer(const char *offer_sdp, const moat_ng_request *request,
                                moat_call_stream *const *streams, size_t n_streams, int offerer,
                                const moat_call_transcode_limits *limits, char **sdp, char *warning,
                                size_t warning_size);

#endif
