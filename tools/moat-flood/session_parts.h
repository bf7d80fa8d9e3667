/* The parts of a session, one file each, as whip_session.c drives them.
 * Internal to moat-flood's session code. */
#ifndef SESSION_PARTS_H
#define SESSION_PARTS_H

#include "flood_session.h"

#include "sdp/sdp_offer.h"

/* session_offer.c: the SDP offer for this session (g_malloc'd) or NULL. */
char *session_offer_build(const flood_session *s, char *error, size_t error_size);
/* session_offer.c: our host candidate into *c; 1, or 0 (c zeroed) while the
 * local address is not known. Shared with sfu_peer.c's offers and answers. */
size_t session_offer_host_candidate(const flood_session *s, moat_sdp_candidate *c);
/* session_offer.c: an offer of these m-lines with this session's ICE
 * credentials, fingerprint, actpass and host candidate (g_malloc'd), or NULL
 * with error set. */
char *session_offer_create(const flood_session *s, const moat_sdp_offer_media *media,
                           size_t n_media, const moat_sdp_srtpplus *srtpplus, size_t n_srtpplus,
                           char *error, size_t error_size);
/* session_offer.c: the Opus codec every moat-flood offer proposes. */
extern const moat_sdp_offer_codec session_offer_opus;

/* session_answer.c: takes credentials, fingerprint, DTLS role, payload type,
 * SRTP+ scheme and the allowed UDP candidates from the answer. */
int session_answer_apply(flood_session *s, const char *answer, char *error, size_t error_size);

/* session_ice.c */
void session_ice_tick(flood_session *s, uint64_t now_us);
/* When session_ice_tick next has something to do. */
uint64_t session_ice_next_timer_us(const flood_session *s);
void session_ice_on_stun(flood_session *s, const uint8_t *data, size_t length,
                         const struct sockaddr_in6 *from, uint64_t now_us);
/* Checks and consent every this often. */
#define SESSION_CHECK_INTERVAL_US   50000u
#define SESSION_CONSENT_INTERVAL_US 5000000u

/* session_dtls.c */
int session_dtls_start(flood_session *s, uint64_t now_us);
void session_dtls_on_datagram(flood_session *s, const uint8_t *data, size_t length);
void session_dtls_tick(flood_session *s, uint64_t now_us);
uint64_t session_dtls_next_timer_us(const flood_session *s, uint64_t now_us);

/* Moves to FAILED with a reason (the first one wins). */
void session_fail(flood_session *s, const char *format, ...) __attribute__((format(printf, 2, 3)));

#endif
