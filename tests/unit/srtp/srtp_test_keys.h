/* Test keys for a pair of SRTP sessions: one end's local key is the other
 * end's remote key (flip picks the end). Header-only, for the srtp unit
 * tests. */
#ifndef MOAT_SRTP_TEST_KEYS_H
#define MOAT_SRTP_TEST_KEYS_H

#include "srtp/srtp_session.h"

static inline moat_srtp_keying srtp_test_keys(moat_srtp_profile profile, bool flip)
{
    moat_srtp_keying k = {.profile = profile,
                          .key_length = moat_srtp_profile_key_length(profile),
                          .salt_length = moat_srtp_profile_salt_length(profile)};
    for (size_t i = 0; i < sizeof k.local_key; i++) {
        k.local_key[i] = (uint8_t)(flip ? 0xb0 + i : 0xa0 + i);
        k.remote_key[i] = (uint8_t)(flip ? 0xa0 + i : 0xb0 + i);
    }
    for (size_t i = 0; i < sizeof k.local_salt; i++) {
        k.local_salt[i] = (uint8_t)(flip ? 0x50 + i : 0x40 + i);
        k.remote_salt[i] = (uint8_t)(flip ? 0x40 + i : 0x50 + i);
    }
    return k;
}

#endif
