/* The SRTP protection profiles SRTP+ covers (SRTPPLUS.md section 2) and the sizes that
 * follow from them: key and salt lengths for the KDF, and where SRTP(C) puts its
 * trailer, which the SRTP+ length checks and the SRTCP index lookup need. */
#ifndef SRTPPLUS_PROFILE_H
#define SRTPPLUS_PROFILE_H

#include <stddef.h>

enum srtpplus_profile {
    SRTPPLUS_PROFILE_AES128_CM_SHA1_80,
    SRTPPLUS_PROFILE_AES128_CM_SHA1_32,
    SRTPPLUS_PROFILE_AEAD_AES_128_GCM,
};

struct srtpplus_profile_sizes {
    size_t master_key_len;
    size_t master_salt_len;
    size_t srtp_tag_len;       /* octets SRTP adds to an RTP packet (auth or AEAD tag) */
    size_t srtcp_aead_tag_len; /* AEAD tag inside the encrypted part, before the SRTCP index */
    size_t srtcp_auth_len;     /* HMAC tag after the SRTCP index */
    size_t min_srtp_len;       /* smallest SRTP packet: RTP fixed header + tag */
    size_t min_srtcp_len;      /* smallest SRTCP packet: RTCP header + tags + index */
};

/* Fills *out; returns SRTPPLUS_ERR_PARAM for an unknown profile. */
int srtpplus_profile_sizes(enum srtpplus_profile profile, struct srtpplus_profile_sizes *out);

/* Maps the RFC 5764 / RFC 7714 names ("SRTP_AES128_CM_HMAC_SHA1_80", ...). */
int srtpplus_profile_from_name(const char *name, enum srtpplus_profile *out);
const char *srtpplus_profile_name(enum srtpplus_profile profile);

#endif
