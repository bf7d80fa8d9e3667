/* A session's DTLS glue against a real DTLS client over loopback: a session
 * whose SRTP setup fails when the handshake completes ends on its next tick,
 * after the transport's call stack unwound (it used to free the transport
 * from inside its own callback: a use-after-free under ASan); and a peer's
 * data-channel traffic (DTLS application data that decrypts) switches no
 * worker socket detector on, however fast, while as many records that fail
 * to decrypt still do. A media-only session retires its DTLS only once the
 * peer has sent authenticated media and DTLS was quiet for a trim interval,
 * and the peer's close_notify still ends it afterwards. */
#include "session_harness.h"

#include "session/session_internal.h"
#include "engine/worker_receive.h"
#include "dtls/certificate.h"
#include "dtls/dtls_context.h"
#include "dtls/dtls_transport.h"
#include "ice/ice_client.h"

#include <glib.h>
#include <string.h>
#include <sys/socket.h>

typedef struct {
    GQueue outbox; /* GBytes the client sent */
    bool connected;
} client_state;

static void client_send(void *user, const uint8_t *datagram, size_t length)
{
    client_state *state = user;
    g_queue_push_tail(&state->outbox, g_bytes_new(datagram, length));
}

static void client_connected(void *user, const moat_srtp_keying *keys)
{
    ((client_state *)user)->connected = true;
}

static const moat_dtls_callbacks client_callbacks = {
    .send = client_send,
    .connected = client_connected,
};

/* Runs the handshake: client datagrams into the session as the worker's
 * dispatch would, the gateway's replies through the loopback socket back to
 * the client. Stops when the session is ending or after `rounds`. */
static void handshake(session_harness *h, moat_dtls_transport *client, client_state *state,
                      int rounds)
{
    g_assert_cmpint(moat_dtls_transport_start(client), ==, MOAT_DTLS_OK);
    for (int round = 0; round < rounds && !h->session->ending; round++) {
        session_harness_exchange_dtls(h, client, &state->outbox);
        if (g_queue_is_empty(&state->outbox))
            g_usleep(1000);
    }
}

static void test_srtp_setup_failure_ends_after_the_handshake_returns(void)
{
    char error[256];
    moat_certificate *server_cert = moat_certificate_generate(error, sizeof error);
    moat_certificate *client_cert = moat_certificate_generate(error, sizeof error);
    g_assert_nonnull(server_cert);
    g_assert_nonnull(client_cert);
    moat_dtls_context *server_ctx = moat_dtls_context_new(server_cert, error, sizeof error);
    moat_dtls_context *client_ctx = moat_dtls_context_new(client_cert, error, sizeof error);
    g_assert_nonnull(server_ctx);
    g_assert_nonnull(client_ctx);

    session_harness h;
    session_harness_init(&h);
    g_strlcpy(h.negotiation.remote_fingerprint, moat_certificate_fingerprint(client_cert),
              sizeof h.negotiation.remote_fingerprint);
    /* An SRTP+ chain of depth 0 is refused when the keys arrive: SRTP setup
     * fails deterministically, inside the DTLS connected callback. */
    h.negotiation.srtpplus = true;
    strcpy(h.negotiation.srtpplus_scheme.scheme, "chain");
    h.negotiation.srtpplus_scheme.depth = 0;
    h.negotiation.srtpplus_scheme.copies = 0;
    session_harness_create(&h, server_ctx);

    client_state state = {.outbox = G_QUEUE_INIT};
    moat_dtls_transport *client = moat_dtls_transport_new(
        client_ctx, MOAT_DTLS_ROLE_CLIENT, "sha-256", moat_certificate_fingerprint(server_cert),
        &client_callbacks, &state, error, sizeof error);
    g_assert_nonnull(client);
    handshake(&h, client, &state, 2000);

    /* The session is still there, marked: the transport's stack unwound. */
    g_assert_true(moat_worker_find_session(h.worker, "harness") == h.session);
    g_assert_true(h.session->dtls_connected);
    g_assert_true(h.session->ending);
    g_assert_false(moat_session_tick(h.session, moat_worker_now_us(h.worker)));
    g_assert_cmpstr(moat_session_end_reason(h.session), ==, "srtp setup failed");
    moat_session_end(h.session, moat_session_end_reason(h.session));
    g_assert_null(moat_worker_find_session(h.worker, "harness"));
    g_assert_cmpstr(session_harness_last_end(), ==, "srtp setup failed");
    h.session = NULL;

    moat_dtls_transport_free(client);
    g_queue_clear_full(&state.outbox, (GDestroyNotify)g_bytes_unref);
    session_harness_clear(&h);
    moat_dtls_context_free(server_ctx);
    moat_dtls_context_free(client_ctx);
    moat_certificate_free(server_cert);
    moat_certificate_free(client_cert);
}

typedef struct {
    moat_certificate *server_cert, *client_cert;
    moat_dtls_context *server_ctx, *client_ctx;
    moat_dtls_transport *client;
    client_state state;
} dtls_pair;

static void dtls_pair_init(dtls_pair *p)
{
    char error[256];
    memset(p, 0, sizeof *p);
    p->server_cert = moat_certificate_generate(error, sizeof error);
    p->client_cert = moat_certificate_generate(error, sizeof error);
    g_assert_nonnull(p->server_cert);
    g_assert_nonnull(p->client_cert);
    p->server_ctx = moat_dtls_context_new(p->server_cert, error, sizeof error);
    p->client_ctx = moat_dtls_context_new(p->client_cert, error, sizeof error);
    g_assert_nonnull(p->server_ctx);
    g_assert_nonnull(p->client_ctx);
    g_queue_init(&p->state.outbox);
    p->client = moat_dtls_transport_new(p->client_ctx, MOAT_DTLS_ROLE_CLIENT, "sha-256",
                                        moat_certificate_fingerprint(p->server_cert),
                                        &client_callbacks, &p->state, error, sizeof error);
    g_assert_nonnull(p->client);
}

static void dtls_pair_clear(dtls_pair *p)
{
    moat_dtls_transport_free(p->client);
    g_queue_clear_full(&p->state.outbox, (GDestroyNotify)g_bytes_unref);
    moat_dtls_context_free(p->server_ctx);
    moat_dtls_context_free(p->client_ctx);
    moat_certificate_free(p->server_cert);
    moat_certificate_free(p->client_cert);
}

/* The peer's nominating ICE check binds its tuple, so the worker's
 * dispatch finds the session. */
static void bind_peer_tuple(session_harness *h)
{
    moat_ice_client_credentials credentials = {
        .local_ufrag = "peerufrag",
        .local_pwd = "peerpasswordpeerpassword",
        .remote_ufrag = "gwufrag1",
        .remote_pwd = "gatewaypasswordgatewaypa",
        .tie_breaker = 42,
    };
    moat_ice_client *ice = moat_ice_client_new(&credentials);
    g_assert_nonnull(ice);
    uint8_t request[MOAT_DATAGRAM_CAPACITY];
    size_t length = moat_ice_client_build_request(ice, 0x6e0001ff, true, false, request,
                                                  MOAT_ICE_CLIENT_REQUEST_CAPACITY);
    g_assert_cmpuint(length, >, 0);
    moat_worker_dispatch(h->worker, &h->path, request, length);
    g_assert_true(h->session->has_selected);
    moat_ice_client_free(ice);
}

/* `count` application-data records from the client, one datagram each,
 * dispatched by the worker `spacing_us` apart from *now on; with `corrupt`
 * each has its last byte (the authentication tag) flipped. */
static void dispatch_records(session_harness *h, dtls_pair *p, int count, uint64_t *now,
                             uint64_t spacing_us, bool corrupt)
{
    uint8_t payload[1100];
    memset(payload, 0x5a, sizeof payload);
    for (int i = 0; i < count; i++) {
        g_assert_cmpint(moat_dtls_transport_send(p->client, payload, sizeof payload), ==, 0);
        GBytes *datagram = g_queue_pop_head(&p->state.outbox);
        g_assert_nonnull(datagram);
        gsize length;
        const uint8_t *data = g_bytes_get_data(datagram, &length);
        uint8_t copy[MOAT_DATAGRAM_CAPACITY];
        g_assert_cmpuint(length, <=, sizeof copy);
        memcpy(copy, data, length);
        if (corrupt)
            copy[length - 1] ^= 0xff;
        moat_worker_set_now_us(h->worker, *now += spacing_us);
        moat_worker_dispatch(h->worker, &h->path, copy, length);
        g_bytes_unref(datagram);
    }
}

static uint64_t worker_switches(session_harness *h)
{
    return moat_counter_read(&moat_worker_counters(h->worker)->worker_detector_switches_on);
}

/* A session whose DTLS handshake with the pair's client is done. */
static void connected_session(dtls_pair *p, session_harness *h)
{
    dtls_pair_init(p);
    session_harness_init(h);
    g_strlcpy(h->negotiation.remote_fingerprint, moat_certificate_fingerprint(p->client_cert),
              sizeof h->negotiation.remote_fingerprint);
    session_harness_create(h, p->server_ctx);
    bind_peer_tuple(h);
    handshake(h, p->client, &p->state, 2000);
}

static void test_data_channel_traffic_switches_no_worker_detector_on(void)
{
    dtls_pair p;
    session_harness h;
    connected_session(&p, &h);
    g_assert_true(p.state.connected);
    g_assert_true(h.session->dtls_connected);
    g_assert_false(h.session->ending);

    /* Two calm seconds at 100 datagrams/s teach the worker's detector a
     * baseline; then the peer's data channels send 20 000 datagrams/s for
     * 200 ms, 200 times the baseline. */
    uint64_t now = 10000000;
    for (int i = 0; i < 200; i++) {
        moat_worker_set_now_us(h.worker, now += 10000);
        moat_worker_note_datagram(h.worker);
    }
    g_assert_false(moat_worker_enforcing(h.worker));
    uint64_t dtls_drops_before = moat_counter_read(&h.session->counters.dropped[MOAT_DROP_DTLS]);
    dispatch_records(&h, &p, 4000, &now, 50, false);
    g_assert_cmpuint(moat_counter_read(&h.session->counters.dropped[MOAT_DROP_DTLS]), ==,
                     dtls_drops_before);
    g_assert_false(moat_worker_enforcing(h.worker));
    g_assert_cmpuint(worker_switches(&h), ==, 0);

    /* As many records that do not decrypt (forged, or any junk sent to the
     * peer's tuple) are a flood, and switch it on. */
    dispatch_records(&h, &p, 4000, &now, 50, true);
    g_assert_true(moat_worker_enforcing(h.worker));
    g_assert_cmpuint(worker_switches(&h), ==, 1);

    session_harness_clear(&h);
    dtls_pair_clear(&p);
}

static bool retired(session_harness *h)
{
    moat_dtls_transport_stats stats;
    moat_dtls_transport_stats_get(h->session->dtls, &stats);
    return stats.retired;
}

static void test_media_only_session_retires_its_dtls(void)
{
    dtls_pair p;
    session_harness h;
    connected_session(&p, &h);
    g_assert_true(h.session->dtls_connected);

    /* Quiet DTLS, but no authenticated media from the peer yet: it may
     * still be waiting for our final flight. */
    uint64_t now = moat_worker_now_us(h.worker);
    for (int i = 0; i < 3; i++)
        g_assert_true(moat_session_tick(h.session, now += 1000000));
    g_assert_false(retired(&h));

    /* Its first authenticated RTP packet (counted as session_media.c does
     * after srtp_unprotect). */
    moat_counter_add(&h.session->counters.rtp_received, 1);
    g_assert_true(moat_session_tick(h.session, now += 1000000));
    g_assert_true(retired(&h));
    g_assert_cmpuint(moat_counter_read(&moat_worker_counters(h.worker)->dtls_retired), ==, 1);
    g_assert_cmpint(moat_dtls_transport_state(h.session->dtls), ==, MOAT_DTLS_CONNECTED);

    /* The peer's close_notify still ends the session. */
    moat_dtls_transport_shutdown(p.client);
    GBytes *close_notify = g_queue_pop_head(&p.state.outbox);
    g_assert_nonnull(close_notify);
    gsize length;
    const uint8_t *data = g_bytes_get_data(close_notify, &length);
    uint8_t copy[MOAT_DATAGRAM_CAPACITY];
    memcpy(copy, data, length);
    moat_worker_dispatch(h.worker, &h.path, copy, length);
    g_bytes_unref(close_notify);
    g_assert_false(moat_session_tick(h.session, now += 1000));
    g_assert_cmpstr(moat_session_end_reason(h.session), ==, "dtls closed");

    session_harness_clear(&h);
    dtls_pair_clear(&p);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session/dtls/srtp-setup-failure-ends-after-handshake",
                    test_srtp_setup_failure_ends_after_the_handshake_returns);
    g_test_add_func("/session/dtls/data-channel-traffic-switches-no-worker-detector-on",
                    test_data_channel_traffic_switches_no_worker_detector_on);
    g_test_add_func("/session/dtls/media-only-session-retires-its-dtls",
                    test_media_only_session_retires_its_dtls);
    return g_test_run();
}
