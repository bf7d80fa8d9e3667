/* Where the call layer's offer/answer meet transcoding: the ng
 * codec-transcode codecs added to an offer, and at the answer, per m-line,
 * a transcoder pair on the stream when the answerer chose a codec the
 * offerer lacks (the SDP back to the offerer then names the offerer's
 * codec). Control thread only. */
#ifndef MOAT_CALL_TRANSCODE_PLAN_H
#define MOAT_CALL_TRANSCODE_PLAN_H

#include "call/call_media.h"
#include "ng/ng_request.h"

#include <stdbool.h>
#include <stddef.h>

/* Replaces *sdp (g_malloc'ed, the rewritten offer) when the request names
 * codecs to transcode to. False with a message on malformed SDP. */
bool moat_call_transcode_offer(const moat_ng_request *request, char **sdp, char *error,
                               size_t error_size);

/* offer_sdp: the offer as the offerer sent it; the request carries the
 * answer; *sdp is the rewritten answer for the offerer (replaced when a
 * stream is transcoded). Streams whose codecs match get no transcoder.
 * Problems (no common codec, a failed pipeline) become a warning and leave
 * the stream without a transcoder, relayed as is (one an earlier answer
 * set up is taken off). */
void moat_call_transcode_answer(const char *offer_sdp, const moat_ng_request *request,
                                moat_call_stream *const *streams, size_t n_streams, int offerer,
                                char **sdp, char *warning, size_t warning_size);

#endif
