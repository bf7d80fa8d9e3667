/* Owns the stateless DTLS listener (dtls_listen.h): the cookie key and the
 * current datagram's source, the cookie callbacks, and the receive path of a
 * transport that has not yet seen a valid cookie (OpenSSL's DTLSv1_listen
 * over the transport's own datagram BIO). */
#include "dtls_listen.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "dtls_transport_private.h"

#define COOKIE_KEY_LENGTH 32
#define COOKIE_LENGTH     32 /* HMAC-SHA256; RFC 6347 allows up to 255 */
/* A cookie is valid in the minute it was made and the next one. */
#define COOKIE_EPOCH_US (60 * G_USEC_PER_SEC)

struct moat_dtls_listener {
    uint8_t key[COOKIE_KEY_LENGTH];
    uint8_t source[MOAT_DTLS_LISTEN_SOURCE_MAX];
    size_t source_length;
    BIO_ADDR *client; /* DTLSv1_listen's out parameter; unused */
};

void moat_dtls_listener_free(moat_dtls_listener *listener)
{
    if (listener == NULL)
        return;
    BIO_ADDR_free(listener->client);
    OPENSSL_cleanse(listener, sizeof *listener);
    g_free(listener);
}

/* HMAC-SHA256(key, epoch || source) into out[COOKIE_LENGTH]. */
static bool make_cookie(const moat_dtls_listener *l, uint64_t epoch, uint8_t *out)
{
    uint8_t input[8 + MOAT_DTLS_LISTEN_SOURCE_MAX];
    for (int i = 0; i < 8; i++)
        input[i] = (uint8_t)(epoch >> (56 - 8 * i));
    memcpy(input + 8, l->source, l->source_length);
    unsigned int length = 0;
    return HMAC(EVP_sha256(), l->key, sizeof l->key, input, 8 + l->source_length, out, &length) !=
               NULL &&
           length == COOKIE_LENGTH;
}

static const moat_dtls_listener *listener_of(SSL *ssl)
{
    const moat_dtls_transport *t = SSL_get_app_data(ssl);
    return t != NULL && t->listener != NULL && t->listener->source_length > 0 ? t->listener : NULL;
}

static uint64_t current_epoch(void)
{
    return (uint64_t)g_get_monotonic_time() / COOKIE_EPOCH_US;
}

static int generate_cookie(SSL *ssl, unsigned char *cookie, unsigned int *length)
{
    const moat_dtls_listener *l = listener_of(ssl);
    if (l == NULL || !make_cookie(l, current_epoch(), cookie))
        return 0;
    *length = COOKIE_LENGTH;
    return 1;
}

static int verify_cookie(SSL *ssl, const unsigned char *cookie, unsigned int length)
{
    const moat_dtls_listener *l = listener_of(ssl);
    if (l == NULL || length != COOKIE_LENGTH)
        return 0;
    uint64_t epoch = current_epoch();
    uint8_t expected[COOKIE_LENGTH];
    if (make_cookie(l, epoch, expected) && CRYPTO_memcmp(expected, cookie, COOKIE_LENGTH) == 0)
        return 1;
    if (epoch > 0 && make_cookie(l, epoch - 1, expected) &&
        CRYPTO_memcmp(expected, cookie, COOKIE_LENGTH) == 0)
        return 1;
    return 0;
}

void moat_dtls_listen_install(SSL_CTX *ctx)
{
    SSL_CTX_set_cookie_generate_cb(ctx, generate_cookie);
    SSL_CTX_set_cookie_verify_cb(ctx, verify_cookie);
}

int moat_dtls_transport_listen(moat_dtls_transport *t)
{
    if (t == NULL)
        return MOAT_DTLS_ERR_INVALID;
    if (t->state != MOAT_DTLS_NEW || t->role != MOAT_DTLS_ROLE_SERVER || t->ssl == NULL)
        return MOAT_DTLS_ERR_STATE;
    moat_dtls_listener *l = g_new0(moat_dtls_listener, 1);
    l->client = BIO_ADDR_new();
    if (l->client == NULL || RAND_bytes(l->key, sizeof l->key) != 1) {
        ERR_clear_error();
        moat_dtls_listener_free(l);
        return MOAT_DTLS_ERR_FAILED;
    }
    t->listener = l;
    t->state = MOAT_DTLS_CONNECTING;
    SSL_set_accept_state(t->ssl);
    return MOAT_DTLS_OK;
}

int moat_dtls_transport_listen_source(moat_dtls_transport *t, const void *address, size_t length)
{
    if (t == NULL || address == NULL || length == 0 || length > MOAT_DTLS_LISTEN_SOURCE_MAX)
        return MOAT_DTLS_ERR_INVALID;
    if (t->listener == NULL)
        return MOAT_DTLS_ERR_STATE;
    memcpy(t->listener->source, address, length);
    t->listener->source_length = length;
    return MOAT_DTLS_OK;
}

bool moat_dtls_transport_listening(const moat_dtls_transport *t)
{
    return t != NULL && t->listener != NULL;
}

int moat_dtls_listener_receive(moat_dtls_transport *t, const uint8_t *datagram, size_t length)
{
    if (t->listener->source_length == 0) {
        t->stats.listen_dropped++; /* nobody said where it came from */
        return MOAT_DTLS_OK;
    }
    uint64_t sent = t->link.datagrams_sent;
    t->link.incoming = datagram;
    t->link.incoming_length = length;
    ERR_clear_error();
    /* 1: a valid cookie, the ClientHello is buffered for the handshake; 0:
     * answered with a HelloVerifyRequest or dropped; -1: dropped too (the
     * listener outlives what one datagram can do). */
    int r = DTLSv1_listen(t->ssl, t->listener->client);
    ERR_clear_error();
    t->link.incoming = NULL;
    t->link.incoming_length = 0;
    if (t->link.datagrams_sent > sent)
        t->stats.hello_verify_requests++;
    if (r != 1) {
        if (t->link.datagrams_sent == sent)
            t->stats.listen_dropped++;
        t->listener->source_length = 0; /* one datagram, one source */
        return MOAT_DTLS_OK;
    }
    t->handshake_deadline_us =
        g_get_monotonic_time() + (gint64)MOAT_DTLS_HANDSHAKE_TIMEOUT_MS * 1000;
    /* The handshake checks the buffered ClientHello's cookie again, so the
     * listener goes only after it. SSL_clear inside DTLSv1_listen kept the
     * link MTU (SSL_OP_NO_QUERY_MTU). */
    moat_dtls_transport_advance(t);
    moat_dtls_listener_free(t->listener);
    t->listener = NULL;
    return t->state == MOAT_DTLS_FAILED ? MOAT_DTLS_ERR_FAILED : MOAT_DTLS_OK;
}
