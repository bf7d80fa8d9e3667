/* libFuzzer target for moat-tunnel's UDP baseline listener's receive path
 * (tools/moat-tunnel/tunnel_dtls.c): datagrams from strangers go through
 * the ClientHello test (tunnel_hello.h) and, once a sender is tried, into
 * a server DTLS transport, which is replaced by a fresh one when its
 * handshake fails, as the listener does. Input: 16-bit big-endian length
 * then bytes, per datagram, each copied to a buffer of exactly its length.
 * An odd first byte starts with a real client's ClientHello, so mutations
 * reach the handshake's later states. Checks: the test reads nothing past
 * a datagram (ASan, exact copies); a real client's first datagram passes
 * it; a transport closes at most once, and a fresh one takes its place. */
#include "tunnel_hello.h"

#include "dtls/certificate.h"
#include "dtls/dtls_context.h"
#include "dtls/dtls_transport.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DATAGRAM 4096
#define MAX_STEPS    48

typedef struct {
    unsigned closed;
    const uint8_t *first_sent; /* the client's first datagram, once */
    size_t first_length;
    uint8_t first[MAX_DATAGRAM];
} side;

static void on_send(void *user, const uint8_t *datagram, size_t length)
{
    side *s = user;
    if (s->first_sent == NULL && length <= sizeof s->first) {
        memcpy(s->first, datagram, length);
        s->first_sent = s->first;
        s->first_length = length;
    }
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
    if (t == NULL || moat_dtls_transport_start(t) != MOAT_DTLS_OK)
        abort();
    return t;
}

/* One datagram at the listener, in an exactly sized copy. */
static void arrive(moat_dtls_transport **server, side *s, bool *tried, const uint8_t *data,
                   size_t length)
{
    uint8_t *copy = malloc(length ? length : 1);
    if (length)
        memcpy(copy, data, length);
    if (!*tried && !tunnel_is_client_hello(copy, length)) {
        free(copy); /* ignored: nothing latched */
        return;
    }
    *tried = true;
    moat_dtls_transport_receive(*server, copy, length);
    free(copy);
    if (s->closed) { /* refused: listen again with a fresh transport */
        moat_dtls_transport_free(*server);
        *server = make(listener_context, MOAT_DTLS_ROLE_SERVER, peer_certificate, s);
        *tried = false;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    side server_side, client_side;
    moat_dtls_transport *server =
        make(listener_context, MOAT_DTLS_ROLE_SERVER, peer_certificate, &server_side);
    bool tried = false;
    if (data[0] & 1) {
        moat_dtls_transport *client =
            make(peer_context, MOAT_DTLS_ROLE_CLIENT, listener_certificate, &client_side);
        if (client_side.first_sent == NULL ||
            !tunnel_is_client_hello(client_side.first, client_side.first_length))
            abort(); /* a real client's first datagram passes the test */
        arrive(&server, &server_side, &tried, client_side.first, client_side.first_length);
        moat_dtls_transport_free(client);
    }
    const uint8_t *p = data + 1;
    size_t left = size - 1;
    for (int i = 0; i < MAX_STEPS && left >= 2; i++) {
        size_t want = (size_t)(p[0] << 8 | p[1]) % MAX_DATAGRAM;
        p += 2;
        left -= 2;
        if (want > left)
            want = left;
        arrive(&server, &server_side, &tried, p, want);
        p += want;
        left -= want;
    }
    moat_dtls_transport_free(server);
    return 0;
}
