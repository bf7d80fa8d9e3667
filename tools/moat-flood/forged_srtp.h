/* Forged SRTP and SRTCP that look like a session's own traffic: a valid RTP
 * (or RTCP) header, random "ciphertext" and a random authentication tag
 * (and SRTP+ tag), the size of the session's legitimate packets. No key is
 * known, so srtp_unprotect fails on every one. */
#ifndef FORGED_SRTP_H
#define FORGED_SRTP_H

#include <stddef.h>
#include <stdint.h>

#include "flood_random.h"
#include "flood_session.h"

/* RTP with the session's payload type. Returns the length written. */
size_t forged_srtp_rtp(const flood_session *s, uint32_t ssrc, uint16_t sequence,
                       flood_random *random, uint8_t *out, size_t capacity);

/* An SRTCP sender report with sender SSRC ssrc, its encrypted body, an SRTCP
 * index with the E flag, the tag (and the SRTP+ tag). Returns the length. */
size_t forged_srtp_rtcp(const flood_session *s, uint32_t ssrc, uint32_t srtcp_index,
                        flood_random *random, uint8_t *out, size_t capacity);

/* A sequence number ahead of the session's legitimate stream, so the packet
 * is never a replay of an index the receiver has seen: it can only fail
 * authentication. k spreads packets over a window. */
uint16_t forged_srtp_sequence_ahead(const flood_session *s, uint64_t k);

#endif
