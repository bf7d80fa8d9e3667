/* A session's data channels against a real peer (DTLS client and SCTP
 * association in-process): messages another session relayed to it, still
 * queued because its peer acknowledges nothing, are counted as dropped
 * (`datachannel_ended`) when the session ends; its own echoes are not (only
 * its peer, now gone, would have had them). Before, they were freed
 * uncounted although their publisher had its own message acknowledged.
 * The plugin's session_ending is true from the end's start (the drain). */
#include "session_harness.h"

#include "session/session_internal.h"
#include "dtls/certificate.h"
#include "dtls/dtls_context.h"
#include "dtls/dtls_transport.h"
#include "sctp/sctp_association.h"
#include "sctp/sctp_stack.h"

#include <glib.h>
#include <string.h>
#include <sys/socket.h>

typedef struct {
    moat_certificate *server_cert, *client_cert;
    moat_dtls_context *server_ctx, *client_ctx;
    moat_dtls_transport *client;
    GQueue outbox; /* GBytes the client sent */
    bool connected;
    moat_sctp_association *sctp; /* the peer's association */
    bool deliver;                /* false: what the gateway sends is lost */
} peer;

static void client_send(void *user, const uint8_t *datagram, size_t length)
{
    g_queue_push_tail(&((peer *)user)->outbox, g_bytes_new(datagram, length));
}

static void client_connected(void *user, const moat_srtp_keying *keys)
{
    ((peer *)user)->connected = true;
}

static void client_data(void *user, const uint8_t *data, size_t length)
{
    peer *p = user;
    if (p->sctp && p->deliver)
        moat_sctp_association_receive(p->sctp, data, length);
}

static const moat_dtls_callbacks client_callbacks = {
    .send = client_send,
    .connected = client_connected,
    .application_data = client_data,
};

static void peer_sctp_send(void *user, const uint8_t *packet, size_t length)
{
    g_assert_cmpint(moat_dtls_transport_send(((peer *)user)->client, packet, length), ==, 0);
}

static const moat_sctp_callbacks peer_sctp_callbacks = {.send_packet = peer_sctp_send};

/* One round: the client's datagrams into the session, the gateway's back
 * to the client, 10 ms of SCTP timers. */
static void pump(session_harness *h, peer *p)
{
    session_harness_exchange_dtls(h, p->client, &p->outbox);
    moat_sctp_stack_handle_timers(MOAT_SCTP_TIMER_INTERVAL_MS);
}

/* A session whose peer finished DTLS, brought its association up and
 * opened one channel; returns the channel's stream id. */
static uint16_t connected_session(session_harness *h, peer *p)
{
    char error[256];
    memset(p, 0, sizeof *p);
    p->deliver = true;
    p->server_cert = moat_certificate_generate(error, sizeof error);
    p->client_cert = moat_certificate_generate(error, sizeof error);
    p->server_ctx = moat_dtls_context_new(p->server_cert, error, sizeof error);
    p->client_ctx = moat_dtls_context_new(p->client_cert, error, sizeof error);
    g_assert_nonnull(p->server_ctx);
    g_assert_nonnull(p->client_ctx);
    g_queue_init(&p->outbox);
    p->client = moat_dtls_transport_new(p->client_ctx, MOAT_DTLS_ROLE_CLIENT, "sha-256",
                                        moat_certificate_fingerprint(p->server_cert),
                                        &client_callbacks, p, error, sizeof error);
    g_assert_nonnull(p->client);

    session_harness_init(h);
    g_strlcpy(h->negotiation.remote_fingerprint, moat_certificate_fingerprint(p->client_cert),
              sizeof h->negotiation.remote_fingerprint);
    h->negotiation.has_data_channel = true;
    session_harness_create(h, p->server_ctx);
    g_assert_cmpint(moat_dtls_transport_start(p->client), ==, MOAT_DTLS_OK);
    for (int i = 0; i < 2000 && !(p->connected && h->session->dtls_connected); i++) {
        pump(h, p);
        if (g_queue_is_empty(&p->outbox))
            g_usleep(1000);
    }
    g_assert_true(h->session->dtls_connected);
    g_assert_nonnull(h->session->sctp);

    p->sctp = moat_sctp_association_new(true, 5000, 5000, 0, &peer_sctp_callbacks, p, error,
                                        sizeof error);
    g_assert_nonnull(p->sctp);
    g_assert_cmpint(moat_sctp_association_connect(p->sctp), ==, 0);
    moat_data_channel_info info = {
        .label = "chat", .ordered = true, .max_retransmits = -1, .max_lifetime_ms = -1};
    uint16_t stream_id = 0;
    g_assert_cmpint(moat_sctp_association_open_channel(p->sctp, &info, &stream_id), ==, 0);
    for (int i = 0; i < 500; i++)
        pump(h, p);
    g_assert_true(h->session->sctp_up);
    return stream_id;
}

static void peer_clear(peer *p)
{
    moat_sctp_association_free(p->sctp);
    moat_dtls_transport_free(p->client);
    g_queue_clear_full(&p->outbox, (GDestroyNotify)g_bytes_unref);
    moat_dtls_context_free(p->server_ctx);
    moat_dtls_context_free(p->client_ctx);
    moat_certificate_free(p->server_cert);
    moat_certificate_free(p->client_cert);
}

static void test_relayed_copies_queued_at_the_end_are_counted(void)
{
    session_harness h;
    peer p;
    uint16_t stream_id = connected_session(&h, &p);
    /* The publisher: another session on the same worker. */
    session_harness other;
    session_harness_init_on(&other, h.worker);
    g_strlcpy(other.id, "publisher", sizeof other.id);
    session_harness_create(&other, NULL);
    moat_plugin_session *publisher = moat_session_plugin_handle(other.session);
    moat_plugin_session *self = moat_session_plugin_handle(h.session);

    /* The peer acknowledges nothing more: its association fills, then the
     * session's queue takes the rest. */
    p.deliver = false;
    uint8_t message[1000];
    memset(message, 'm', sizeof message);
    int sent = 0;
    while (g_queue_is_empty(&h.session->data_queue) && sent < 20000) {
        g_assert_cmpint(moat_session_data_send_from(h.session, publisher, stream_id, 51, message,
                                                    sizeof message),
                        ==, 0);
        sent++;
    }
    g_assert_cmpuint(g_queue_get_length(&h.session->data_queue), ==, 1);
    for (int i = 0; i < 4; i++)
        g_assert_cmpint(moat_session_data_send_from(h.session, publisher, stream_id, 51, message,
                                                    sizeof message),
                        ==, 0);
    for (int i = 0; i < 3; i++) /* its own echoes */
        g_assert_cmpint(
            moat_session_data_send_from(h.session, self, stream_id, 51, message, sizeof message),
            ==, 0);
    g_assert_cmpuint(g_queue_get_length(&h.session->data_queue), ==, 8);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_DATA_ENDED), ==, 0);

    /* The first end drains (the queue waits for the peer); the second, as
     * the drain's deadline or a failed transport gives, ends it. A plugin
     * hears that the session is ending from the first on. */
    moat_plugin_session *handle = moat_session_plugin_handle(h.session);
    g_assert_false(moat_session_gateway_calls.session_ending(handle));
    moat_session_end(h.session, "test");
    g_assert_true(moat_session_draining(h.session));
    g_assert_true(moat_session_gateway_calls.session_ending(handle));
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_DATA_ENDED), ==, 0);
    moat_session_end(h.session, "drain timed out");
    h.session = NULL;
    g_assert_cmpuint(session_harness_dropped(&other, MOAT_DROP_DATA_ENDED), ==, 5);
    g_assert_cmpstr(moat_drop_reason_name(MOAT_DROP_DATA_ENDED), ==, "datachannel_ended");

    session_harness_clear(&other);
    session_harness_clear(&h);
    peer_clear(&p);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_assert_cmpint(moat_sctp_stack_init(), ==, 0);
    g_test_add_func("/session/data/relayed-copies-queued-at-the-end-are-counted",
                    test_relayed_copies_queued_at_the_end_are_counted);
    return g_test_run();
}
