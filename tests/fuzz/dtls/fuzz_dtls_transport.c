/* libFuzzer target for a server-side DTLS transport. The first input byte
 * picks a mode (bit 1: the server is a stateless listener, dtls_listen.h,
 * each datagram from one of two sources; while it listens, one datagram
 * in gets at most one smaller datagram out):
 *   even: the rest is a series of datagrams (16-bit big-endian length, then
 *         bytes) fed straight to a fresh server;
 *   odd:  a real client handshakes with the server and the rest of the input
 *         says what happens to each client datagram on the way (delivered,
 *         dropped, bit-flipped, truncated, overwritten, or preceded by an
 *         injected datagram), so mutations reach the states past the
 *         ClientHello that random bytes never would. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "dtls/certificate.h"
#include "dtls/dtls_context.h"
#include "dtls/dtls_listen.h"
#include "dtls/dtls_transport.h"

#define MAX_QUEUED   64
#define MAX_DATAGRAM 4096
#define MAX_STEPS    48

typedef struct {
    const uint8_t *p;
    size_t left;
} input;

static bool take_u8(input *in, uint8_t *out)
{
    if (in->left < 1)
        return false;
    *out = in->p[0];
    in->p++;
    in->left--;
    return true;
}

static bool take_u16(input *in, uint16_t *out)
{
    if (in->left < 2)
        return false;
    *out = (uint16_t)(in->p[0] << 8 | in->p[1]);
    in->p += 2;
    in->left -= 2;
    return true;
}

/* A length-prefixed chunk; a short tail is taken whole. */
static bool take_chunk(input *in, const uint8_t **data, size_t *length)
{
    uint16_t n = 0;
    if (!take_u16(in, &n))
        return false;
    size_t want = n % MAX_DATAGRAM;
    if (want > in->left)
        want = in->left;
    *data = in->p;
    *length = want;
    in->p += want;
    in->left -= want;
    return true;
}

typedef struct {
    GQueue outbox;
    unsigned connected, closed;
    size_t application_bytes;
} side;

static void on_send(void *user, const uint8_t *datagram, size_t length)
{
    side *s = user;
    if (g_queue_get_length(&s->outbox) < MAX_QUEUED)
        g_queue_push_tail(&s->outbox, g_bytes_new(datagram, length));
}

static void on_connected(void *user, const moat_srtp_keying *keys)
{
    side *s = user;
    if (keys->key_length == 0 || keys->key_length > MOAT_SRTP_MAX_KEY_LENGTH ||
        keys->salt_length > MOAT_SRTP_MAX_SALT_LENGTH)
        abort();
    s->connected++;
}

static void on_application_data(void *user, const uint8_t *data, size_t length)
{
    side *s = user;
    if (length == 0 || length > MOAT_DTLS_MAX_APPLICATION_DATA)
        abort();
    s->application_bytes += length;
}

static void on_closed(void *user, moat_dtls_state state, const char *reason)
{
    side *s = user;
    if (reason == NULL || (state != MOAT_DTLS_CLOSED && state != MOAT_DTLS_FAILED))
        abort();
    s->closed++;
}

static const moat_dtls_callbacks callbacks = {
    .send = on_send,
    .connected = on_connected,
    .application_data = on_application_data,
    .closed = on_closed,
};

/* Made once: certificate generation would dominate every run otherwise. */
static moat_certificate *server_certificate, *client_certificate;
static moat_dtls_context *server_context, *client_context;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char error[256];
    server_certificate = moat_certificate_generate(error, sizeof error);
    client_certificate = moat_certificate_generate(error, sizeof error);
    if (!server_certificate || !client_certificate)
        abort();
    server_context = moat_dtls_context_new(server_certificate, error, sizeof error);
    client_context = moat_dtls_context_new(client_certificate, error, sizeof error);
    if (!server_context || !client_context)
        abort();
    return 0;
}

/* This input's server listens statelessly (the mode byte's bit 1). */
static bool listening;

static moat_dtls_transport *make(moat_dtls_context *ctx, moat_dtls_role role,
                                 const moat_certificate *peer, side *s)
{
    char error[256];
    moat_dtls_transport *t =
        moat_dtls_transport_new(ctx, role, "sha-256", moat_certificate_fingerprint(peer),
                                &callbacks, s, error, sizeof error);
    bool listen = listening && role == MOAT_DTLS_ROLE_SERVER;
    if (t == NULL ||
        (listen ? moat_dtls_transport_listen(t) : moat_dtls_transport_start(t)) != MOAT_DTLS_OK)
        abort();
    return t;
}

/* One datagram to the server from source 0 or 1 (a listener's cookie binds
 * it); a listener that goes on listening answered with at most one
 * datagram, no longer than what it was sent. */
static void server_receive(moat_dtls_transport *server, side *s, unsigned source,
                           const uint8_t *data, size_t length)
{
    if (!moat_dtls_transport_listening(server)) {
        moat_dtls_transport_receive(server, data, length);
        return;
    }
    static const char *sources[] = {"source-a", "source-b"};
    if (moat_dtls_transport_listen_source(server, sources[source % 2], 8) != MOAT_DTLS_OK)
        abort();
    guint before = g_queue_get_length(&s->outbox);
    moat_dtls_transport_receive(server, data, length);
    if (!moat_dtls_transport_listening(server))
        return;
    guint after = g_queue_get_length(&s->outbox);
    if (after > before + 1)
        abort();
    if (after == before + 1 && g_bytes_get_size(g_queue_peek_tail(&s->outbox)) > length)
        abort();
}

static void deliver_all(side *from, moat_dtls_transport *to, side *to_side)
{
    GBytes *b;
    while ((b = g_queue_pop_head(&from->outbox)) != NULL) {
        gsize n = 0;
        const uint8_t *d = g_bytes_get_data(b, &n);
        server_receive(to, to_side, 0, d, n);
        g_bytes_unref(b);
    }
}

static void check_state(moat_dtls_transport *t, const side *s)
{
    moat_dtls_state state = moat_dtls_transport_state(t);
    if (s->closed > 1 || s->connected > 1)
        abort();
    if (state == MOAT_DTLS_CONNECTED && s->connected != 1)
        abort();
    if (state == MOAT_DTLS_FAILED && s->closed != 1)
        abort();
    moat_dtls_transport_stats stats;
    moat_dtls_transport_stats_get(t, &stats);
    uint64_t sum = 0;
    for (int i = 0; i < MOAT_DTLS_RECORD_RESULT_COUNT; i++)
        sum += stats.rejected[i];
    if (sum != stats.datagrams_rejected || stats.rejected[MOAT_DTLS_RECORD_OK] != 0)
        abort();
}

/* Application data both ways and an orderly close, when connected. */
static void finish_session(input *in, moat_dtls_transport *server, side *server_side,
                           moat_dtls_transport *client, side *client_side)
{
    const uint8_t *data;
    size_t length;
    if (take_chunk(in, &data, &length) && length > 0) {
        moat_dtls_transport_send(server, data, length);
        if (client)
            moat_dtls_transport_send(client, data, length);
    }
    if (client) {
        deliver_all(client_side, server, server_side);
        deliver_all(server_side, client, client_side);
    }
    moat_dtls_transport_timeout_ms(server);
    moat_dtls_transport_handle_timeout(server);
    moat_dtls_transport_shutdown(server);
    if (client)
        deliver_all(server_side, client, client_side);
}

static void run_raw(input *in)
{
    side s = {0};
    g_queue_init(&s.outbox);
    moat_dtls_transport *server =
        make(server_context, MOAT_DTLS_ROLE_SERVER, client_certificate, &s);
    const uint8_t *data;
    size_t length;
    for (int i = 0; i < MAX_STEPS && take_chunk(in, &data, &length); i++) {
        server_receive(server, &s, (unsigned)i, data, length);
        check_state(server, &s);
        /* Our own output is discarded as a lossy network would. */
        g_queue_clear_full(&s.outbox, (GDestroyNotify)g_bytes_unref);
    }
    finish_session(in, server, &s, NULL, NULL);
    check_state(server, &s);
    moat_dtls_transport_free(server);
    g_queue_clear_full(&s.outbox, (GDestroyNotify)g_bytes_unref);
}

static void forward_mutated(input *in, GBytes *datagram, moat_dtls_transport *server,
                            side *server_side)
{
    gsize n = 0;
    const uint8_t *original = g_bytes_get_data(datagram, &n);
    uint8_t copy[MAX_DATAGRAM + 64];
    if (n > sizeof copy)
        n = sizeof copy;
    memcpy(copy, original, n);
    uint8_t op = 0, value = 0;
    uint16_t position = 0;
    const uint8_t *data;
    size_t length;
    take_u8(in, &op);
    switch (op % 6) {
    case 0:
        break;
    case 1:
        return; /* lost */
    case 2:
        if (take_u16(in, &position) && take_u8(in, &value) && n > 0)
            copy[position % n] ^= (uint8_t)(1u << (value % 8));
        break;
    case 3:
        if (take_u16(in, &position))
            n = position % (n + 1);
        break;
    case 4:
        if (take_u16(in, &position) && take_u8(in, &value) && n > 0)
            copy[position % n] = value;
        break;
    case 5:
        if (take_chunk(in, &data, &length))
            server_receive(server, server_side, 1, data, length);
        break;
    }
    server_receive(server, server_side, value, copy, n);
}

static void run_proxied(input *in)
{
    side s = {0}, c = {0};
    g_queue_init(&s.outbox);
    g_queue_init(&c.outbox);
    moat_dtls_transport *server =
        make(server_context, MOAT_DTLS_ROLE_SERVER, client_certificate, &s);
    moat_dtls_transport *client =
        make(client_context, MOAT_DTLS_ROLE_CLIENT, server_certificate, &c);
    for (int step = 0; step < MAX_STEPS && in->left > 0; step++) {
        GBytes *next = g_queue_pop_head(&c.outbox);
        if (next == NULL) {
            /* The client is waiting: let the input speak for it. */
            const uint8_t *data;
            size_t length;
            if (take_chunk(in, &data, &length))
                server_receive(server, &s, 1, data, length);
        } else {
            forward_mutated(in, next, server, &s);
            g_bytes_unref(next);
        }
        check_state(server, &s);
        deliver_all(&s, client, &c);
    }
    finish_session(in, server, &s, client, &c);
    check_state(server, &s);
    moat_dtls_transport_free(client);
    moat_dtls_transport_free(server);
    g_queue_clear_full(&s.outbox, (GDestroyNotify)g_bytes_unref);
    g_queue_clear_full(&c.outbox, (GDestroyNotify)g_bytes_unref);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    uint8_t mode = 0;
    if (!take_u8(&in, &mode))
        return 0;
    listening = mode & 2;
    if (mode % 2 == 0)
        run_raw(&in);
    else
        run_proxied(&in);
    return 0;
}
