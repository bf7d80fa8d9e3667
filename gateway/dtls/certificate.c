/* The gateway's DTLS identity: generates a self-signed ECDSA P-256 certificate
 * or loads a PEM certificate and key, and computes its SHA-256 fingerprint for
 * SDP (made once by the app at start-up, then shared read-only by workers). */
#include "certificate.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include <glib.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include "openssl_error.h"

#define ONE_DAY_SECONDS (24L * 60 * 60)
#define VALIDITY_DAYS   30
#define COMMON_NAME     "moat"

struct moat_certificate {
    X509 *x509;
    EVP_PKEY *key;
    char fingerprint[MOAT_FINGERPRINT_MAX_LENGTH];
};

/* Takes ownership of x509 and key, freeing them on failure. */
static moat_certificate *wrap(X509 *x509, EVP_PKEY *key, char *error, size_t error_size)
{
    moat_certificate *c = g_new0(moat_certificate, 1);
    c->x509 = x509;
    c->key = key;
    if (moat_fingerprint_of_x509(x509, "sha-256", c->fingerprint, sizeof c->fingerprint) !=
        MOAT_FINGERPRINT_OK) {
        snprintf(error, error_size, "cannot compute the certificate's fingerprint");
        moat_certificate_free(c);
        return NULL;
    }
    return c;
}

static int set_random_serial(X509 *x509)
{
    uint64_t serial = 0;
    /* A zero serial is not allowed by RFC 5280 §4.1.2.2. */
    while (serial == 0) {
        if (RAND_bytes((unsigned char *)&serial, sizeof serial) != 1)
            return -1;
    }
    return ASN1_INTEGER_set_uint64(X509_get_serialNumber(x509), serial) == 1 ? 0 : -1;
}

static int fill_self_signed(X509 *x509, EVP_PKEY *key)
{
    if (X509_set_version(x509, X509_VERSION_3) != 1 || set_random_serial(x509) != 0)
        return -1;
    /* Backdated so a peer whose clock runs behind still accepts it. */
    if (X509_gmtime_adj(X509_getm_notBefore(x509), -ONE_DAY_SECONDS) == NULL ||
        X509_gmtime_adj(X509_getm_notAfter(x509), VALIDITY_DAYS * ONE_DAY_SECONDS) == NULL)
        return -1;
    X509_NAME *name = X509_get_subject_name(x509);
    if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)COMMON_NAME, -1,
                                   -1, 0) != 1)
        return -1;
    if (X509_set_issuer_name(x509, name) != 1 || X509_set_pubkey(x509, key) != 1)
        return -1;
    return X509_sign(x509, key, EVP_sha256()) > 0 ? 0 : -1;
}

moat_certificate *moat_certificate_generate(char *error, size_t error_size)
{
    char reason[160];
    ERR_clear_error();
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    if (key == NULL) {
        moat_openssl_error_take(reason, sizeof reason, "key generation failed");
        snprintf(error, error_size, "cannot generate an ECDSA P-256 key: %s", reason);
        return NULL;
    }
    X509 *x509 = X509_new();
    if (x509 == NULL || fill_self_signed(x509, key) != 0) {
        moat_openssl_error_take(reason, sizeof reason, "signing failed");
        snprintf(error, error_size, "cannot make a self-signed certificate: %s", reason);
        X509_free(x509);
        EVP_PKEY_free(key);
        return NULL;
    }
    return wrap(x509, key, error, error_size);
}

/* A passphrase prompt on the daemon's terminal would hang startup; refusing
 * makes an encrypted key fail to parse with a message instead. */
static int refuse_passphrase(char *buf, int size, int rwflag, void *u)
{
    return 0;
}

static X509 *read_certificate(const char *path, char *error, size_t error_size)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(error, error_size, "cannot read certificate %s: %s", path, g_strerror(errno));
        return NULL;
    }
    ERR_clear_error();
    X509 *x509 = PEM_read_X509(f, NULL, refuse_passphrase, NULL);
    fclose(f);
    if (x509 == NULL) {
        char reason[160];
        moat_openssl_error_take(reason, sizeof reason, "no PEM certificate found");
        snprintf(error, error_size, "cannot parse certificate %s: %s", path, reason);
    }
    return x509;
}

static EVP_PKEY *read_key(const char *path, char *error, size_t error_size)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(error, error_size, "cannot read key %s: %s", path, g_strerror(errno));
        return NULL;
    }
    ERR_clear_error();
    EVP_PKEY *key = PEM_read_PrivateKey(f, NULL, refuse_passphrase, NULL);
    fclose(f);
    if (key == NULL) {
        char reason[160];
        moat_openssl_error_take(reason, sizeof reason, "no PEM private key found");
        snprintf(error, error_size, "cannot parse key %s: %s", path, reason);
    }
    return key;
}

moat_certificate *moat_certificate_load(const char *cert_pem_path, const char *key_pem_path,
                                        char *error, size_t error_size)
{
    if (cert_pem_path == NULL || key_pem_path == NULL) {
        snprintf(error, error_size, "certificate and key paths are both required");
        return NULL;
    }
    X509 *x509 = read_certificate(cert_pem_path, error, error_size);
    if (x509 == NULL)
        return NULL;
    EVP_PKEY *key = read_key(key_pem_path, error, error_size);
    if (key == NULL) {
        X509_free(x509);
        return NULL;
    }
    int matches = X509_check_private_key(x509, key);
    ERR_clear_error();
    if (matches != 1) {
        snprintf(error, error_size, "key does not match certificate");
        X509_free(x509);
        EVP_PKEY_free(key);
        return NULL;
    }
    return wrap(x509, key, error, error_size);
}

const char *moat_certificate_fingerprint(const moat_certificate *c)
{
    return c->fingerprint;
}

X509 *moat_certificate_x509(const moat_certificate *c)
{
    return c->x509;
}

EVP_PKEY *moat_certificate_private_key(const moat_certificate *c)
{
    return c->key;
}

void moat_certificate_free(moat_certificate *c)
{
    if (c == NULL)
        return;
    X509_free(c->x509);
    EVP_PKEY_free(c->key);
    g_free(c);
}
