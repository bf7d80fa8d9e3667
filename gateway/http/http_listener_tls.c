/* A TLS connection's way to libsoup (http_listener_private.h): its
 * ClientHello waited for without a thread, a handshake slot
 * (http_handshakes.h), the handshake on GLib's pool with its own deadline,
 * and the guard that refuses renegotiation after it. Control thread, but
 * for the handshake itself. */
#include "http/http_listener_private.h"

#include "session/http_admission.h"
#include "http/http_router.h"
#include "http/http_tls.h"
#include "http/http_tls_guard.h"

#include <glib.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#define HELLO_RETRY_MS 50
/* From a whole ClientHello to the end of the handshake: the server's work
 * takes milliseconds, the client's reply a round trip. */
#define HANDSHAKE_TIMEOUT_MS 3000

static gboolean handshake_timed_out(gpointer data)
{
    connection *c = data;
    c->handshake_timer = 0;
    moat_http_note_refusal(c->listener->gateway, MOAT_REFUSED_TLS_HANDSHAKE, c->peer);
    http_listener_shut_down(c, false); /* the handshake fails at once */
    return G_SOURCE_REMOVE;
}

/* The guard's report (http_tls_guard.h), counted on the main loop. */
typedef struct {
    moat_gateway *gateway;
    char peer[64];
} renegotiation_report;

static gboolean note_renegotiation(gpointer data)
{
    const renegotiation_report *report = data;
    moat_http_note_refusal(report->gateway, MOAT_REFUSED_TLS_RENEGOTIATION, report->peer);
    return G_SOURCE_REMOVE;
}

/* moat_tls_guard_refused_fn: called where the stream is read, the main
 * loop after the handshake; should that ever be a pool thread, the count
 * still happens on the main loop. */
static void renegotiation_refused(void *user)
{
    g_main_context_invoke_full(NULL, G_PRIORITY_DEFAULT, note_renegotiation,
                               g_memdup2(user, sizeof(renegotiation_report)), g_free);
}

/* From the end of the first handshake, before anything reads the stream
 * again, the client's handshake records are refused (http_tls_guard.h). */
static void refuse_renegotiation(connection *c, GIOStream *tls)
{
    renegotiation_report *report = g_new0(renegotiation_report, 1);
    report->gateway = c->listener->gateway;
    g_strlcpy(report->peer, c->peer, sizeof report->peer);
    GIOStream *guarded = NULL;
    g_object_get(tls, "base-io-stream", &guarded, NULL);
    moat_tls_guard_arm(guarded, renegotiation_refused, report, g_free);
    g_clear_object(&guarded);
}

/* Done or failed: a done one goes to libsoup; a failed one (the client
 * gave up or sent junk, its 3 s or the request deadline passed and the
 * socket was shut down) is closed, and socket_gone frees `c` once GLib
 * drops the stream (often on the pool thread that ran the handshake: then
 * on the control thread soon after). Either way its slot goes to a waiting
 * connection. */
static void handshake_done(GObject *source, GAsyncResult *result, gpointer data)
{
    handshake *h = data;
    connection *c = h->c;
    GIOStream *tls = h->tls;
    gboolean done = g_tls_connection_handshake_finish(G_TLS_CONNECTION(tls), result, NULL);
    g_free(h);
    if (!c) {
        g_object_unref(tls);
        return;
    }
    c->handshake = NULL;
    if (c->handshake_timer)
        g_source_remove(c->handshake_timer);
    c->handshake_timer = 0;
    moat_http_listener *listener = c->listener;
    char key[sizeof c->key];
    g_strlcpy(key, c->key, sizeof key);
    GSocketAddress *local = c->local;
    c->local = NULL;
    if (done) {
        refuse_renegotiation(c, tls);
        http_listener_hand_over(c, tls, local);
    } else {
        g_socket_close(c->socket, NULL);
        g_object_unref(tls);
        g_object_unref(local);
    }
    moat_handshakes_end(listener->handshakes, key);
}

/* moat_handshake_start_fn: `c` has a slot. Its handshake runs on a thread
 * of GLib's pool (glib-networking's way) and has HANDSHAKE_TIMEOUT_MS,
 * within the request deadline; libsoup gets the connection only once it is
 * done, so its close never waits on a handshake. */
void http_listener_start_handshake(void *data, void *user)
{
    connection *c = data;
    moat_http_listener *listener = user;
    c->queued = false;
    GSocket *client = c->waiting;
    c->waiting = NULL;
    GIOStream *stream = moat_tls_guard_new(g_socket_connection_factory_create_connection(client));
    g_object_unref(client);
    char key[sizeof c->key];
    g_strlcpy(key, c->key, sizeof key);
    GIOStream *tls = moat_http_tls_wrap(stream, listener->tls);
    if (!tls) { /* the stream is closed and dropped: socket_gone freed `c` */
        moat_handshakes_end(listener->handshakes, key);
        return;
    }
    handshake *h = g_new0(handshake, 1);
    h->c = c;
    h->tls = tls;
    c->handshake = h;
    c->handshake_timer = g_timeout_add(HANDSHAKE_TIMEOUT_MS, handshake_timed_out, c);
    g_tls_connection_handshake_async(G_TLS_CONNECTION(tls), G_PRIORITY_DEFAULT, NULL,
                                     handshake_done, h);
}

static bool peer_closed(GSocket *socket)
{
    struct pollfd check = {.fd = g_socket_get_fd(socket), .events = POLLRDHUP};
    return poll(&check, 1, 0) == 1 && (check.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static gboolean retry_hello(gpointer data)
{
    connection *c = data;
    c->hello_retry = 0;
    http_listener_wait_for_hello(c);
    return G_SOURCE_REMOVE;
}

/* A TLS handshake takes a thread of GLib's pool for as long as it waits on
 * its client, so a client gets one only once its whole first record
 * (the ClientHello) is in, and a slot (http_handshakes.h): a connection
 * that sends nothing, or its hello a byte at a time, or waits for a slot,
 * holds no thread, only its place under the caps until the deadline.
 * Peeked, not read: the TLS stream reads it afresh. */
static gboolean hello_ready(GSocket *socket, GIOCondition condition, gpointer data)
{
    connection *c = data;
    unsigned char head[5];
    int queued = 0;
    gssize n = recv(g_socket_get_fd(socket), head, sizeof head, MSG_PEEK | MSG_DONTWAIT);
    if (n <= 0 || ioctl(g_socket_get_fd(socket), FIONREAD, &queued) != 0) {
        http_listener_drop_waiting(c); /* closed, reset or shut down at the deadline */
        return G_SOURCE_REMOVE;
    }
    switch (moat_http_tls_hello_state(head, (size_t)n, (size_t)queued)) {
    case MOAT_TLS_HELLO_NOT_TLS:
        moat_http_note_refusal(c->listener->gateway, MOAT_REFUSED_NOT_TLS, c->peer);
        http_listener_drop_waiting(c);
        return G_SOURCE_REMOVE;
    case MOAT_TLS_HELLO_INCOMPLETE:
        /* The socket stays readable with a partial record queued: look
         * again a little later rather than spin; a client that has shut
         * its side will never complete it. */
        if (peer_closed(socket)) {
            http_listener_drop_waiting(c);
            return G_SOURCE_REMOVE;
        }
        http_listener_stop_waiting(c);
        c->hello_retry = g_timeout_add(HELLO_RETRY_MS, retry_hello, c);
        return G_SOURCE_REMOVE;
    case MOAT_TLS_HELLO_COMPLETE:
        break;
    }
    http_listener_stop_waiting(c);
    c->queued = true; /* until start_handshake, now or when a slot frees */
    moat_handshakes_request(c->listener->handshakes, c->key, c);
    return G_SOURCE_REMOVE;
}

void http_listener_wait_for_hello(connection *c)
{
    c->hello_watch = g_socket_create_source(c->waiting, G_IO_IN | G_IO_HUP | G_IO_ERR, NULL);
    g_source_set_callback(c->hello_watch, G_SOURCE_FUNC(hello_ready), c, NULL);
    g_source_attach(c->hello_watch, NULL);
}
