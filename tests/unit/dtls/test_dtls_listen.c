/* Unit tests for the stateless DTLS listener (dtls/dtls_listen.h): a
 * ClientHello gets a HelloVerifyRequest smaller than itself, a cookie made
 * for one source is refused from another, only a returned cookie starts the
 * handshake, and anything else is dropped without an answer. */
#include <glib.h>
#include <string.h>

#include "dtls/dtls_listen.h"
#include "dtls_test_pair.h"

static const char SOURCE_A[] = "source-a";
static const char SOURCE_B[] = "source-b";

static dtls_test_pair *listening_pair(void)
{
    dtls_test_pair_options options = {0};
    dtls_test_pair *p = dtls_test_pair_new(&options);
    g_assert_cmpint(moat_dtls_transport_listen(p->server.transport), ==, MOAT_DTLS_OK);
    g_assert_true(moat_dtls_transport_listening(p->server.transport));
    g_assert_cmpint(moat_dtls_transport_start(p->client.transport), ==, MOAT_DTLS_OK);
    return p;
}

/* The next datagram either side sent (NULL: none); the caller frees it. */
static GBytes *take(dtls_test_endpoint *e)
{
    return g_queue_pop_head(&e->outbox);
}

static void to_server(dtls_test_pair *p, GBytes *datagram, const char *source)
{
    if (moat_dtls_transport_listening(p->server.transport))
        g_assert_cmpint(
            moat_dtls_transport_listen_source(p->server.transport, source, strlen(source)), ==,
            MOAT_DTLS_OK);
    gsize length = 0;
    const guint8 *data = g_bytes_get_data(datagram, &length);
    moat_dtls_transport_receive(p->server.transport, data, length);
    g_bytes_unref(datagram);
}

static void to_client(dtls_test_pair *p, GBytes *datagram)
{
    gsize length = 0;
    const guint8 *data = g_bytes_get_data(datagram, &length);
    moat_dtls_transport_receive(p->client.transport, data, length);
    g_bytes_unref(datagram);
}

/* Delivers both ways, the client's datagrams from source, until quiet. */
static void pump_from(dtls_test_pair *p, const char *source)
{
    for (int round = 0; round < 100; round++) {
        GBytes *d = take(&p->client);
        if (d != NULL) {
            to_server(p, d, source);
            continue;
        }
        d = take(&p->server);
        if (d == NULL)
            return;
        to_client(p, d);
    }
    g_assert_not_reached();
}

static void assert_stats(dtls_test_pair *p, guint64 verify_requests, guint64 dropped)
{
    moat_dtls_transport_stats stats;
    moat_dtls_transport_stats_get(p->server.transport, &stats);
    g_assert_cmpuint(stats.hello_verify_requests, ==, verify_requests);
    g_assert_cmpuint(stats.listen_dropped, ==, dropped);
}

static void test_handshake(void)
{
    dtls_test_pair *p = listening_pair();
    GBytes *hello = take(&p->client);
    gsize hello_length = g_bytes_get_size(hello);
    to_server(p, hello, SOURCE_A);
    /* One HelloVerifyRequest, smaller than the ClientHello: no amplification. */
    g_assert_cmpuint(g_queue_get_length(&p->server.outbox), ==, 1);
    GBytes *verify = g_queue_peek_head(&p->server.outbox);
    g_assert_cmpuint(g_bytes_get_size(verify), <, hello_length);
    g_assert_cmpuint(((const guint8 *)g_bytes_get_data(verify, NULL))[13], ==, 3);
    g_assert_true(moat_dtls_transport_listening(p->server.transport));
    g_assert_cmpint(moat_dtls_transport_timeout_ms(p->server.transport), ==, -1);
    pump_from(p, SOURCE_A);
    g_assert_false(moat_dtls_transport_listening(p->server.transport));
    g_assert_true(dtls_test_pair_settle(p, DTLS_TEST_SETTLE_MS));
    dtls_test_pair_assert_connected(p);
    assert_stats(p, 1, 0);
    dtls_test_pair_round_trip(p, &p->client, &p->server, 1000);
    dtls_test_pair_round_trip(p, &p->server, &p->client, 16384);
    dtls_test_pair_free(p);
}

/* A ClientHello from a forged source: its HelloVerifyRequest goes to the
 * victim, never to the forger; the forger's cookie-less or wrongly sourced
 * ClientHellos never start a handshake or send a certificate. */
static void test_cookie_bound_to_source(void)
{
    dtls_test_pair *p = listening_pair();
    GBytes *hello = take(&p->client);
    GBytes *copy = g_bytes_ref(hello);
    to_server(p, hello, SOURCE_A);
    GBytes *verify = take(&p->server);
    /* The same ClientHello from elsewhere: another HelloVerifyRequest. */
    to_server(p, copy, SOURCE_B);
    g_bytes_unref(take(&p->server));
    /* The cookie for A, returned from B: refused, answered with a cookie for B. */
    to_client(p, verify);
    GBytes *with_cookie = take(&p->client);
    g_assert_nonnull(with_cookie);
    GBytes *again = g_bytes_ref(with_cookie);
    to_server(p, with_cookie, SOURCE_B);
    g_assert_true(moat_dtls_transport_listening(p->server.transport));
    GBytes *answer = take(&p->server);
    g_assert_nonnull(answer);
    g_assert_cmpuint(g_bytes_get_size(answer), <, g_bytes_get_size(again));
    g_bytes_unref(answer);
    g_assert_null(take(&p->server));
    assert_stats(p, 3, 0);
    /* From A it is good: the handshake starts. */
    to_server(p, again, SOURCE_A);
    g_assert_false(moat_dtls_transport_listening(p->server.transport));
    g_assert_true(dtls_test_pair_settle(p, DTLS_TEST_SETTLE_MS));
    dtls_test_pair_assert_connected(p);
    dtls_test_pair_free(p);
}

static void test_drops_without_answer(void)
{
    dtls_test_pair *p = listening_pair();
    GBytes *hello = take(&p->client);
    gsize length = 0;
    const guint8 *data = g_bytes_get_data(hello, &length);
    /* No source given: dropped. */
    moat_dtls_transport_receive(p->server.transport, data, length);
    /* An application-data record, a ClientHello cut short, a ServerHello. */
    guint8 *bent = g_memdup2(data, length);
    bent[0] = 23;
    to_server(p, g_bytes_new(bent, length), SOURCE_A);
    to_server(p, g_bytes_new(data, 30), SOURCE_A);
    memcpy(bent, data, length);
    bent[13] = 2;
    to_server(p, g_bytes_new(bent, length), SOURCE_A);
    g_free(bent);
    g_assert_null(take(&p->server));
    g_assert_true(moat_dtls_transport_listening(p->server.transport));
    moat_dtls_transport_stats stats;
    moat_dtls_transport_stats_get(p->server.transport, &stats);
    g_assert_cmpuint(stats.hello_verify_requests, ==, 0);
    /* Each either failed the record pre-parser or the listener dropped it. */
    g_assert_cmpuint(stats.listen_dropped + stats.datagrams_rejected, ==, 4);
    /* The real ClientHello still works afterwards. */
    to_server(p, hello, SOURCE_A);
    pump_from(p, SOURCE_A);
    g_assert_true(dtls_test_pair_settle(p, DTLS_TEST_SETTLE_MS));
    dtls_test_pair_assert_connected(p);
    dtls_test_pair_free(p);
}

static void test_invalid_use(void)
{
    dtls_test_pair_options options = {0};
    dtls_test_pair *p = dtls_test_pair_new(&options);
    char address[MOAT_DTLS_LISTEN_SOURCE_MAX + 1] = {0};
    g_assert_cmpint(moat_dtls_transport_listen(NULL), ==, MOAT_DTLS_ERR_INVALID);
    g_assert_cmpint(moat_dtls_transport_listen(p->client.transport), ==, MOAT_DTLS_ERR_STATE);
    g_assert_cmpint(moat_dtls_transport_listen_source(p->server.transport, address, 4), ==,
                    MOAT_DTLS_ERR_STATE);
    g_assert_cmpint(moat_dtls_transport_listen(p->server.transport), ==, MOAT_DTLS_OK);
    g_assert_cmpint(moat_dtls_transport_listen(p->server.transport), ==, MOAT_DTLS_ERR_STATE);
    g_assert_cmpint(moat_dtls_transport_start(p->server.transport), ==, MOAT_DTLS_ERR_STATE);
    g_assert_cmpint(moat_dtls_transport_listen_source(p->server.transport, address, 0), ==,
                    MOAT_DTLS_ERR_INVALID);
    g_assert_cmpint(moat_dtls_transport_listen_source(p->server.transport, address, sizeof address),
                    ==, MOAT_DTLS_ERR_INVALID);
    g_assert_cmpint(moat_dtls_transport_send(p->server.transport, (const uint8_t *)"x", 1), ==,
                    MOAT_DTLS_ERR_STATE);
    g_assert_false(moat_dtls_transport_listening(p->client.transport));
    dtls_test_pair_free(p); /* frees a listening transport */
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/dtls/listen/handshake", test_handshake);
    g_test_add_func("/dtls/listen/cookie-bound-to-source", test_cookie_bound_to_source);
    g_test_add_func("/dtls/listen/drops-without-answer", test_drops_without_answer);
    g_test_add_func("/dtls/listen/invalid-use", test_invalid_use);
    return g_test_run();
}
