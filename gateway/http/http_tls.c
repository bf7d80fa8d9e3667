/* Owns the HTTP listener's TLS: loading the certificate and key, checking
 * them at start, and wrapping accepted connections (http_tls.h). */
#include "http/http_tls.h"

#include <glib.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>

static bool has(const char *value)
{
    return value && *value;
}

bool moat_http_tls_configured(const moat_config *config)
{
    return has(config->http_tls_cert) && has(config->http_tls_key);
}

/* GLib's loader takes any key with any certificate (every handshake would
 * then fail): OpenSSL checks that the key is the certificate's. */
static int check_key_matches(const moat_config *config, char *error, size_t error_size)
{
    FILE *cert_file = fopen(config->http_tls_cert, "r");
    FILE *key_file = fopen(config->http_tls_key, "r");
    X509 *cert = cert_file ? PEM_read_X509(cert_file, NULL, NULL, NULL) : NULL;
    EVP_PKEY *key = key_file ? PEM_read_PrivateKey(key_file, NULL, NULL, NULL) : NULL;
    int status = cert && key && X509_check_private_key(cert, key) == 1 ? 0 : -1;
    if (status)
        snprintf(error, error_size,
                 "[http] tls_key = \"%s\" is not the private key of tls_cert = \"%s\"",
                 config->http_tls_key, config->http_tls_cert);
    X509_free(cert);
    EVP_PKEY_free(key);
    if (cert_file)
        fclose(cert_file);
    if (key_file)
        fclose(key_file);
    return status;
}

GTlsCertificate *moat_http_tls_load(const moat_config *config, char *error, size_t error_size)
{
    if (!moat_http_tls_configured(config))
        return NULL;
    GTlsBackend *backend = g_tls_backend_get_default();
    if (!backend || !g_tls_backend_supports_tls(backend)) {
        snprintf(error, error_size,
                 "[http] tls_cert: GLib has no TLS backend (install glib-networking)");
        return NULL;
    }
    GError *gerror = NULL;
    GTlsCertificate *certificate =
        g_tls_certificate_new_from_files(config->http_tls_cert, config->http_tls_key, &gerror);
    if (!certificate) {
        snprintf(error, error_size, "[http] tls_cert = \"%s\", tls_key = \"%s\": %s",
                 config->http_tls_cert, config->http_tls_key, gerror->message);
        g_error_free(gerror);
        return NULL;
    }
    if (check_key_matches(config, error, error_size) != 0) {
        g_object_unref(certificate);
        return NULL;
    }
    return certificate;
}

int moat_http_tls_check(const moat_config *config, char *error, size_t error_size)
{
    if (!moat_http_tls_configured(config))
        return 0;
    GTlsCertificate *certificate = moat_http_tls_load(config, error, error_size);
    if (!certificate)
        return -1;
    g_object_unref(certificate);
    return 0;
}

/* "database" NULL: the server never asks for client certificates, so it
 * has nothing to verify against. Left at its default, glib-networking
 * loaded the whole system CA bundle into a new GnuTLS trust list for every
 * connection: 3.7 MiB of heap each, not given back after the close. */
GIOStream *moat_http_tls_wrap(GIOStream *base, GTlsCertificate *certificate)
{
    static const char *const protocols[] = {"http/1.1", "http/1.0", NULL};
    GIOStream *tls =
        g_initable_new(g_tls_backend_get_server_connection_type(g_tls_backend_get_default()), NULL,
                       NULL, "base-io-stream", base, "certificate", certificate, "database", NULL,
                       "require-close-notify", FALSE, "advertised-protocols", protocols, NULL);
    if (!tls)
        g_io_stream_close(base, NULL, NULL);
    g_object_unref(base);
    return tls;
}

#define TLS_RECORD_HEADER      5
#define TLS_RECORD_HANDSHAKE   22
#define TLS_RECORD_MAX_PAYLOAD (16384 + 2048)

moat_tls_hello_state moat_http_tls_hello_state(const unsigned char *head, size_t head_length,
                                               size_t available)
{
    if (head_length >= 1 && head[0] != TLS_RECORD_HANDSHAKE)
        return MOAT_TLS_HELLO_NOT_TLS;
    if (head_length >= 2 && head[1] != 3)
        return MOAT_TLS_HELLO_NOT_TLS;
    if (head_length < TLS_RECORD_HEADER)
        return MOAT_TLS_HELLO_INCOMPLETE;
    size_t length = ((size_t)head[3] << 8) | head[4];
    if (length == 0 || length > TLS_RECORD_MAX_PAYLOAD)
        return MOAT_TLS_HELLO_NOT_TLS;
    return available >= TLS_RECORD_HEADER + length ? MOAT_TLS_HELLO_COMPLETE
                                                   : MOAT_TLS_HELLO_INCOMPLETE;
}
