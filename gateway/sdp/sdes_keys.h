/* SDES-SRTP (RFC 4568) keys for the SRTP layer: a fresh local key from the
 * CSPRNG for an a=crypto line Moat writes, and the moat_srtp_keying a
 * moat_srtp_session is made from, out of our line (what we send) and the
 * peer's chosen line (what we receive). Stateless; any thread. Secrets:
 * callers clear what they keep (moat_sdp_crypto_clear, and the keying with
 * moat_sdes_keying_clear). */
#ifndef MOAT_SDES_KEYS_H
#define MOAT_SDES_KEYS_H

#include "sdp/sdp_crypto.h"
#include "srtp/srtp_keying.h"

#include <stddef.h>
#include <stdint.h>

/* Fills out with tag, suite and a random key||salt. 0, or -1 with error
 * (unknown suite, the CSPRNG failed). */
int moat_sdes_generate(moat_srtp_profile suite, uint32_t tag, moat_sdp_crypto *out, char *error,
                       size_t error_size);

/* The answer to an offered line: our key for the same tag and suite. */
int moat_sdes_answer(const moat_sdp_crypto *offered, moat_sdp_crypto *out, char *error,
                     size_t error_size);

/* Keying from our line and the peer's: both usable, one suite, key and salt
 * split as the profile says. 0, or -1 with error. */
int moat_sdes_keying(const moat_sdp_crypto *local, const moat_sdp_crypto *remote,
                     moat_srtp_keying *out, char *error, size_t error_size);

void moat_sdes_keying_clear(moat_srtp_keying *keying);

#endif
