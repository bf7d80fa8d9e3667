/* SDES keys: generation with OpenSSL's CSPRNG and the split of RFC 4568's
 * key||salt into the key and salt libsrtp takes (srtp_session.c). */
#include "sdp/sdes_keys.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

int moat_sdes_generate(moat_srtp_profile suite, uint32_t tag, moat_sdp_crypto *out, char *error,
                       size_t error_size)
{
    memset(out, 0, sizeof *out);
    size_t length = moat_sdp_crypto_key_salt_length(suite);
    if (length == 0 || length > sizeof out->key_salt) {
        snprintf(error, error_size, "SDES: suite %d is not supported", (int)suite);
        return -1;
    }
    if (tag > MOAT_SDP_CRYPTO_MAX_TAG) {
        snprintf(error, error_size, "SDES: tag %u is out of range", tag);
        return -1;
    }
    if (RAND_bytes(out->key_salt, (int)length) != 1) {
        snprintf(error, error_size, "SDES: the random generator failed");
        return -1;
    }
    out->tag = tag;
    out->suite = suite;
    out->key_salt_length = length;
    return 0;
}

int moat_sdes_answer(const moat_sdp_crypto *offered, moat_sdp_crypto *out, char *error,
                     size_t error_size)
{
    if (!moat_sdp_crypto_usable(offered)) {
        snprintf(error, error_size, "SDES: the offered crypto line is not usable");
        return -1;
    }
    return moat_sdes_generate(offered->suite, offered->tag, out, error, error_size);
}

static int split(const moat_sdp_crypto *crypto, size_t key_length, size_t salt_length, uint8_t *key,
                 uint8_t *salt)
{
    if (crypto->key_salt_length != key_length + salt_length)
        return -1;
    memcpy(key, crypto->key_salt, key_length);
    memcpy(salt, crypto->key_salt + key_length, salt_length);
    return 0;
}

int moat_sdes_keying(const moat_sdp_crypto *local, const moat_sdp_crypto *remote,
                     moat_srtp_keying *out, char *error, size_t error_size)
{
    memset(out, 0, sizeof *out);
    if (!moat_sdp_crypto_usable(local) || !moat_sdp_crypto_usable(remote)) {
        snprintf(error, error_size,
                 "SDES: crypto line not usable (MKI, several keys or session "
                 "parameters)");
        return -1;
    }
    if (local->suite != remote->suite) {
        snprintf(error, error_size, "SDES: local and remote suites differ");
        return -1;
    }
    size_t key_length = moat_srtp_profile_key_length(local->suite);
    size_t salt_length = moat_srtp_profile_salt_length(local->suite);
    if (key_length == 0 || key_length > MOAT_SRTP_MAX_KEY_LENGTH ||
        salt_length > MOAT_SRTP_MAX_SALT_LENGTH) {
        snprintf(error, error_size, "SDES: no SRTP profile for the suite");
        return -1;
    }
    out->profile = local->suite;
    out->key_length = key_length;
    out->salt_length = salt_length;
    if (split(local, key_length, salt_length, out->local_key, out->local_salt) != 0 ||
        split(remote, key_length, salt_length, out->remote_key, out->remote_salt) != 0) {
        moat_sdes_keying_clear(out);
        snprintf(error, error_size, "SDES: key and salt length does not match the suite");
        return -1;
    }
    return 0;
}

void moat_sdes_keying_clear(moat_srtp_keying *keying)
{
    explicit_bzero(keying, sizeof *keying);
}
