/* Certificate fingerprints as SDP carries them (RFC 8122 a=fingerprint):
 * a hash function name and the digest as uppercase hex pairs joined by ':'. */
#ifndef MOAT_FINGERPRINT_H
#define MOAT_FINGERPRINT_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/x509.h>

/* Longest value including its NUL: SHA-512, 64 pairs and 63 colons. */
#define MOAT_FINGERPRINT_MAX_LENGTH 192

enum {
    MOAT_FINGERPRINT_OK = 0,
    MOAT_FINGERPRINT_ERR_ALGORITHM = -1, /* not sha-1, sha-224, sha-256, sha-384, sha-512 */
    MOAT_FINGERPRINT_ERR_SPACE = -2,     /* out_size too small */
    MOAT_FINGERPRINT_ERR_DIGEST = -3     /* OpenSSL could not hash the certificate */
};

/* alg is the SDP hash name ("sha-256"), matched case-insensitively. Writes
 * "AB:CD:..." to out. Returns MOAT_FINGERPRINT_OK or an error above. */
int moat_fingerprint_of_x509(X509 *cert, const char *alg, char *out, size_t out_size);

/* Whether alg names a hash function moat_fingerprint_of_x509 supports. */
bool moat_fingerprint_algorithm_supported(const char *alg);

/* Compares two fingerprint values ignoring hex case, as RFC 8122 allows
 * either case in SDP. */
bool moat_fingerprint_equal(const char *a, const char *b);

#endif
