/* Test helper: a DTLS client and server transport wired back to back through
 * in-memory queues, pumped and settled with their retransmit timers, and
 * checked for a completed handshake and data round trips. */
#include "dtls_test_pair.h"

#include <string.h>

static void on_send(void *user, const uint8_t *datagram, size_t length)
{
    dtls_test_endpoint *e = user;
    e->datagrams_sent++;
    if (e->transport && moat_dtls_transport_state(e->transport) == MOAT_DTLS_CONNECTING &&
        length > e->largest_handshake_datagram)
        e->largest_handshake_datagram = length;
    g_queue_push_tail(&e->outbox, g_bytes_new(datagram, length));
}

static void on_connected(void *user, const moat_srtp_keying *keys)
{
    dtls_test_endpoint *e = user;
    e->connected = TRUE;
    e->connected_calls++;
    e->keys = *keys;
}

static void on_application_data(void *user, const uint8_t *data, size_t length)
{
    dtls_test_endpoint *e = user;
    g_ptr_array_add(e->received, g_bytes_new(data, length));
}

static void on_closed(void *user, moat_dtls_state state, const char *reason)
{
    dtls_test_endpoint *e = user;
    e->closed_calls++;
    e->closed_state = state;
    g_strlcpy(e->closed_reason, reason, sizeof e->closed_reason);
}

static const moat_dtls_callbacks callbacks = {
    .send = on_send,
    .connected = on_connected,
    .application_data = on_application_data,
    .closed = on_closed,
};

static void make_identity(dtls_test_endpoint *e, const dtls_test_identity *shared,
                          moat_certificate *certificate, const char *profiles)
{
    char error[256] = "";
    g_queue_init(&e->outbox);
    e->received = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    if (shared) {
        e->certificate = shared->certificate;
        e->context = shared->context;
        e->borrowed_identity = TRUE;
        return;
    }
    e->certificate = certificate ? certificate : moat_certificate_generate(error, sizeof error);
    g_assert_nonnull(e->certificate);
    e->context = moat_dtls_context_new(e->certificate, error, sizeof error);
    g_assert_nonnull(e->context);
    if (profiles)
        g_assert_cmpint(
            moat_dtls_context_set_srtp_profiles(e->context, profiles, error, sizeof error), ==, 0);
}

static void make_transport(dtls_test_endpoint *e, moat_dtls_role role,
                           const dtls_test_endpoint *peer, const char *expects, gboolean lowercase)
{
    char error[256] = "";
    gchar *fingerprint =
        g_strdup(expects ? expects : moat_certificate_fingerprint(peer->certificate));
    if (lowercase) {
        gchar *lower = g_ascii_strdown(fingerprint, -1);
        g_free(fingerprint);
        fingerprint = lower;
    }
    e->transport = moat_dtls_transport_new(e->context, role, "sha-256", fingerprint, &callbacks, e,
                                           error, sizeof error);
    g_free(fingerprint);
    g_assert_nonnull(e->transport);
    g_assert_cmpstr(error, ==, "");
}

dtls_test_pair *dtls_test_pair_new(const dtls_test_pair_options *options)
{
    dtls_test_pair_options defaults = {0};
    if (options == NULL)
        options = &defaults;
    dtls_test_pair *p = g_new0(dtls_test_pair, 1);
    make_identity(&p->client, options->client_identity, NULL, options->client_profiles);
    make_identity(&p->server, options->server_identity, options->server_certificate,
                  options->server_profiles);
    if (options->client_ciphers)
        g_assert_cmpint(SSL_CTX_set_cipher_list(moat_dtls_context_ssl_ctx(p->client.context),
                                                options->client_ciphers),
                        ==, 1);
    make_transport(&p->client, MOAT_DTLS_ROLE_CLIENT, &p->server, options->client_expects,
                   options->expect_lowercase);
    make_transport(&p->server, MOAT_DTLS_ROLE_SERVER, &p->client, options->server_expects,
                   options->expect_lowercase);
    p->drop_rate = options->drop_rate;
    p->rand = g_rand_new_with_seed(options->seed ? options->seed : 1);
    return p;
}

void dtls_test_pair_start(dtls_test_pair *p)
{
    g_assert_cmpint(moat_dtls_transport_start(p->server.transport), ==, MOAT_DTLS_OK);
    g_assert_cmpint(moat_dtls_transport_start(p->client.transport), ==, MOAT_DTLS_OK);
}

gboolean dtls_test_pair_deliver(dtls_test_pair *p, dtls_test_endpoint *from, dtls_test_endpoint *to)
{
    GBytes *datagram = g_queue_pop_head(&from->outbox);
    if (datagram == NULL)
        return FALSE;
    if (p->drop_rate > 0 && g_rand_double(p->rand) < p->drop_rate) {
        p->dropped++;
    } else {
        gsize length = 0;
        const uint8_t *data = g_bytes_get_data(datagram, &length);
        p->delivered++;
        moat_dtls_transport_receive(to->transport, data, length);
    }
    g_bytes_unref(datagram);
    return TRUE;
}

void dtls_test_pair_pump(dtls_test_pair *p)
{
    gboolean moved = TRUE;
    while (moved) {
        moved = dtls_test_pair_deliver(p, &p->client, &p->server);
        moved = dtls_test_pair_deliver(p, &p->server, &p->client) || moved;
    }
}

static gboolean connecting(const dtls_test_endpoint *e)
{
    moat_dtls_state s = moat_dtls_transport_state(e->transport);
    return s == MOAT_DTLS_NEW || s == MOAT_DTLS_CONNECTING;
}

static int64_t earliest(int64_t a, int64_t b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return a < b ? a : b;
}

gboolean dtls_test_pair_settle(dtls_test_pair *p, guint max_ms)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)max_ms * 1000;
    for (;;) {
        dtls_test_pair_pump(p);
        if (!connecting(&p->client) && !connecting(&p->server))
            return TRUE;
        gint64 now = g_get_monotonic_time();
        if (now >= deadline)
            return FALSE;
        int64_t wait_ms = earliest(moat_dtls_transport_timeout_ms(p->client.transport),
                                   moat_dtls_transport_timeout_ms(p->server.transport));
        if (wait_ms < 0)
            return FALSE;
        int64_t left_ms = (deadline - now) / 1000;
        if (wait_ms > left_ms)
            wait_ms = left_ms;
        if (wait_ms > 0)
            g_usleep((gulong)wait_ms * 1000);
        moat_dtls_transport_handle_timeout(p->client.transport);
        moat_dtls_transport_handle_timeout(p->server.transport);
    }
}

void dtls_test_identity_init(dtls_test_identity *identity)
{
    char error[256] = "";
    identity->certificate = moat_certificate_generate(error, sizeof error);
    g_assert_nonnull(identity->certificate);
    identity->context = moat_dtls_context_new(identity->certificate, error, sizeof error);
    g_assert_nonnull(identity->context);
}

void dtls_test_identity_clear(dtls_test_identity *identity)
{
    moat_dtls_context_free(identity->context);
    moat_certificate_free(identity->certificate);
    identity->context = NULL;
    identity->certificate = NULL;
}

dtls_test_pair *dtls_test_pair_connect(const dtls_test_pair_options *options)
{
    dtls_test_pair *p = dtls_test_pair_new(options);
    dtls_test_pair_start(p);
    g_assert_true(dtls_test_pair_settle(p, DTLS_TEST_SETTLE_MS));
    return p;
}

void dtls_test_pair_assert_connected(dtls_test_pair *p)
{
    g_assert_cmpint(moat_dtls_transport_state(p->client.transport), ==, MOAT_DTLS_CONNECTED);
    g_assert_cmpint(moat_dtls_transport_state(p->server.transport), ==, MOAT_DTLS_CONNECTED);
    g_assert_cmpuint(p->client.connected_calls, ==, 1);
    g_assert_cmpuint(p->server.connected_calls, ==, 1);
    g_assert_cmpuint(p->client.closed_calls, ==, 0);
    g_assert_cmpuint(p->server.closed_calls, ==, 0);
}

static GBytes *pattern(gsize length, guint8 seed)
{
    guint8 *data = g_malloc(length);
    for (gsize i = 0; i < length; i++)
        data[i] = (guint8)(seed + i * 7 + (i >> 8));
    return g_bytes_new_take(data, length);
}

void dtls_test_pair_round_trip(dtls_test_pair *p, dtls_test_endpoint *from, dtls_test_endpoint *to,
                               gsize length)
{
    GBytes *message = pattern(length, (guint8)length);
    guint before = to->received->len;
    g_assert_cmpint(
        moat_dtls_transport_send(from->transport, g_bytes_get_data(message, NULL), length), ==,
        MOAT_DTLS_OK);
    dtls_test_pair_pump(p);
    g_assert_cmpuint(to->received->len, ==, before + 1);
    g_assert_true(g_bytes_equal(g_ptr_array_index(to->received, before), message));
    g_bytes_unref(message);
}

static void free_endpoint(dtls_test_endpoint *e)
{
    moat_dtls_transport_free(e->transport);
    if (!e->borrowed_identity) {
        moat_dtls_context_free(e->context);
        moat_certificate_free(e->certificate);
    }
    g_queue_clear_full(&e->outbox, (GDestroyNotify)g_bytes_unref);
    g_ptr_array_unref(e->received);
}

void dtls_test_pair_free(dtls_test_pair *p)
{
    if (p == NULL)
        return;
    free_endpoint(&p->client);
    free_endpoint(&p->server);
    g_rand_free(p->rand);
    g_free(p);
}
