/* The shared DTLS configuration: builds the SSL_CTX (DTLS 1.2, ECDHE with AEAD
 * suites only, use_srtp profiles, client certificate required, no tickets or
 * renegotiation) and the datagram BIO method every transport is made from. */
#include "dtls_context.h"

#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <openssl/err.h>

#include "dtls_datagram_bio.h"
#include "dtls_listen.h"
#include "openssl_error.h"
#include "srtp/srtp_keying.h"

/* Forward secrecy and AEAD only. RSA suites are there for when we are the
 * client and the peer's key is RSA. No CBC suites: with encrypt-then-MAC,
 * OpenSSL 3.0 turns one forged record with a bad MAC into a fatal alert,
 * so anyone able to spoof the 5-tuple could tear the association down. */
#define CIPHER_LIST                                                                                \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"                                 \
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256:"                                   \
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305"
#define GROUP_LIST "X25519:P-256:P-384"

struct moat_dtls_context {
    SSL_CTX *ssl_ctx;
    BIO_METHOD *bio_method;
};

/* WebRTC certificates are self-signed; trust comes from the fingerprint in
 * the signalled SDP, checked by the transport once the handshake is done. */
static int accept_any_certificate(int preverify_ok, X509_STORE_CTX *store)
{
    return 1;
}

static int fail(char *error, size_t error_size, const char *what)
{
    char reason[160];
    moat_openssl_error_take(reason, sizeof reason, "failed");
    snprintf(error, error_size, "%s: %s", what, reason);
    return -1;
}

static int configure(SSL_CTX *ssl, const moat_certificate *cert, char *error, size_t error_size)
{
    if (SSL_CTX_set_min_proto_version(ssl, DTLS1_2_VERSION) != 1 ||
        SSL_CTX_set_max_proto_version(ssl, DTLS1_2_VERSION) != 1)
        return fail(error, error_size, "cannot restrict to DTLS 1.2");
    if (SSL_CTX_use_certificate(ssl, moat_certificate_x509(cert)) != 1 ||
        SSL_CTX_use_PrivateKey(ssl, moat_certificate_private_key(cert)) != 1 ||
        SSL_CTX_check_private_key(ssl) != 1)
        return fail(error, error_size, "cannot use the certificate");
    if (SSL_CTX_set_cipher_list(ssl, CIPHER_LIST) != 1)
        return fail(error, error_size, "cannot set the cipher list");
    if (SSL_CTX_set1_groups_list(ssl, GROUP_LIST) != 1)
        return fail(error, error_size, "cannot set the ECDHE groups");
    /* Returns 0 on success, unlike most of OpenSSL. */
    if (SSL_CTX_set_tlsext_use_srtp(ssl, MOAT_DTLS_DEFAULT_SRTP_PROFILES) != 0)
        return fail(error, error_size, "cannot set the SRTP profiles");

    SSL_CTX_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       accept_any_certificate);
    /* Records are read one datagram at a time by the datagram BIO. */
    SSL_CTX_set_read_ahead(ssl, 0);
    /* The longest handshake message OpenSSL reassembles (its default is
     * 100 KiB, each a buffer a peer's first fragment allocates): WebRTC
     * certificates take under 2 KB. */
    SSL_CTX_set_max_cert_list(ssl, MOAT_DTLS_MAX_HANDSHAKE_MESSAGE);
    /* The MTU is set per transport; querying a socket makes no sense here.
     * A session cache would be state shared, and locked, across workers. */
    SSL_CTX_set_options(ssl, SSL_OP_NO_QUERY_MTU | SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_clear_options(ssl, SSL_OP_COOKIE_EXCHANGE);
    /* Cookies answer only for a listening transport (dtls_listen.h), on
     * which DTLSv1_listen sets SSL_OP_COOKIE_EXCHANGE. */
    moat_dtls_listen_install(ssl);
    SSL_CTX_set_session_cache_mode(ssl, SSL_SESS_CACHE_OFF);
    /* Record buffers (about 17 KB a connection) only while a record is in
     * them: a media-only session uses DTLS for its handshake, then rarely. */
    SSL_CTX_set_mode(ssl, SSL_MODE_RELEASE_BUFFERS);
    return 0;
}

moat_dtls_context *moat_dtls_context_new(const moat_certificate *cert, char *error,
                                         size_t error_size)
{
    if (cert == NULL) {
        snprintf(error, error_size, "a DTLS context needs a certificate");
        return NULL;
    }
    ERR_clear_error();
    moat_dtls_context *ctx = g_new0(moat_dtls_context, 1);
    ctx->ssl_ctx = SSL_CTX_new(DTLS_method());
    if (ctx->ssl_ctx == NULL) {
        fail(error, error_size, "cannot create the DTLS context");
        moat_dtls_context_free(ctx);
        return NULL;
    }
    if (configure(ctx->ssl_ctx, cert, error, error_size) != 0) {
        moat_dtls_context_free(ctx);
        return NULL;
    }
    ctx->bio_method = moat_dtls_datagram_bio_method_new();
    if (ctx->bio_method == NULL) {
        fail(error, error_size, "cannot create the datagram BIO method");
        moat_dtls_context_free(ctx);
        return NULL;
    }
    return ctx;
}

int moat_dtls_context_set_srtp_profiles(moat_dtls_context *ctx, const char *profiles, char *error,
                                        size_t error_size)
{
    if (profiles == NULL || profiles[0] == '\0') {
        snprintf(error, error_size, "no SRTP profile given");
        return -1;
    }
    /* OpenSSL knows profiles the SRTP layer does not (AES-256-GCM, NULL
     * ciphers); offering one would negotiate keys nobody can use. */
    gchar **names = g_strsplit(profiles, ":", -1);
    for (gchar **n = names; *n != NULL; n++) {
        if (moat_srtp_profile_from_name(*n) == 0) {
            snprintf(error, error_size, "unsupported SRTP profile \"%s\"", *n);
            g_strfreev(names);
            return -1;
        }
    }
    g_strfreev(names);
    ERR_clear_error();
    if (SSL_CTX_set_tlsext_use_srtp(ctx->ssl_ctx, profiles) != 0)
        return fail(error, error_size, "cannot set the SRTP profiles");
    return 0;
}

void moat_dtls_context_free(moat_dtls_context *ctx)
{
    if (ctx == NULL)
        return;
    SSL_CTX_free(ctx->ssl_ctx);
    moat_dtls_datagram_bio_method_free(ctx->bio_method);
    g_free(ctx);
}

SSL_CTX *moat_dtls_context_ssl_ctx(const moat_dtls_context *ctx)
{
    return ctx->ssl_ctx;
}

const BIO_METHOD *moat_dtls_context_bio_method(const moat_dtls_context *ctx)
{
    return ctx->bio_method;
}
