/* A session's DTLS glue against a real DTLS client over loopback: a session
 * whose SRTP setup fails when the handshake completes ends on its next tick,
 * after the transport's call stack unwound (it used to free the transport
 * from inside its own callback: a use-after-free under ASan). */
#include "session_harness.h"

#include "core/session_internal.h"
#include "dtls/certificate.h"
#include "dtls/dtls_context.h"
#include "dtls/dtls_transport.h"

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
        GBytes *datagram;
        while ((datagram = g_queue_pop_head(&state->outbox))) {
            gsize length;
            const uint8_t *data = g_bytes_get_data(datagram, &length);
            uint8_t copy[2048];
            memcpy(copy, data, length);
            moat_session_handle_dtls(h->session, &h->path, copy, length);
            g_bytes_unref(datagram);
        }
        session_harness_flush(h);
        uint8_t buffer[2048];
        ssize_t n;
        while ((n = recv(h->peer_fd, buffer, sizeof buffer, 0)) > 0)
            moat_dtls_transport_receive(client, buffer, (size_t)n);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session/dtls/srtp-setup-failure-ends-after-handshake",
                    test_srtp_setup_failure_ends_after_the_handshake_returns);
    return g_test_run();
}
