/* libFuzzer target for moat-tunnel's UDP baseline listener's receive path
 * (tools/moat-tunnel/tunnel_dtls.c): datagrams from strangers go through
 * the ClientHello test (tunnel_hello.h) into a stateless listening DTLS
 * transport (dtls/dtls_listen.h) and, once a cookie came back, into its
 * handshake; the transport is replaced by a fresh listening one when the
 * handshake fails, as the listener does. Input: 16-bit big-endian length
 * then bytes, per datagram, each copied to a buffer of exactly its length.
 * An odd first byte starts with a real client's cookie exchange (its
 * ClientHello, the HelloVerifyRequest, its ClientHello with the cookie), so
 * mutations reach the handshake's later states. Checks: the test reads
 * nothing past a datagram (ASan, exact copies); a real client's first
 * datagram passes it and its cookie is taken; while listening, one datagram
 * in gets at most one datagram out, no longer; a transport closes at most
 * once, and a fresh one takes its place. */
#include "tunnel_hello.h"

#include "dtls/certificate.h"
#include "dtls/dtls_context.h"
#include "dtls/dtls_listen.h"
#include "dtls/dtls_transport.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DATAGRAM 4096
#define MAX_STEPS    48

typedef struct {
    unsigned closed;
    unsigned sends;
    size_t last_length; /* of the last datagram sent; 0: too long to keep */
    uint8_t last[MAX_DATAGRAM];
} side;

static void on_send(void *user, const uint8_t *datagram, size_t length)
{
    side *s = user;
    s->sends++;
    s->last_length = length <= sizeof s->last ? length : 0;
    if (s->last_length)
        memcpy(s->last, datagram, length);
}

static void on_connected(void *user, const moat_srtp_keying *keys)
{
    (void)user;
    (void)keys;
}

static void on_data(void *user, const uint8_t *data, size_t length)
{
    (void)user;
    if (length == 0 || length > MOAT_DTLS_MAX_APPLICATION_DATA)
        abort();
}

static void on_closed(void *user, moat_dtls_state state, const char *reason)
{
    side *s = user;
    if (reason == NULL || (state != MOAT_DTLS_CLOSED && state != MOAT_DTLS_FAILED))
        abort();
    if (++s->closed > 1)
        abort();
}

static const moat_dtls_callbacks callbacks = {
    .send = on_send,
    .connected = on_connected,
    .application_data = on_data,
    .closed = on_closed,
};

static moat_certificate *listener_certificate, *peer_certificate;
static moat_dtls_context *listener_context, *peer_context;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char error[256];
    listener_certificate = moat_certificate_generate(error, sizeof error);
    peer_certificate = moat_certificate_generate(error, sizeof error);
    if (!listener_certificate || !peer_certificate)
        abort();
    listener_context = moat_dtls_context_new(listener_certificate, error, sizeof error);
    peer_context = moat_dtls_context_new(peer_certificate, error, sizeof error);
    if (!listener_context || !peer_context)
        abort();
    return 0;
}

static moat_dtls_transport *make(moat_dtls_context *ctx, moat_dtls_role role,
                                 const moat_certificate *other, side *s)
{
    char error[256];
    memset(s, 0, sizeof *s);
    moat_dtls_transport *t =
        moat_dtls_transport_new(ctx, role, "sha-256", moat_certificate_fingerprint(other),
                                &callbacks, s, error, sizeof error);
    if (t == NULL || (role == MOAT_DTLS_ROLE_SERVER ? moat_dtls_transport_listen(t)
                                                    : moat_dtls_transport_start(t)) != MOAT_DTLS_OK)
        abort();
    return t;
}

/* One datagram at the listener, in an exactly sized copy. */
static void arrive(moat_dtls_transport **server, side *s, const uint8_t *data, size_t length)
{
    uint8_t *copy = malloc(length ? length : 1);
    if (length)
        memcpy(copy, data, length);
    bool listening = moat_dtls_transport_listening(*server);
    if (listening && !tunnel_is_client_hello(copy, length)) {
        free(copy); /* ignored: nothing latched */
        return;
    }
    static const struct {
        char address[16];
    } stranger = {"stranger"};
    if (listening &&
        moat_dtls_transport_listen_source(*server, &stranger, sizeof stranger) != MOAT_DTLS_OK)
        abort();
    unsigned sends = s->sends;
    moat_dtls_transport_receive(*server, copy, length);
    free(copy);
    /* Still listening: one answer at most, never longer than the datagram. */
    if (moat_dtls_transport_listening(*server) &&
        (s->sends > sends + 1 || (s->sends == sends + 1 && s->last_length > length)))
        abort();
    if (s->closed) { /* refused: listen again with a fresh transport */
        moat_dtls_transport_free(*server);
        *server = make(listener_context, MOAT_DTLS_ROLE_SERVER, peer_certificate, s);
    }
}

/* A real client's cookie exchange: the listener must take its cookie. */
static void real_client_hello(moat_dtls_transport **server, side *server_side)
{
    side client_side;
    moat_dtls_transport *client =
        make(peer_context, MOAT_DTLS_ROLE_CLIENT, listener_certificate, &client_side);
    if (client_side.sends != 1 ||
        !tunnel_is_client_hello(client_side.last, client_side.last_length))
        abort(); /* a real client's first datagram passes the test */
    arrive(server, server_side, client_side.last, client_side.last_length);
    if (server_side->sends != 1 || server_side->last_length == 0)
        abort(); /* a HelloVerifyRequest */
    moat_dtls_transport_receive(client, server_side->last, server_side->last_length);
    if (client_side.sends != 2)
        abort(); /* its ClientHello with the cookie */
    arrive(server, server_side, client_side.last, client_side.last_length);
    if (moat_dtls_transport_listening(*server))
        abort(); /* the cookie was taken */
    moat_dtls_transport_free(client);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    side server_side;
    moat_dtls_transport *server =
        make(listener_context, MOAT_DTLS_ROLE_SERVER, peer_certificate, &server_side);
    if (data[0] & 1)
        real_client_hello(&server, &server_side);
    const uint8_t *p = data + 1;
    size_t left = size - 1;
    for (int i = 0; i < MAX_STEPS && left >= 2; i++) {
        size_t want = (size_t)(p[0] << 8 | p[1]) % MAX_DATAGRAM;
        p += 2;
        left -= 2;
        if (want > left)
            want = left;
        arrive(&server, &server_side, p, want);
        p += want;
        left -= want;
    }
    moat_dtls_transport_free(server);
    return 0;
}
