/* Checks of an ng request used by call_registry.c (call/ only). Each
 * returns true when the request passes; otherwise it writes the reason to
 * reply->error and returns false. Control thread; no allocation but
 * moat_call_request_transcode_offer's reply->sdp (owned by the reply). */
#ifndef MOAT_CALL_REQUEST_H
#define MOAT_CALL_REQUEST_H

#include "call/call_address.h"
#include "call/call_registry.h"
#include "call/call_sdp.h"
#include "ng/ng_request.h"

#include <stdbool.h>

/* Writes `format` (one %s, filled with `detail` or "") and returns false. */
bool moat_call_request_fail(moat_call_reply *reply, const char *format, const char *detail);
/* call-id, from-tag (and to-tag when `need_to_tag`) and an SDP body. */
bool moat_call_request_check_ids(const moat_ng_request *request, bool need_to_tag,
                                 moat_call_reply *reply);
bool moat_call_request_parse_sdp(const moat_ng_request *request, moat_call_sdp *sdp,
                                 moat_call_reply *reply);
/* Every address the SDP would have a leg send to is allowed (call_address.h). */
bool moat_call_request_check_destinations(const moat_call_destination_policy *destinations,
                                          const moat_call_sdp *sdp, moat_call_reply *reply);
/* ICE=force or a DTLS transport: the request is for a WebRTC party. */
bool moat_call_request_wants_webrtc(const moat_ng_request *request);
bool moat_call_request_check_transport(const moat_ng_request *request, const moat_call_sdp *sdp,
                                       bool to_webrtc, bool offering, moat_call_reply *reply);
/* The offer rewritten with the codecs transcoding adds (reply->sdp). */
bool moat_call_request_transcode_offer(const moat_ng_request *request, moat_call_reply *reply);
/* The reply's SDP, and `growth` bytes a later rewrite may still add to it
 * (transcoding's codec lines), fit an ng reply datagram
 * (MOAT_NG_MAX_REPLY_SDP); else the error "SDP too large for an ng reply"
 * and the SDP dropped. */
bool moat_call_request_check_reply_size(moat_call_reply *reply, size_t growth);

#endif
