/* The SDP behind Moat's own WebRTC offer to a call party: a WebRTC offer
 * "from" the party, built from the phone's plain SDP, which Moat answers
 * with the SDP writer WHIP uses (sdp/sdp.h); that answer (ICE-lite,
 * candidates, fingerprint, setup, BUNDLE, SSRCs) is Moat's offer. Its ICE
 * credentials are placeholders and its fingerprint is the caller's own:
 * only the answer's are kept. Pure text in, text out, no gateway: the
 * phone's SDP is attacker input (fuzzed in tests/fuzz/call). */
#ifndef MOAT_CALL_WEBRTC_OFFER_SDP_H
#define MOAT_CALL_WEBRTC_OFFER_SDP_H

#include <stddef.h>

/* Audio m-lines only (one per m-line of the phone's SDP, mids "0", "1",
 * ...): the phone's codecs plus `first` (the ng codec-transcode names the
 * transcoder supports), those first. A g_malloc'd SDP, or NULL with a
 * message (malformed SDP, a non-audio or disabled m-line). */
char *moat_call_webrtc_self_offer(const char *text, size_t length, const char *const *first,
                                  size_t n_first, const char *fingerprint, char *error,
                                  size_t error_size);

#endif
