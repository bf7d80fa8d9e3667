/* SDP for the gateway: parse a WebRTC offer, build the gateway's answer (an
 * ICE-lite, max-bundle, DTLS-SRTP endpoint), and parse and build trickle-ICE
 * fragments (RFC 8840) for WHIP/WHEP PATCH. Offers and fragments are
 * attacker input; every function here is safe on arbitrary bytes and reports
 * problems through an error buffer, never by printing. */
#ifndef MOAT_SDP_H
#define MOAT_SDP_H

#include "sdp/sdp_types.h"

/* Parses an offer. Returns NULL with a message naming the problem (e.g.
 * "line 7: a=fingerprint: unsupported hash", "no m= line", "m-line 1 (mid 0):
 * missing a=ice-ufrag"). Accepts CRLF and LF line ends. */
moat_sdp *moat_sdp_parse(const char *text, size_t length, char *error, size_t error_size);
void moat_sdp_free(moat_sdp *sdp);

/* The m-line with this mid, or NULL. */
const moat_sdp_media *moat_sdp_media_by_mid(const moat_sdp *sdp, const char *mid);

/* Builds the answer to `offer`. On success returns 0, fills `out` and sets
 * *answer_text (g_malloc'd, the caller frees it with g_free). On failure
 * returns -1 with a message, e.g. "rtcp-mux required" or "no supported codec".
 * When the offer's a=setup is active or passive the answer takes the opposite
 * role whatever params->setup says; params->setup decides only for actpass. */
int moat_sdp_answer_create(const moat_sdp *offer, const moat_sdp_answer_params *params,
                           moat_sdp_negotiation *out, char **answer_text, char *error,
                           size_t error_size);

/* Parses a trickle-ICE fragment (a WHIP PATCH body). 0 or -1 with a message. */
int moat_sdp_fragment_parse(const char *text, size_t length, moat_sdp_fragment *out, char *error,
                            size_t error_size);

/* Builds a fragment carrying new ICE credentials and the gateway's candidates
 * (the body of a 200 reply to an ICE restart): session-level a=ice-lite,
 * a=ice-ufrag, a=ice-pwd and a=group:BUNDLE, then one m= section per mid, the
 * candidates and a=end-of-candidates under the first (the bundle transport).
 * Returns a g_malloc'd string, or NULL when an argument cannot be written
 * safely (missing or invalid credentials, mids or candidates). */
char *moat_sdp_fragment_build(const char *ice_ufrag, const char *ice_pwd,
                              const moat_sdp_candidate *candidates, size_t n,
                              const char *const *mids, size_t n_mids);

/* Parses the value of an a=candidate line (what follows "a=candidate:"); a
 * leading "candidate:" as JavaScript's RTCIceCandidate.candidate writes it is
 * also accepted. Returns 0, or -1 when the value is malformed. */
int moat_sdp_candidate_parse(const char *value, moat_sdp_candidate *out);

/* Writes "<foundation> <component> <transport> <priority> <address> <port>
 * typ <type>" into buf (NUL-terminated). Zero component, empty transport and
 * empty type are written as 1, "udp" and "host". Returns the length, or -1
 * when a field is invalid or buf is too small. */
int moat_sdp_candidate_format(const moat_sdp_candidate *candidate, char *buf, size_t size);

#endif
