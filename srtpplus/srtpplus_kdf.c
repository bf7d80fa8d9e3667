/* Derives K_prn from a direction's SRTP master key and salt with HKDF-SHA256
 * (RFC 5869; SRTPPLUS.md section 2) on OpenSSL's EVP_KDF. */
#include "srtpplus_kdf.h"
#include "srtpplus_status.h"

#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

static const char prn_info[] = "SRTP+ v1 prn";

/* Master keys and salts of the SRTP profiles are at most 32 and 14 octets; anything
 * much longer is a caller mistake rather than a key. */
enum { MAX_INPUT_LEN = 64 };

int srtpplus_derive_prn_key(const uint8_t *master_key, size_t key_len, const uint8_t *master_salt,
                            size_t salt_len, uint8_t out[SRTPPLUS_PRN_KEY_LEN])
{
    if (!master_key || !master_salt || !out || key_len == 0 || salt_len == 0 ||
        key_len > MAX_INPUT_LEN || salt_len > MAX_INPUT_LEN)
        return SRTPPLUS_ERR_PARAM;

    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    if (!kdf)
        return SRTPPLUS_ERR_CRYPTO;
    EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
    EVP_KDF_free(kdf);
    if (!ctx)
        return SRTPPLUS_ERR_CRYPTO;

    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)master_key, key_len),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)master_salt, salt_len),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)prn_info,
                                          sizeof(prn_info) - 1),
        OSSL_PARAM_construct_end(),
    };
    int ok = EVP_KDF_derive(ctx, out, SRTPPLUS_PRN_KEY_LEN, params);
    EVP_KDF_CTX_free(ctx);
    return ok == 1 ? SRTPPLUS_OK : SRTPPLUS_ERR_CRYPTO;
}
