/* The gateway's DTLS identity: an X.509 certificate, its private key and its
 * SHA-256 fingerprint for SDP. Immutable after creation, so one certificate
 * may be shared by every worker. */
#ifndef MOAT_CERTIFICATE_H
#define MOAT_CERTIFICATE_H

#include <stddef.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "dtls/fingerprint.h"

typedef struct moat_certificate moat_certificate;

/* ECDSA P-256 key, self-signed with SHA-256, CN=moat, random 64-bit serial,
 * valid from one day ago (peers with skewed clocks) for 30 days. NULL and a
 * message in error on failure. */
moat_certificate *moat_certificate_generate(char *error, size_t error_size);

/* Reads a PEM certificate (the first one in the file) and a PEM private key.
 * Encrypted keys are refused rather than prompting for a passphrase. Errors
 * read like "cannot read certificate /x: No such file or directory" or
 * "key does not match certificate". */
moat_certificate *moat_certificate_load(const char *cert_pem_path, const char *key_pem_path,
                                        char *error, size_t error_size);

/* SHA-256 fingerprint, "AB:CD:...", valid as long as the certificate. */
const char *moat_certificate_fingerprint(const moat_certificate *c);

/* Borrowed; valid as long as the certificate. */
X509 *moat_certificate_x509(const moat_certificate *c);
EVP_PKEY *moat_certificate_private_key(const moat_certificate *c);

void moat_certificate_free(moat_certificate *c);

#endif
