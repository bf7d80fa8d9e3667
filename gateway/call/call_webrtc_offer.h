/* Moat offering a WebRTC leg: a plain or SDES phone calls a WebRTC party
 * (ng offer with ICE=force or a DTLS transport). At the ng offer Moat
 * writes its own offer for the party (ICE-lite, host candidates on the
 * call's worker, fingerprint, a=setup:passive, rtcp-mux, BUNDLE, the ng
 * codec-transcode codecs first, then the phone's) and remembers the ICE
 * credentials and SSRCs it announced; at the ng answer the party's answer
 * stands for the "offer" of the leg's session (call_webrtc.h), which then
 * uses exactly those credentials and SSRCs, as the DTLS server.
 *
 * Threads: control thread only. */
#ifndef MOAT_CALL_WEBRTC_OFFER_H
#define MOAT_CALL_WEBRTC_OFFER_H

#include "call/call_webrtc.h"
#include "ng/ng_request.h"

#include <stddef.h>

typedef struct moat_call_webrtc_offered moat_call_webrtc_offered;

/* Moat's offer for the party from the phone's offer in `request` (audio
 * m-lines only). NULL with a message when it cannot be written. */
moat_call_webrtc_offered *moat_call_webrtc_offer_new(const moat_call_webrtc_env *env,
                                                     moat_call_worker *context,
                                                     const moat_ng_request *request, char *error,
                                                     size_t error_size);
/* The offer's SDP; owned by `offered`. */
const char *moat_call_webrtc_offer_text(const moat_call_webrtc_offered *offered);

/* The party's `answer` to that offer: its session (as moat_call_webrtc_new
 * does for a party's offer). NULL with a message when the answer lacks
 * ICE credentials or a fingerprint, does not take the DTLS client role,
 * or the session is refused. */
moat_call_webrtc *moat_call_webrtc_answered(const moat_call_webrtc_env *env,
                                            moat_call_worker *context,
                                            const moat_call_webrtc_offered *offered,
                                            const char *answer, size_t length,
                                            moat_call_stream *const *streams, size_t n_streams,
                                            int side, char *error, size_t error_size);

/* NULL is a no-op. */
void moat_call_webrtc_offer_free(moat_call_webrtc_offered *offered);

#endif
