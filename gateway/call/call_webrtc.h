/* A WebRTC party of a call (a SIP-over-WebSocket client behind a SIP
 * proxy): its leg is a core Moat session (ICE-lite and DTLS-SRTP on the
 * worker sockets), created from the party's offer through the same
 * transport-neutral setup as WHIP (core/whip_session.h) and attached to
 * the internal "call" plugin, which hands its decrypted RTP to the call's
 * streams (moat_call_stream_inject); what the leg receives reaches the
 * session through relay_rtp (moat_call_stream_set_webrtc).
 *
 * Threads: new, answer and free on the control thread. The session runs
 * on the streams' worker, so its media callbacks and the streams' packet
 * path never race; free unlinks the streams on that worker (FIFO) before
 * the call frees them. */
#ifndef MOAT_CALL_WEBRTC_H
#define MOAT_CALL_WEBRTC_H

#include "call/call_media.h"
#include "session/gateway_state.h"
#include "session/whip_session.h"
#include "plugin.h"

#include <stddef.h>

/* What WebRTC legs need from the gateway; gateway NULL: they are refused. */
typedef struct {
    moat_gateway *gateway;
    const moat_gateway_calls *calls;
} moat_call_webrtc_env;

typedef struct moat_call_webrtc moat_call_webrtc;

/* Answers the party's `offer` with a session on the worker of the
 * streams' context and bridges its m-line i to leg `side` of streams[i].
 * NULL with a message when the offer cannot be answered or the session is
 * refused. */
moat_call_webrtc *moat_call_webrtc_new(const moat_call_webrtc_env *env, moat_call_worker *context,
                                       const char *offer, size_t length,
                                       moat_call_stream *const *streams, size_t n_streams, int side,
                                       char *error, size_t error_size);
/* The same with `local` (core/whip_session.h): `offer` is the party's
 * answer to an offer Moat made with those credentials and SSRCs
 * (call_webrtc_offer.h); NULL local is moat_call_webrtc_new. */
moat_call_webrtc *moat_call_webrtc_new_local(const moat_call_webrtc_env *env,
                                             moat_call_worker *context, const char *offer,
                                             size_t length, const moat_whip_local *local,
                                             moat_call_stream *const *streams, size_t n_streams,
                                             int side, char *error, size_t error_size);
/* Moat's answer for the party (ICE-lite candidates, fingerprint,
 * setup:passive); owned by the leg. */
const char *moat_call_webrtc_answer(const moat_call_webrtc *leg);
/* How many m-lines the session bridges. */
size_t moat_call_webrtc_n_streams(const moat_call_webrtc *leg);
/* Whether `sdp` (the party's new offer or answer) keeps the ICE
 * credentials and fingerprint the session was made with: a renegotiation
 * the session follows, not an ICE or DTLS restart. */
bool moat_call_webrtc_same_party(const moat_call_webrtc *leg, const char *sdp, size_t length);
/* The party re-offered with new ICE credentials but its fingerprint and
 * m-lines (an ICE restart: a network change): the running session restarts
 * ICE with new local credentials (DTLS and SRTP kept, as for WHIP) and the
 * description gets them. False (nothing changed) when it is not that, or
 * the session is not running. */
bool moat_call_webrtc_restart_ice(moat_call_webrtc *leg, const char *sdp, size_t length);
/* What Moat tells the party now: the description it has (initially
 * Moat's answer, or Moat's offer it answered: set_described) with each
 * m-line's direction from the other party's SDP `other`
 * (call_webrtc_describe.h). Owned by the leg until the next call. */
const char *moat_call_webrtc_describe(moat_call_webrtc *leg, const char *other, size_t length);
/* The description Moat gave the party when Moat made the offer. */
void moat_call_webrtc_set_described(moat_call_webrtc *leg, const char *text);
/* Hands the session to its worker: at the ng answer, when the party gets
 * Moat's answer, so that ringing does not count against the session's ICE
 * and DTLS timeouts. Later calls do nothing. */
void moat_call_webrtc_start(moat_call_webrtc *leg);
/* Ends the session (if started and still running; else frees it) and
 * frees the leg. NULL is a no-op. */
void moat_call_webrtc_free(moat_call_webrtc *leg);

#endif
