/* Owns the precomputed HMAC-SHA1 of one STUN short-term password and the
 * check of a request's MESSAGE-INTEGRITY with it (stun_integrity.h). */
#include "ice/stun_integrity.h"
#include "ice/stun_attributes.h"
#include "ice/stun_classify.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#define SHA1_BLOCK  64
#define SHA1_LENGTH 20
/* RFC 8839 §5.4: ice-pwd is at most 256 characters. */
#define PASSWORD_MAX 256

struct moat_stun_integrity {
    EVP_MD_CTX *inner; /* SHA-1 that has taken key ^ ipad */
    EVP_MD_CTX *outer; /* SHA-1 that has taken key ^ opad */
    EVP_MD_CTX *work;
    char password[PASSWORD_MAX + 1];
};

void moat_stun_integrity_free(moat_stun_integrity *key)
{
    if (key == NULL)
        return;
    EVP_MD_CTX_free(key->inner);
    EVP_MD_CTX_free(key->outer);
    EVP_MD_CTX_free(key->work);
    OPENSSL_cleanse(key, sizeof *key);
    free(key);
}

/* One of RFC 2104's padded keys, taken by a fresh SHA-1. */
static bool start_pad(EVP_MD_CTX *ctx, const EVP_MD *sha1, const uint8_t *block, uint8_t pad)
{
    uint8_t padded[SHA1_BLOCK];
    for (size_t i = 0; i < SHA1_BLOCK; i++)
        padded[i] = block[i] ^ pad;
    bool ok = EVP_DigestInit_ex(ctx, sha1, NULL) == 1 &&
              EVP_DigestUpdate(ctx, padded, sizeof padded) == 1;
    OPENSSL_cleanse(padded, sizeof padded);
    return ok;
}

moat_stun_integrity *moat_stun_integrity_new(const char *password)
{
    size_t length = password != NULL ? strlen(password) : 0;
    if (length == 0 || length > PASSWORD_MAX)
        return NULL;
    moat_stun_integrity *key = calloc(1, sizeof *key);
    if (key == NULL)
        return NULL;
    memcpy(key->password, password, length);
    key->inner = EVP_MD_CTX_new();
    key->outer = EVP_MD_CTX_new();
    key->work = EVP_MD_CTX_new();
    EVP_MD *sha1 = EVP_MD_fetch(NULL, "SHA1", NULL);
    /* A key longer than a block is its hash (RFC 2104 §2). */
    uint8_t block[SHA1_BLOCK] = {0};
    bool ok = key->inner != NULL && key->outer != NULL && key->work != NULL && sha1 != NULL;
    if (ok && length > SHA1_BLOCK)
        ok = EVP_Digest(password, length, block, NULL, sha1, NULL) == 1;
    else if (ok)
        memcpy(block, password, length);
    ok = ok && start_pad(key->inner, sha1, block, 0x36) && start_pad(key->outer, sha1, block, 0x5c);
    OPENSSL_cleanse(block, sizeof block);
    EVP_MD_free(sha1);
    if (!ok) {
        moat_stun_integrity_free(key);
        return NULL;
    }
    return key;
}

bool moat_stun_integrity_is_for(const moat_stun_integrity *key, const char *password)
{
    return key != NULL && password != NULL && strcmp(key->password, password) == 0;
}

/* HMAC-SHA1 of the message's first `at` bytes with the header's length field
 * replaced by `length_field`. */
static bool mac(moat_stun_integrity *key, const uint8_t *message, size_t at, uint16_t length_field,
                uint8_t out[SHA1_LENGTH])
{
    uint8_t field[2] = {(uint8_t)(length_field >> 8), (uint8_t)length_field};
    uint8_t inner[SHA1_LENGTH];
    return EVP_MD_CTX_copy_ex(key->work, key->inner) == 1 &&
           EVP_DigestUpdate(key->work, message, 2) == 1 &&
           EVP_DigestUpdate(key->work, field, sizeof field) == 1 &&
           EVP_DigestUpdate(key->work, message + 4, at - 4) == 1 &&
           EVP_DigestFinal_ex(key->work, inner, NULL) == 1 &&
           EVP_MD_CTX_copy_ex(key->work, key->outer) == 1 &&
           EVP_DigestUpdate(key->work, inner, sizeof inner) == 1 &&
           EVP_DigestFinal_ex(key->work, out, NULL) == 1;
}

moat_stun_integrity_result moat_stun_integrity_verify(moat_stun_integrity *key,
                                                      const uint8_t *message, size_t length)
{
    if (key == NULL || message == NULL || length < MOAT_STUN_HEADER_LENGTH)
        return MOAT_STUN_INTEGRITY_MALFORMED;
    moat_stun_attribute_iter it;
    moat_stun_attribute attribute;
    int step;
    moat_stun_attribute_iter_init(&it, message, length);
    while ((step = moat_stun_attribute_next(&it, &attribute)) == 1) {
        if (attribute.type != MOAT_STUN_ATTR_MESSAGE_INTEGRITY)
            continue;
        if (attribute.length != SHA1_LENGTH)
            return MOAT_STUN_INTEGRITY_MALFORMED;
        size_t at = (size_t)(attribute.value - message) - 4;
        uint8_t expected[SHA1_LENGTH];
        /* The length counts the attributes up to MESSAGE-INTEGRITY's end. */
        if (!mac(key, message, at, (uint16_t)(at + 4 + SHA1_LENGTH - MOAT_STUN_HEADER_LENGTH),
                 expected))
            return MOAT_STUN_INTEGRITY_BAD;
        return CRYPTO_memcmp(expected, attribute.value, SHA1_LENGTH) == 0 ? MOAT_STUN_INTEGRITY_OK
                                                                          : MOAT_STUN_INTEGRITY_BAD;
    }
    return step == 0 ? MOAT_STUN_INTEGRITY_BAD : MOAT_STUN_INTEGRITY_MALFORMED;
}
