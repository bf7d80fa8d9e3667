/* Owns the keys of an SRTP ingest (ingest_srtp.h): the request's suite and
 * optional key checked, a fresh key from the CSPRNG otherwise. */
#include "http/ingest_srtp.h"

#include "sdp/sdes_keys.h"

#include <glib.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>

#define SUITES "AES_CM_128_HMAC_SHA1_80, AES_CM_128_HMAC_SHA1_32 or AEAD_AES_128_GCM"

/* The sender's key||salt from its base64 text: exactly the suite's length,
 * nothing but base64 (g_base64_decode skips what it does not know). */
static int sender_key(const char *text, moat_srtp_profile suite, moat_sdp_crypto *out, char *error,
                      size_t error_size)
{
    size_t want = moat_sdp_crypto_key_salt_length(suite), length = strlen(text);
    size_t encoded = 4 * ((want + 2) / 3);
    if (length != encoded || strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789+/=") != length) {
        snprintf(error, error_size,
                 "srtp.key: %zu bytes of key and salt in base64 (%zu characters)", want, encoded);
        return -1;
    }
    gsize decoded_length = 0;
    guchar *decoded = g_base64_decode(text, &decoded_length);
    int status = -1;
    if (decoded_length == want) {
        memset(out, 0, sizeof *out);
        out->tag = 1;
        out->suite = suite;
        memcpy(out->key_salt, decoded, want);
        out->key_salt_length = want;
        status = 0;
    } else {
        snprintf(error, error_size, "srtp.key: %zu bytes of key and salt in base64", want);
    }
    OPENSSL_cleanse(decoded, decoded_length);
    g_free(decoded);
    return status;
}

int moat_ingest_srtp_parse(json_t *value, moat_srtp_keying *keys, char **key_text,
                           const char **suite, char *error, size_t error_size)
{
    *key_text = NULL;
    if (!json_is_object(value)) {
        snprintf(error, error_size, "srtp: an object, {\"suite\": \"%s\"}",
                 "AES_CM_128_HMAC_SHA1_80");
        return -1;
    }
    const char *name = json_string_value(json_object_get(value, "suite"));
    moat_srtp_profile profile = name ? moat_sdp_crypto_suite_from_name(name, strlen(name)) : 0;
    if (!profile) {
        snprintf(error, error_size, "srtp.suite: %s", SUITES);
        return -1;
    }
    json_t *key = json_object_get(value, "key");
    if (key && !json_is_string(key)) {
        snprintf(error, error_size, "srtp.key: a base64 string");
        return -1;
    }
    moat_sdp_crypto local, remote;
    int status = key ? sender_key(json_string_value(key), profile, &remote, error, error_size)
                     : moat_sdes_generate(profile, 1, &remote, error, error_size);
    /* Moat sends nothing to an ingest; its own key only completes the keying. */
    if (status == 0)
        status = moat_sdes_generate(profile, 1, &local, error, error_size);
    if (status == 0)
        status = moat_sdes_keying(&local, &remote, keys, error, error_size);
    if (status == 0) {
        *key_text = g_base64_encode(remote.key_salt, remote.key_salt_length);
        *suite = moat_sdp_crypto_suite_name(profile);
    }
    moat_sdp_crypto_clear(&local);
    moat_sdp_crypto_clear(&remote);
    return status;
}

void moat_ingest_srtp_free_key(char *key_text)
{
    if (key_text)
        OPENSSL_cleanse(key_text, strlen(key_text));
    g_free(key_text);
}
