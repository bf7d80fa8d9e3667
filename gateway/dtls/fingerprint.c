/* Certificate fingerprints as SDP carries them (RFC 8122 a=fingerprint):
 * hashes an X.509 certificate to "AB:CD:..." and compares values case-blind. */
#include "fingerprint.h"

#include <glib.h>
#include <openssl/evp.h>

static const EVP_MD *digest_for(const char *alg)
{
    if (alg == NULL)
        return NULL;
    /* RFC 8122 §5 names from the IANA hash function textual names registry. */
    if (g_ascii_strcasecmp(alg, "sha-1") == 0)
        return EVP_sha1();
    if (g_ascii_strcasecmp(alg, "sha-224") == 0)
        return EVP_sha224();
    if (g_ascii_strcasecmp(alg, "sha-256") == 0)
        return EVP_sha256();
    if (g_ascii_strcasecmp(alg, "sha-384") == 0)
        return EVP_sha384();
    if (g_ascii_strcasecmp(alg, "sha-512") == 0)
        return EVP_sha512();
    return NULL;
}

bool moat_fingerprint_algorithm_supported(const char *alg)
{
    return digest_for(alg) != NULL;
}

int moat_fingerprint_of_x509(X509 *cert, const char *alg, char *out, size_t out_size)
{
    const EVP_MD *md = digest_for(alg);
    if (md == NULL)
        return MOAT_FINGERPRINT_ERR_ALGORITHM;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_length = 0;
    if (cert == NULL || X509_digest(cert, md, digest, &digest_length) != 1 || digest_length == 0)
        return MOAT_FINGERPRINT_ERR_DIGEST;
    if (out == NULL || out_size < (size_t)digest_length * 3)
        return MOAT_FINGERPRINT_ERR_SPACE;

    static const char hex[] = "0123456789ABCDEF";
    char *p = out;
    for (unsigned int i = 0; i < digest_length; i++) {
        if (i > 0)
            *p++ = ':';
        *p++ = hex[digest[i] >> 4];
        *p++ = hex[digest[i] & 0x0f];
    }
    *p = '\0';
    return MOAT_FINGERPRINT_OK;
}

bool moat_fingerprint_equal(const char *a, const char *b)
{
    return a != NULL && b != NULL && g_ascii_strcasecmp(a, b) == 0;
}
