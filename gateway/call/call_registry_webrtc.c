/* Owns the WebRTC side of a call's signalling (call_registry_private.h):
 * a WebRTC party's session made from its offer, Moat's offer to a WebRTC
 * party and the session made from its answer, and a renegotiation (a
 * re-INVITE: hold, a session refresh) that keeps a running session. */
#include "call/call_registry_private.h"

#include "call/call_request.h"
#include "call/call_webrtc.h"

#include <glib.h>
#include <string.h>

/* Where an answer's media may go: a WebRTC answer only to Moat's WebRTC
 * offer, or repeated by a party whose session already runs (its session
 * talks to the party; the SDP's addresses are never destinations); every
 * other answer's addresses become the legs' destinations and must pass the
 * destination policy. A WebRTC-looking answer to a plain offer would
 * otherwise skip that check and aim a leg anywhere, Moat's own ng socket
 * included. */
bool moat_call_check_answer_media(moat_call *call, int answerer, const moat_ng_request *request,
                                  const moat_call_sdp *sdp, moat_call_reply *reply)
{
    if (!moat_call_sdp_is_webrtc(sdp))
        return moat_call_request_check_destinations(&call->registry->destinations, sdp, reply);
    if (!call->offered[answerer] && !call->webrtc[answerer])
        return moat_call_request_fail(
            reply, "A WebRTC answer (ICE, DTLS) to an offer Moat made without a WebRTC leg%s",
            NULL);
    if (!call->offered[answerer] &&
        !moat_call_webrtc_same_party(call->webrtc[answerer], request->sdp, request->sdp_length))
        return moat_call_request_fail(
            reply, "The WebRTC party's answer restarts ICE or DTLS; its session cannot follow%s",
            NULL);
    return true;
}

/* A WebRTC party on `side`: its session answers its offer; from now on
 * that answer stands for the offer (its codecs are what the party sends). */
bool moat_call_start_webrtc(moat_call *call, int side, const moat_ng_request *request,
                            moat_call_reply *reply)
{
    char error[160];
    if (call->webrtc[side] &&
        moat_call_webrtc_same_party(call->webrtc[side], request->sdp, request->sdp_length))
        return true; /* a re-offer (hold, a session refresh): its session goes on */
    if (call->webrtc[side] && call->n_streams == moat_call_webrtc_n_streams(call->webrtc[side]) &&
        moat_call_webrtc_restart_ice(call->webrtc[side], request->sdp, request->sdp_length))
        return true; /* an ICE restart (a network change): DTLS and SRTP go on */
    moat_call_webrtc_free(call->webrtc[side]);
    call->webrtc[side] = moat_call_webrtc_new(&call->registry->webrtc, call->context, request->sdp,
                                              request->sdp_length, call->streams, call->n_streams,
                                              side, error, sizeof error);
    if (!call->webrtc[side])
        return moat_call_request_fail(reply, "WebRTC offer refused: %s", error);
    return true;
}

/* The party on `side` gets Moat's WebRTC offer instead of the rewritten
 * one; its session comes with its answer (answer_webrtc_leg). */
bool moat_call_offer_webrtc_leg(moat_call *call, int side, const moat_ng_request *request,
                                const moat_call_sdp *sdp, moat_call_reply *reply)
{
    g_free(reply->sdp); /* the phone's rewritten SDP is not for the party */
    reply->sdp = NULL;
    if (call->webrtc[side] && !call->offered[side] &&
        moat_call_webrtc_n_streams(call->webrtc[side]) == sdp->n_media) {
        /* A re-offer (hold, a session refresh) towards a party whose session
         * runs: what it has of Moat, with the offer's directions. */
        reply->sdp = g_strdup(
            moat_call_webrtc_describe(call->webrtc[side], request->sdp, request->sdp_length));
        return true;
    }
    char error[160];
    moat_call_webrtc_offered *offered = moat_call_webrtc_offer_new(
        &call->registry->webrtc, call->context, request, error, sizeof error);
    if (!offered)
        return moat_call_request_fail(reply, "Cannot offer a WebRTC leg: %s", error);
    moat_call_webrtc_offer_free(call->offered[side]);
    call->offered[side] = offered;
    reply->sdp = g_strdup(moat_call_webrtc_offer_text(offered));
    return true;
}

/* The WebRTC party on `side` answered Moat's offer: its session. */
bool moat_call_answer_webrtc_leg(moat_call *call, int side, const moat_ng_request *request,
                                 const moat_call_sdp *sdp, moat_call_reply *reply)
{
    if (!moat_call_sdp_is_webrtc(sdp))
        return moat_call_request_fail(
            reply, "The answer to Moat's WebRTC offer is not WebRTC (ICE, DTLS)%s", NULL);
    char error[160];
    moat_call_webrtc *leg = moat_call_webrtc_answered(
        &call->registry->webrtc, call->context, call->offered[side], request->sdp,
        request->sdp_length, call->streams, call->n_streams, side, error, sizeof error);
    if (!leg)
        return moat_call_request_fail(reply, "WebRTC answer refused: %s", error);
    moat_call_webrtc_free(call->webrtc[side]);
    call->webrtc[side] = leg;
    moat_call_webrtc_offer_free(call->offered[side]);
    call->offered[side] = NULL;
    return true;
}
