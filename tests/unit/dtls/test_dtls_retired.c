/* Retired DTLS transports (moat_dtls_transport_retire): for each AEAD suite,
 * the retired side's close_notify closes the peer's OpenSSL, the peer's
 * close_notify closes the retired side, and tampered, truncated, epoch 0,
 * handshake and application data records are dropped and counted without
 * ending the association. */
#include <string.h>

#include <glib.h>

#include "dtls/dtls_transport.h"
#include "dtls_test_pair.h"

typedef struct {
    const char *name;
    const char *ciphers;
} suite;

static const suite suites[] = {
    {"aes128gcm", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"aes256gcm", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"chacha20poly1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
};

static dtls_test_pair *connect_with(const char *ciphers)
{
    dtls_test_pair_options options = {.client_ciphers = ciphers};
    dtls_test_pair *p = dtls_test_pair_connect(&options);
    dtls_test_pair_assert_connected(p);
    return p;
}

static void retire(dtls_test_endpoint *e)
{
    char error[256] = "";
    moat_srtp_profile profile = moat_dtls_transport_srtp_profile(e->transport);
    g_assert_cmpint(moat_dtls_transport_retire(e->transport, error, sizeof error), ==,
                    MOAT_DTLS_OK);
    g_assert_cmpstr(error, ==, "");
    g_assert_true(moat_dtls_transport_retired(e->transport));
    g_assert_cmpint(moat_dtls_transport_state(e->transport), ==, MOAT_DTLS_CONNECTED);
    g_assert_cmpint(moat_dtls_transport_srtp_profile(e->transport), ==, profile);
    g_assert_cmpint(moat_dtls_transport_timeout_ms(e->transport), ==, -1);
    /* Nothing went out: the close_notify is kept for later. */
    g_assert_cmpuint(g_queue_get_length(&e->outbox), ==, 0);
    const guint8 data[] = {1, 2, 3};
    g_assert_cmpint(moat_dtls_transport_send(e->transport, data, sizeof data), ==,
                    MOAT_DTLS_ERR_STATE);
    g_assert_cmpint(moat_dtls_transport_retire(e->transport, error, sizeof error), ==,
                    MOAT_DTLS_ERR_STATE);
    moat_dtls_transport_stats stats;
    moat_dtls_transport_stats_get(e->transport, &stats);
    g_assert_true(stats.retired);
}

static GBytes *pop(dtls_test_endpoint *e)
{
    GBytes *b = g_queue_pop_head(&e->outbox);
    g_assert_nonnull(b);
    return b;
}

static guint64 dropped(moat_dtls_transport *t, moat_dtls_retired_drop reason)
{
    moat_dtls_transport_stats stats;
    moat_dtls_transport_stats_get(t, &stats);
    return stats.retired_dropped[reason];
}

static guint64 rejected(moat_dtls_transport *t)
{
    moat_dtls_transport_stats stats;
    moat_dtls_transport_stats_get(t, &stats);
    return stats.datagrams_rejected;
}

/* Feeds a modified copy of record; it must be dropped for reason (or by the
 * pre-parser when reason is MOAT_DTLS_RETIRED_DROP_COUNT). */
static void feed_dropped(dtls_test_endpoint *e, const guint8 *bytes, gsize length,
                         moat_dtls_retired_drop reason)
{
    guint64 before = reason == MOAT_DTLS_RETIRED_DROP_COUNT ? rejected(e->transport)
                                                            : dropped(e->transport, reason);
    int rc = moat_dtls_transport_receive(e->transport, bytes, length);
    if (reason == MOAT_DTLS_RETIRED_DROP_COUNT) {
        g_assert_cmpint(rc, ==, MOAT_DTLS_ERR_MALFORMED);
        g_assert_cmpuint(rejected(e->transport), ==, before + 1);
    } else {
        g_assert_cmpint(rc, ==, MOAT_DTLS_ERR_DROPPED);
        g_assert_cmpuint(dropped(e->transport, reason), ==, before + 1);
    }
    g_assert_cmpint(moat_dtls_transport_state(e->transport), ==, MOAT_DTLS_CONNECTED);
    g_assert_cmpuint(e->closed_calls, ==, 0);
    g_assert_cmpuint(g_queue_get_length(&e->outbox), ==, 0);
}

static void feed_tampered(dtls_test_endpoint *e, GBytes *close_notify)
{
    gsize n = 0;
    const guint8 *original = g_bytes_get_data(close_notify, &n);
    g_assert_cmpuint(n, >, 13 + 16);
    guint8 *copy = g_memdup2(original, n);

    copy[n - 5] ^= 0x10; /* one bit of the tag */
    feed_dropped(e, copy, n, MOAT_DTLS_RETIRED_DROP_BAD_TAG);
    memcpy(copy, original, n);
    copy[n - 17] ^= 0x01; /* one bit of the encrypted alert */
    feed_dropped(e, copy, n, MOAT_DTLS_RETIRED_DROP_BAD_TAG);
    memcpy(copy, original, n);
    copy[7] ^= 0x01; /* the sequence number, authenticated as data */
    feed_dropped(e, copy, n, MOAT_DTLS_RETIRED_DROP_BAD_TAG);

    /* Truncated: the datagram cut short (the pre-parser's), and a record
     * whose header says it is one byte shorter. */
    feed_dropped(e, original, n - 1, MOAT_DTLS_RETIRED_DROP_COUNT);
    memcpy(copy, original, n);
    copy[12]--;
    feed_dropped(e, copy, n - 1, MOAT_DTLS_RETIRED_DROP_BAD_LENGTH);

    memcpy(copy, original, n);
    copy[3] = copy[4] = 0; /* epoch 0 */
    feed_dropped(e, copy, n, MOAT_DTLS_RETIRED_DROP_WRONG_EPOCH);
    memcpy(copy, original, n);
    copy[0] = 22; /* handshake */
    feed_dropped(e, copy, n, MOAT_DTLS_RETIRED_DROP_NOT_ALERT);
    memcpy(copy, original, n);
    copy[0] = 23; /* application data */
    feed_dropped(e, copy, n, MOAT_DTLS_RETIRED_DROP_NOT_ALERT);
    g_free(copy);
}

/* A record the peer really sent: application data, authentic, not an alert. */
static void feed_peer_application_data(dtls_test_pair *p)
{
    const guint8 data[40] = {7};
    g_assert_cmpint(moat_dtls_transport_send(p->client.transport, data, sizeof data), ==,
                    MOAT_DTLS_OK);
    GBytes *record = pop(&p->client);
    gsize n = 0;
    const guint8 *bytes = g_bytes_get_data(record, &n);
    g_assert_cmpuint(bytes[0], ==, 23);
    feed_dropped(&p->server, bytes, n, MOAT_DTLS_RETIRED_DROP_NOT_ALERT);
    g_bytes_unref(record);
}

/* (b) and (c): the client's close_notify, tampered first, then as sent. */
static void test_peer_closes(gconstpointer data)
{
    const suite *s = data;
    dtls_test_pair *p = connect_with(s->ciphers);
    retire(&p->server);
    feed_peer_application_data(p);

    moat_dtls_transport_shutdown(p->client.transport);
    GBytes *close_notify = pop(&p->client);
    feed_tampered(&p->server, close_notify);

    gsize n = 0;
    const guint8 *bytes = g_bytes_get_data(close_notify, &n);
    g_assert_cmpint(moat_dtls_transport_receive(p->server.transport, bytes, n), ==, MOAT_DTLS_OK);
    g_assert_cmpint(moat_dtls_transport_state(p->server.transport), ==, MOAT_DTLS_CLOSED);
    g_assert_cmpuint(p->server.closed_calls, ==, 1);
    g_assert_cmpint(p->server.closed_state, ==, MOAT_DTLS_CLOSED);
    g_assert_cmpstr(p->server.closed_reason, ==, "close_notify received");
    /* Answered with ours, once. */
    g_assert_cmpuint(g_queue_get_length(&p->server.outbox), ==, 1);
    moat_dtls_transport_shutdown(p->server.transport);
    g_assert_cmpuint(g_queue_get_length(&p->server.outbox), ==, 1);
    g_bytes_unref(close_notify);
    dtls_test_pair_free(p);
}

/* (a): the retired side's close_notify, written by OpenSSL at retirement,
 * is one the peer's OpenSSL accepts as close_notify. */
static void test_retired_closes(gconstpointer data)
{
    const suite *s = data;
    dtls_test_pair *p = connect_with(s->ciphers);
    retire(&p->server);
    moat_dtls_transport_shutdown(p->server.transport);
    g_assert_cmpint(moat_dtls_transport_state(p->server.transport), ==, MOAT_DTLS_CLOSED);
    g_assert_cmpuint(g_queue_get_length(&p->server.outbox), ==, 1);
    dtls_test_pair_pump(p);
    g_assert_cmpuint(p->client.closed_calls, ==, 1);
    g_assert_cmpint(p->client.closed_state, ==, MOAT_DTLS_CLOSED);
    g_assert_cmpstr(p->client.closed_reason, ==, "close_notify received");
    dtls_test_pair_free(p);
}

/* The active (client) side retires too, and both directions still close. */
static void test_client_retires(void)
{
    dtls_test_pair *p = connect_with(NULL);
    retire(&p->client);
    /* The server's close_notify closes the retired client. */
    moat_dtls_transport_shutdown(p->server.transport);
    GBytes *close_notify = pop(&p->server);
    feed_tampered(&p->client, close_notify);
    gsize n = 0;
    const guint8 *bytes = g_bytes_get_data(close_notify, &n);
    g_assert_cmpint(moat_dtls_transport_receive(p->client.transport, bytes, n), ==, MOAT_DTLS_OK);
    g_assert_cmpuint(p->client.closed_calls, ==, 1);
    g_assert_cmpstr(p->client.closed_reason, ==, "close_notify received");
    g_bytes_unref(close_notify);
    dtls_test_pair_free(p);

    p = connect_with(NULL);
    retire(&p->client);
    moat_dtls_transport_shutdown(p->client.transport);
    dtls_test_pair_pump(p);
    g_assert_cmpuint(p->server.closed_calls, ==, 1);
    g_assert_cmpstr(p->server.closed_reason, ==, "close_notify received");
    dtls_test_pair_free(p);
}

/* Alerts sealed by an independent implementation (Python's cryptography,
 * tests/fuzz/dtls/make_retired_seeds.py) under fixed keys: a fatal alert
 * ends the association, a warning alert is dropped. */
static const guint8 aes128gcm_fatal[] = {0x15, 0xfe, 0xfd, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
                                         0x06, 0x00, 0x1a, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
                                         0x06, 0x9e, 0xaf, 0x61, 0x0a, 0x92, 0xa3, 0x15, 0xa5, 0xc6,
                                         0xf2, 0xf7, 0x5b, 0x19, 0x27, 0x5b, 0x48, 0xf2, 0xd7};
static const guint8 chacha_warning[] = {
    0x15, 0xfe, 0xfd, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x12, 0x8d, 0x71, 0xdd,
    0x47, 0x64, 0x21, 0x50, 0x3b, 0x4b, 0x31, 0x88, 0xef, 0x23, 0xa0, 0xdc, 0x8a, 0x02, 0xa0};

static void fixed_keys(moat_dtls_retired *r, moat_dtls_aead aead)
{
    memset(r, 0, sizeof *r);
    r->aead = aead;
    for (int i = 0; i < MOAT_DTLS_RETIRED_KEY_MAX; i++)
        r->peer_key[i] = (guint8)(i + 1);
    for (int i = 0; i < MOAT_DTLS_RETIRED_IV_MAX; i++)
        r->peer_iv[i] = (guint8)(0x40 + i);
}

static void test_alert_vectors(void)
{
    moat_dtls_retired r;
    guint64 dropped[MOAT_DTLS_RETIRED_DROP_COUNT] = {0};
    guint8 description = 0;
    fixed_keys(&r, MOAT_DTLS_AEAD_AES_128_GCM);
    g_assert_cmpint(moat_dtls_retired_receive(&r, aes128gcm_fatal, sizeof aes128gcm_fatal, dropped,
                                              &description),
                    ==, MOAT_DTLS_RETIRED_FATAL_ALERT);
    g_assert_cmpuint(description, ==, 40); /* handshake_failure */
    /* The same record under the wrong suite's key fails its tag. */
    fixed_keys(&r, MOAT_DTLS_AEAD_AES_256_GCM);
    g_assert_cmpint(moat_dtls_retired_receive(&r, aes128gcm_fatal, sizeof aes128gcm_fatal, dropped,
                                              &description),
                    ==, MOAT_DTLS_RETIRED_DROPPED);
    g_assert_cmpuint(dropped[MOAT_DTLS_RETIRED_DROP_BAD_TAG], ==, 1);
    fixed_keys(&r, MOAT_DTLS_AEAD_CHACHA20_POLY1305);
    g_assert_cmpint(
        moat_dtls_retired_receive(&r, chacha_warning, sizeof chacha_warning, dropped, &description),
        ==, MOAT_DTLS_RETIRED_DROPPED);
    g_assert_cmpuint(dropped[MOAT_DTLS_RETIRED_DROP_WARNING], ==, 1);

    /* Three alert records in one datagram: only the first two are opened,
     * even when the third is genuine. */
    guint8 three[3 * sizeof chacha_warning];
    for (int i = 0; i < 3; i++)
        memcpy(three + i * sizeof chacha_warning, chacha_warning, sizeof chacha_warning);
    three[sizeof chacha_warning - 1] ^= 1; /* the first one's tag */
    g_assert_cmpint(moat_dtls_retired_receive(&r, three, sizeof three, dropped, &description), ==,
                    MOAT_DTLS_RETIRED_DROPPED);
    g_assert_cmpuint(dropped[MOAT_DTLS_RETIRED_DROP_BAD_TAG], ==, 2);
    g_assert_cmpuint(dropped[MOAT_DTLS_RETIRED_DROP_WARNING], ==, 2);
    g_assert_cmpuint(dropped[MOAT_DTLS_RETIRED_DROP_OVER_BUDGET], ==, 1);
}

static void test_not_connected(void)
{
    dtls_test_pair *p = dtls_test_pair_new(NULL);
    char error[256] = "";
    g_assert_cmpint(moat_dtls_transport_retire(p->server.transport, error, sizeof error), ==,
                    MOAT_DTLS_ERR_STATE);
    g_assert_false(moat_dtls_transport_retired(p->server.transport));
    dtls_test_pair_free(p);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(suites); i++) {
        gchar *peer = g_strdup_printf("/dtls/retired/%s/peer-closes", suites[i].name);
        gchar *own = g_strdup_printf("/dtls/retired/%s/retired-closes", suites[i].name);
        g_test_add_data_func(peer, &suites[i], test_peer_closes);
        g_test_add_data_func(own, &suites[i], test_retired_closes);
        g_free(peer);
        g_free(own);
    }
    g_test_add_func("/dtls/retired/client-retires", test_client_retires);
    g_test_add_func("/dtls/retired/not-connected", test_not_connected);
    g_test_add_func("/dtls/retired/alert-vectors", test_alert_vectors);
    return g_test_run();
}
