/* SRTP keying material as negotiated by DTLS-SRTP (RFC 5764) and the
 * protection profiles Moat accepts. The DTLS layer produces a keying, the
 * SRTP layer consumes it; neither needs the other's headers beyond this one. */
#ifndef MOAT_SRTP_KEYING_H
#define MOAT_SRTP_KEYING_H

#include <stddef.h>
#include <stdint.h>

/* Values are the IANA DTLS-SRTP protection profile identifiers. */
typedef enum {
    MOAT_SRTP_PROFILE_AES128_CM_SHA1_80 = 1,
    MOAT_SRTP_PROFILE_AES128_CM_SHA1_32 = 2,
    MOAT_SRTP_PROFILE_AEAD_AES_128_GCM = 7
} moat_srtp_profile;

#define MOAT_SRTP_MAX_KEY_LENGTH  32
#define MOAT_SRTP_MAX_SALT_LENGTH 14

/* "local" protects what we send, "remote" unprotects what we receive. */
typedef struct {
    moat_srtp_profile profile;
    size_t key_length, salt_length;
    uint8_t local_key[MOAT_SRTP_MAX_KEY_LENGTH], local_salt[MOAT_SRTP_MAX_SALT_LENGTH];
    uint8_t remote_key[MOAT_SRTP_MAX_KEY_LENGTH], remote_salt[MOAT_SRTP_MAX_SALT_LENGTH];
} moat_srtp_keying;

/* Master key and salt lengths of a profile in bytes; 0 for a profile Moat
 * does not support. */
size_t moat_srtp_profile_key_length(moat_srtp_profile profile);
size_t moat_srtp_profile_salt_length(moat_srtp_profile profile);

/* The RFC 5764 / RFC 7714 name ("SRTP_AES128_CM_SHA1_80"), or NULL. */
const char *moat_srtp_profile_name(moat_srtp_profile profile);

/* Inverse of moat_srtp_profile_name; 0 for an unknown name. */
moat_srtp_profile moat_srtp_profile_from_name(const char *name);

#endif
