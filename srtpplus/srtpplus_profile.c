/* The SRTP protection profiles SRTP+ covers (SRTPPLUS.md section 2): their names and
 * the key, salt, tag and minimum packet sizes that follow from each. */
#include "srtpplus_profile.h"
#include "srtpplus_status.h"

#include <string.h>

enum {
    RTP_FIXED_HEADER_LEN = 12,
    RTCP_HEADER_LEN = 8,
    SRTCP_INDEX_LEN = 4,
    HMAC_SHA1_80_LEN = 10,
    HMAC_SHA1_32_LEN = 4,
    GCM_TAG_LEN = 16,
};

int srtpplus_profile_sizes(enum srtpplus_profile profile, struct srtpplus_profile_sizes *out)
{
    if (!out)
        return SRTPPLUS_ERR_PARAM;
    switch (profile) {
    case SRTPPLUS_PROFILE_AES128_CM_SHA1_80:
    case SRTPPLUS_PROFILE_AES128_CM_SHA1_32:
        out->master_key_len = 16;
        out->master_salt_len = 14;
        out->srtp_tag_len =
            profile == SRTPPLUS_PROFILE_AES128_CM_SHA1_80 ? HMAC_SHA1_80_LEN : HMAC_SHA1_32_LEN;
        out->srtcp_aead_tag_len = 0;
        /* RFC 5764 section 4.1.2: SRTCP keeps the 80-bit tag under the _32 profile too. */
        out->srtcp_auth_len = HMAC_SHA1_80_LEN;
        break;
    case SRTPPLUS_PROFILE_AEAD_AES_128_GCM:
        out->master_key_len = 16;
        out->master_salt_len = 12;
        out->srtp_tag_len = GCM_TAG_LEN;
        out->srtcp_aead_tag_len = GCM_TAG_LEN;
        out->srtcp_auth_len = 0;
        break;
    default:
        return SRTPPLUS_ERR_PARAM;
    }
    out->min_srtp_len = RTP_FIXED_HEADER_LEN + out->srtp_tag_len;
    out->min_srtcp_len =
        RTCP_HEADER_LEN + out->srtcp_aead_tag_len + SRTCP_INDEX_LEN + out->srtcp_auth_len;
    return SRTPPLUS_OK;
}

static const struct {
    const char *name;
    enum srtpplus_profile profile;
} profile_names[] = {
    {"SRTP_AES128_CM_HMAC_SHA1_80", SRTPPLUS_PROFILE_AES128_CM_SHA1_80},
    {"SRTP_AES128_CM_HMAC_SHA1_32", SRTPPLUS_PROFILE_AES128_CM_SHA1_32},
    {"SRTP_AEAD_AES_128_GCM", SRTPPLUS_PROFILE_AEAD_AES_128_GCM},
};

int srtpplus_profile_from_name(const char *name, enum srtpplus_profile *out)
{
    if (!name || !out)
        return SRTPPLUS_ERR_PARAM;
    for (size_t i = 0; i < sizeof(profile_names) / sizeof(profile_names[0]); i++) {
        if (strcmp(name, profile_names[i].name) == 0) {
            *out = profile_names[i].profile;
            return SRTPPLUS_OK;
        }
    }
    return SRTPPLUS_ERR_PARAM;
}

const char *srtpplus_profile_name(enum srtpplus_profile profile)
{
    for (size_t i = 0; i < sizeof(profile_names) / sizeof(profile_names[0]); i++) {
        if (profile_names[i].profile == profile)
            return profile_names[i].name;
    }
    return "unknown";
}
