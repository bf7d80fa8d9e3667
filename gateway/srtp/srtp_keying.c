/* The DTLS-SRTP protection profiles Moat accepts (RFC 5764 §4.1.2, RFC 7714
 * §14.2): their names and master key and salt lengths. */
#include "srtp_keying.h"

#include <string.h>

typedef struct {
    moat_srtp_profile profile;
    const char *name;
    size_t key_length, salt_length;
} profile_entry;

/* RFC 5764 §4.1.2 for the AES-CM profiles, RFC 7714 §14.2 for AES-GCM (its
 * salt is 96 bits, not 112). */
static const profile_entry profiles[] = {
    {MOAT_SRTP_PROFILE_AES128_CM_SHA1_80, "SRTP_AES128_CM_SHA1_80", 16, 14},
    {MOAT_SRTP_PROFILE_AES128_CM_SHA1_32, "SRTP_AES128_CM_SHA1_32", 16, 14},
    {MOAT_SRTP_PROFILE_AEAD_AES_128_GCM, "SRTP_AEAD_AES_128_GCM", 16, 12},
};

static const profile_entry *find_profile(moat_srtp_profile profile)
{
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
        if (profiles[i].profile == profile)
            return &profiles[i];
    }
    return NULL;
}

size_t moat_srtp_profile_key_length(moat_srtp_profile profile)
{
    const profile_entry *e = find_profile(profile);
    return e ? e->key_length : 0;
}

size_t moat_srtp_profile_salt_length(moat_srtp_profile profile)
{
    const profile_entry *e = find_profile(profile);
    return e ? e->salt_length : 0;
}

const char *moat_srtp_profile_name(moat_srtp_profile profile)
{
    const profile_entry *e = find_profile(profile);
    return e ? e->name : NULL;
}

moat_srtp_profile moat_srtp_profile_from_name(const char *name)
{
    if (name == NULL)
        return 0;
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
        if (strcmp(profiles[i].name, name) == 0)
            return profiles[i].profile;
    }
    return 0;
}
