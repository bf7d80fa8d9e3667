/* What Moat tells a WebRTC party when its call is renegotiated (a
 * re-INVITE: hold, resume, a session timer's refresh): the description the
 * party already has (Moat's answer to it, or Moat's offer it answered),
 * unchanged in ICE credentials, fingerprint, DTLS role, codecs and SSRCs,
 * so its session goes on; only each m-line's direction follows the other
 * party's SDP, and the o= version grows when the text changes (RFC 3264
 * section 8). The party's identity (its ICE credentials and fingerprint)
 * tells a renegotiation from an ICE or DTLS restart. Pure text; any
 * thread. */
#ifndef MOAT_CALL_WEBRTC_DESCRIBE_H
#define MOAT_CALL_WEBRTC_DESCRIBE_H

#include <stdbool.h>
#include <stddef.h>

#define MOAT_CALL_WEBRTC_IDENTITY_SIZE 512

/* "<ufrag> <pwd> <fingerprint>" from the first a=ice-ufrag, a=ice-pwd and
 * a=fingerprint lines of `text`; false when one is missing or too long. */
bool moat_call_webrtc_identity(const char *text, size_t length,
                               char out[MOAT_CALL_WEBRTC_IDENTITY_SIZE]);

/* `described` with its a=ice-ufrag and a=ice-pwd values replaced (an ICE
 * restart: Moat's new credentials) and the o= version incremented. g_free;
 * NULL when it has no o= line. */
char *moat_call_webrtc_new_credentials(const char *described, const char *ufrag, const char *pwd);

/* `described` with each m-section's direction set to that of the same
 * m-section of `other` (the other party's SDP; its session-level direction
 * applies where an m-section has none; none at all: sendrecv), and the o=
 * version incremented when that changes the text. g_free; NULL when
 * `described` has no o= line. */
char *moat_call_webrtc_redescribe(const char *described, const char *other, size_t other_length);

#endif
