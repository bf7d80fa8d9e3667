/* Certificate generation and loading, fingerprints checked against GLib's
 * independent hash implementations, and DTLS context configuration. */
#include <string.h>
#include <time.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <openssl/pem.h>

#include "dtls/certificate.h"
#include "dtls/dtls_context.h"

/* "ab12..." -> "AB:12:..." */
static gchar *colon_hex(const gchar *hex)
{
    GString *s = g_string_new(NULL);
    for (gsize i = 0; hex[i] && hex[i + 1]; i += 2) {
        if (i > 0)
            g_string_append_c(s, ':');
        g_string_append_c(s, g_ascii_toupper(hex[i]));
        g_string_append_c(s, g_ascii_toupper(hex[i + 1]));
    }
    return g_string_free(s, FALSE);
}

static gchar *expected_fingerprint(X509 *x509, GChecksumType type)
{
    unsigned char *der = NULL;
    int length = i2d_X509(x509, &der);
    g_assert_cmpint(length, >, 0);
    gchar *hex = g_compute_checksum_for_data(type, der, (gsize)length);
    OPENSSL_free(der);
    gchar *fp = colon_hex(hex);
    g_free(hex);
    return fp;
}

static void test_generate(void)
{
    char error[256] = "";
    moat_certificate *c = moat_certificate_generate(error, sizeof error);
    g_assert_nonnull(c);
    g_assert_cmpstr(error, ==, "");
    X509 *x509 = moat_certificate_x509(c);

    const char *fp = moat_certificate_fingerprint(c);
    g_assert_cmpuint(strlen(fp), ==, 32 * 3 - 1);
    gchar *expected = expected_fingerprint(x509, G_CHECKSUM_SHA256);
    g_assert_cmpstr(fp, ==, expected);
    g_free(expected);

    /* Subject and issuer are CN=moat: self-signed. */
    char cn[64] = "";
    X509_NAME_get_text_by_NID(X509_get_subject_name(x509), NID_commonName, cn, sizeof cn);
    g_assert_cmpstr(cn, ==, "moat");
    g_assert_cmpint(X509_NAME_cmp(X509_get_subject_name(x509), X509_get_issuer_name(x509)), ==, 0);
    g_assert_cmpint(X509_get_version(x509), ==, X509_VERSION_3);

    /* ECDSA P-256 key, ecdsa-with-SHA256 signature that verifies. */
    EVP_PKEY *key = moat_certificate_private_key(c);
    g_assert_true(EVP_PKEY_is_a(key, "EC"));
    char group[32] = "";
    size_t group_length = 0;
    g_assert_cmpint(
        EVP_PKEY_get_utf8_string_param(key, "group", group, sizeof group, &group_length), ==, 1);
    g_assert_cmpstr(group, ==, "prime256v1");
    g_assert_cmpint(X509_get_signature_nid(x509), ==, NID_ecdsa_with_SHA256);
    g_assert_cmpint(X509_verify(x509, X509_get0_pubkey(x509)), ==, 1);
    g_assert_cmpint(X509_check_private_key(x509, key), ==, 1);

    /* Valid from a day ago to 30 days ahead. */
    time_t now = time(NULL);
    int days = 0, seconds = 0;
    g_assert_cmpint(
        ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(x509), X509_get0_notAfter(x509)), ==,
        1);
    g_assert_cmpint(days, ==, 31);
    g_assert_cmpint(seconds, ==, 0);
    time_t check = now - 86400 + 120;
    g_assert_cmpint(X509_cmp_time(X509_get0_notBefore(x509), &check), <, 0);
    check = now - 86400 - 120;
    g_assert_cmpint(X509_cmp_time(X509_get0_notBefore(x509), &check), >, 0);

    /* Serials are random: two certificates differ, both positive. */
    moat_certificate *d = moat_certificate_generate(error, sizeof error);
    g_assert_nonnull(d);
    const ASN1_INTEGER *s1 = X509_get0_serialNumber(x509);
    const ASN1_INTEGER *s2 = X509_get0_serialNumber(moat_certificate_x509(d));
    g_assert_cmpint(ASN1_INTEGER_cmp(s1, s2), !=, 0);
    uint64_t serial = 0;
    g_assert_cmpint(ASN1_INTEGER_get_uint64(&serial, s1), ==, 1);
    g_assert_cmpuint(serial, !=, 0);
    g_assert_cmpstr(moat_certificate_fingerprint(c), !=, moat_certificate_fingerprint(d));
    moat_certificate_free(d);
    moat_certificate_free(c);
    moat_certificate_free(NULL);
}

static void test_fingerprint_algorithms(void)
{
    char error[256] = "";
    moat_certificate *c = moat_certificate_generate(error, sizeof error);
    g_assert_nonnull(c);
    X509 *x509 = moat_certificate_x509(c);
    const struct {
        const char *alg;
        GChecksumType type;
        gsize length;
    } cases[] = {
        {"sha-1", G_CHECKSUM_SHA1, 20},     {"sha-256", G_CHECKSUM_SHA256, 32},
        {"SHA-256", G_CHECKSUM_SHA256, 32}, {"sha-384", G_CHECKSUM_SHA384, 48},
        {"sha-512", G_CHECKSUM_SHA512, 64},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        char out[MOAT_FINGERPRINT_MAX_LENGTH];
        g_assert_cmpint(moat_fingerprint_of_x509(x509, cases[i].alg, out, sizeof out), ==,
                        MOAT_FINGERPRINT_OK);
        g_assert_cmpuint(strlen(out), ==, cases[i].length * 3 - 1);
        gchar *expected = expected_fingerprint(x509, cases[i].type);
        g_assert_cmpstr(out, ==, expected);
        g_free(expected);
        /* Exactly enough room works, one byte less does not. */
        char exact[MOAT_FINGERPRINT_MAX_LENGTH];
        g_assert_cmpint(moat_fingerprint_of_x509(x509, cases[i].alg, exact, cases[i].length * 3),
                        ==, MOAT_FINGERPRINT_OK);
        g_assert_cmpint(
            moat_fingerprint_of_x509(x509, cases[i].alg, exact, cases[i].length * 3 - 1), ==,
            MOAT_FINGERPRINT_ERR_SPACE);
    }
    char out[MOAT_FINGERPRINT_MAX_LENGTH];
    g_assert_cmpint(moat_fingerprint_of_x509(x509, "md5", out, sizeof out), ==,
                    MOAT_FINGERPRINT_ERR_ALGORITHM);
    g_assert_cmpint(moat_fingerprint_of_x509(x509, NULL, out, sizeof out), ==,
                    MOAT_FINGERPRINT_ERR_ALGORITHM);
    g_assert_cmpint(moat_fingerprint_of_x509(NULL, "sha-256", out, sizeof out), ==,
                    MOAT_FINGERPRINT_ERR_DIGEST);
    g_assert_true(moat_fingerprint_equal("AB:cd", "ab:CD"));
    g_assert_false(moat_fingerprint_equal("AB:CD", "AB:CE"));
    g_assert_false(moat_fingerprint_equal("AB:CD", "AB:CD:"));
    g_assert_false(moat_fingerprint_equal(NULL, "AB"));
    moat_certificate_free(c);
}

typedef struct {
    gchar *dir;
    gchar *cert_path;
    gchar *key_path;
} pem_files;

static void write_pem(moat_certificate *c, pem_files *f, const char *name)
{
    f->cert_path = g_build_filename(f->dir, name, NULL);
    gchar *key_name = g_strconcat(name, ".key", NULL);
    f->key_path = g_build_filename(f->dir, key_name, NULL);
    g_free(key_name);
    FILE *out = fopen(f->cert_path, "w");
    g_assert_nonnull(out);
    g_assert_cmpint(PEM_write_X509(out, moat_certificate_x509(c)), ==, 1);
    fclose(out);
    out = fopen(f->key_path, "w");
    g_assert_nonnull(out);
    g_assert_cmpint(
        PEM_write_PrivateKey(out, moat_certificate_private_key(c), NULL, NULL, 0, NULL, NULL), ==,
        1);
    fclose(out);
}

static void remove_tree(const gchar *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    g_assert_nonnull(d);
    const gchar *name;
    while ((name = g_dir_read_name(d)) != NULL) {
        gchar *path = g_build_filename(dir, name, NULL);
        g_assert_cmpint(g_unlink(path), ==, 0);
        g_free(path);
    }
    g_dir_close(d);
    g_assert_cmpint(g_rmdir(dir), ==, 0);
}

static void test_load(void)
{
    char error[256] = "";
    GError *gerror = NULL;
    gchar *dir = g_dir_make_tmp("moat-cert-XXXXXX", &gerror);
    g_assert_no_error(gerror);
    moat_certificate *a = moat_certificate_generate(error, sizeof error);
    moat_certificate *b = moat_certificate_generate(error, sizeof error);
    g_assert_nonnull(a);
    g_assert_nonnull(b);
    pem_files fa = {.dir = dir}, fb = {.dir = dir};
    write_pem(a, &fa, "a.pem");
    write_pem(b, &fb, "b.pem");

    moat_certificate *loaded =
        moat_certificate_load(fa.cert_path, fa.key_path, error, sizeof error);
    g_assert_nonnull(loaded);
    g_assert_cmpstr(moat_certificate_fingerprint(loaded), ==, moat_certificate_fingerprint(a));
    moat_dtls_context *ctx = moat_dtls_context_new(loaded, error, sizeof error);
    g_assert_nonnull(ctx);
    moat_dtls_context_free(ctx);
    moat_certificate_free(loaded);

    g_assert_null(moat_certificate_load("/nonexistent/cert.pem", fa.key_path, error, sizeof error));
    g_assert_cmpstr(error, ==,
                    "cannot read certificate /nonexistent/cert.pem: "
                    "No such file or directory");
    g_assert_null(moat_certificate_load(fa.cert_path, "/nonexistent/key.pem", error, sizeof error));
    g_assert_cmpstr(error, ==, "cannot read key /nonexistent/key.pem: No such file or directory");

    g_assert_null(moat_certificate_load(fa.cert_path, fb.key_path, error, sizeof error));
    g_assert_cmpstr(error, ==, "key does not match certificate");

    /* A key file given as the certificate, and a certificate as the key. */
    g_assert_null(moat_certificate_load(fa.key_path, fa.key_path, error, sizeof error));
    gchar *prefix = g_strdup_printf("cannot parse certificate %s: ", fa.key_path);
    g_assert_true(g_str_has_prefix(error, prefix));
    g_free(prefix);
    g_assert_null(moat_certificate_load(fa.cert_path, fa.cert_path, error, sizeof error));
    prefix = g_strdup_printf("cannot parse key %s: ", fa.cert_path);
    g_assert_true(g_str_has_prefix(error, prefix));
    g_free(prefix);

    /* An encrypted key fails instead of prompting on the terminal. */
    gchar *encrypted = g_build_filename(dir, "encrypted.key", NULL);
    FILE *out = fopen(encrypted, "w");
    g_assert_nonnull(out);
    g_assert_cmpint(PEM_write_PrivateKey(out, moat_certificate_private_key(a), EVP_aes_128_cbc(),
                                         (unsigned char *)"secret", 6, NULL, NULL),
                    ==, 1);
    fclose(out);
    g_assert_null(moat_certificate_load(fa.cert_path, encrypted, error, sizeof error));
    g_assert_true(g_str_has_prefix(error, "cannot parse key "));
    g_free(encrypted);

    /* An empty file and a directory. */
    gchar *empty = g_build_filename(dir, "empty.pem", NULL);
    g_assert_true(g_file_set_contents(empty, "", 0, NULL));
    g_assert_null(moat_certificate_load(empty, fa.key_path, error, sizeof error));
    g_assert_true(g_str_has_prefix(error, "cannot parse certificate "));
    g_free(empty);
    g_assert_null(moat_certificate_load(dir, fa.key_path, error, sizeof error));
    g_assert_true(g_str_has_prefix(error, "cannot "));
    g_assert_null(moat_certificate_load(NULL, fa.key_path, error, sizeof error));

    moat_certificate_free(a);
    moat_certificate_free(b);
    g_free(fa.cert_path);
    g_free(fa.key_path);
    g_free(fb.cert_path);
    g_free(fb.key_path);
    remove_tree(dir);
    g_free(dir);
}

/* SSL_get_srtp_profiles falls back to the context's list; OpenSSL has no
 * getter on the context itself. */
static int offered_profiles(SSL_CTX *ctx, const char **first)
{
    SSL *ssl = SSL_new(ctx);
    g_assert_nonnull(ssl);
    STACK_OF(SRTP_PROTECTION_PROFILE) *profiles = SSL_get_srtp_profiles(ssl);
    int n = sk_SRTP_PROTECTION_PROFILE_num(profiles);
    if (first)
        *first = n > 0 ? sk_SRTP_PROTECTION_PROFILE_value(profiles, 0)->name : NULL;
    SSL_free(ssl);
    return n;
}

static void test_context(void)
{
    char error[256] = "";
    moat_certificate *c = moat_certificate_generate(error, sizeof error);
    g_assert_nonnull(c);
    g_assert_null(moat_dtls_context_new(NULL, error, sizeof error));
    g_assert_cmpstr(error, ==, "a DTLS context needs a certificate");
    moat_dtls_context *ctx = moat_dtls_context_new(c, error, sizeof error);
    g_assert_nonnull(ctx);
    /* The context holds its own references: the certificate may go. */
    moat_certificate_free(c);

    SSL_CTX *ssl = moat_dtls_context_ssl_ctx(ctx);
    g_assert_cmpint(SSL_CTX_get_min_proto_version(ssl), ==, DTLS1_2_VERSION);
    g_assert_cmpint(SSL_CTX_get_max_proto_version(ssl), ==, DTLS1_2_VERSION);
    g_assert_cmpint(SSL_CTX_get_verify_mode(ssl), ==,
                    SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT);
    g_assert_cmpint(SSL_CTX_get_read_ahead(ssl), ==, 0);
    g_assert_cmpuint(SSL_CTX_get_options(ssl) & SSL_OP_COOKIE_EXCHANGE, ==, 0);
    g_assert_cmpuint(SSL_CTX_get_options(ssl) & SSL_OP_NO_QUERY_MTU, !=, 0);
    const char *first = NULL;
    g_assert_cmpint(offered_profiles(ssl, &first), ==, 3);
    g_assert_cmpstr(first, ==, "SRTP_AEAD_AES_128_GCM");

    g_assert_cmpint(
        moat_dtls_context_set_srtp_profiles(ctx, "SRTP_AES128_CM_SHA1_80", error, sizeof error), ==,
        0);
    g_assert_cmpint(offered_profiles(ssl, &first), ==, 1);
    g_assert_cmpstr(first, ==, "SRTP_AES128_CM_SHA1_80");
    g_assert_cmpint(
        moat_dtls_context_set_srtp_profiles(ctx, "SRTP_AEAD_AES_256_GCM", error, sizeof error), ==,
        -1);
    g_assert_cmpstr(error, ==, "unsupported SRTP profile \"SRTP_AEAD_AES_256_GCM\"");
    g_assert_cmpint(
        moat_dtls_context_set_srtp_profiles(ctx, "SRTP_AES128_CM_SHA1_80::", error, sizeof error),
        ==, -1);
    g_assert_cmpint(moat_dtls_context_set_srtp_profiles(ctx, "", error, sizeof error), ==, -1);
    g_assert_cmpstr(error, ==, "no SRTP profile given");
    /* A failed call leaves the previous list in place. */
    g_assert_cmpint(offered_profiles(ssl, NULL), ==, 1);
    moat_dtls_context_free(ctx);
    moat_dtls_context_free(NULL);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/dtls/certificate/generate", test_generate);
    g_test_add_func("/dtls/certificate/fingerprint-algorithms", test_fingerprint_algorithms);
    g_test_add_func("/dtls/certificate/load", test_load);
    g_test_add_func("/dtls/context/configuration", test_context);
    return g_test_run();
}
