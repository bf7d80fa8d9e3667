/* Owns the HTTP API's listening socket, the accept loop, each connection's
 * request deadline and the connection caps (http_listener.h); a TLS
 * connection's hello and handshake are http_listener_tls.c.
 *
 * Why accept here instead of soup_server_listen(): libsoup 3.2's listener
 * stops listening for good on the first failed accept (EMFILE under a
 * connection flood would take the API down until restart), gives no hook
 * before it has set a connection up, and has no timeouts of its own. Here a
 * failed accept pauses accepting briefly; a connection over a cap is closed
 * before libsoup sees it; an admitted one is handed over with
 * soup_server_accept_iostream(). libsoup then reports the connection's
 * messages with the GSocketAddress we passed as their remote address (the
 * same object: we keep a reference, so it cannot be reused while the
 * connection is ours): that pointer finds the connection on "request-started"
 * (arm the deadline; for the first request this runs inside
 * soup_server_accept_iostream, right at accept, or over TLS after the
 * handshake, when the deadline armed at accept runs on) and "request-read"
 * (the body is in: disarm). A weak reference on the GSocket, which owns the
 * descriptor, releases the connection's place under the caps whoever drops
 * it last (libsoup, a stolen stream lingering after a 413, a WebSocket),
 * on whatever thread that is: a TLS stream's last reference can go on the
 * GLib pool thread that ran its handshake or its close. The tables are the
 * control thread's, so from another thread socket_gone only marks the
 * record gone and hands the release to the control thread (an idle
 * source); gone_lock orders that against the control thread's uses of the
 * socket and against the stop, which leaves a record whose socket lives on
 * to be freed by socket_gone alone.
 * When the deadline passes, the 408 is written without waiting, the
 * connection is marked timed out and the socket is shut down both ways:
 * libsoup, waiting for more of the request, reads end of file and closes
 * the connection itself. End of file inside a body fails the request; end
 * of file after part of a header block, though, libsoup 3.2 takes for the
 * end of the headers and dispatches the request: the mark makes the server
 * refuse it (http_server.c), so a request answered 408 never runs (before,
 * a DELETE whose blank line never came was carried out after its 408). The
 * cost per request is two pointer lookups and a timer. */
#include "http/http_listener.h"
#include "http/http_listener_private.h"

#include "session/http_admission.h"
#include "http/http_connections.h"
#include "http/http_handshakes.h"
#include "http/http_listen_socket.h"
#include "http/http_message.h"
#include "http/http_router.h"
#include "http/http_tls.h"
#include "http/http_tls_guard.h"

#include <assert.h>
#include <glib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define ACCEPT_PAUSE_MS 100

/* Orders socket_gone, on any thread, against the control thread's uses of
 * a connection's socket, its hand-off and the stop (connection.gone,
 * .gone_source, .orphaned). */
static GMutex gone_lock;

static bool on_control_thread(const moat_http_listener *listener)
{
    return g_thread_self() == listener->control;
}

void http_listener_stop_waiting(connection *c)
{
    if (c->hello_watch) {
        g_source_destroy(c->hello_watch);
        g_source_unref(c->hello_watch);
        c->hello_watch = NULL;
    }
    if (c->hello_retry)
        g_source_remove(c->hello_retry);
    c->hello_retry = 0;
}

/* The control thread's part of a connection: its timers and watches, its
 * place in the handshake queue, its handshake's way back, its local
 * address. */
static void connection_detach(connection *c)
{
    if (c->deadline)
        g_source_remove(c->deadline);
    http_listener_stop_waiting(c);
    if (c->queued)
        moat_handshakes_forget(c->listener->handshakes, c);
    if (c->handshake_timer)
        g_source_remove(c->handshake_timer);
    if (c->handshake)
        c->handshake->c = NULL; /* the listener stopped: handshake_done only cleans up */
    c->handshake = NULL;
    g_clear_object(&c->local);
}

/* What is left once detached: any thread. */
static void record_free(connection *c)
{
    g_object_unref(c->remote);
    g_free(c);
}

/* The table's value destructor (control thread). */
static void connection_free(gpointer data)
{
    connection_detach(data);
    record_free(data);
}

/* Control thread: the socket is gone, its place under the caps is free. */
static void release(connection *c)
{
    moat_http_listener *listener = c->listener;
    assert(on_control_thread(listener));
    moat_connection_counts_release(listener->counts, c->key);
    g_hash_table_remove(listener->connections, c->remote); /* frees c */
}

static gboolean release_handed_off(gpointer data)
{
    connection *c = data;
    g_mutex_lock(&gone_lock);
    g_clear_pointer(&c->gone_source, g_source_unref);
    g_mutex_unlock(&gone_lock);
    release(c);
    return G_SOURCE_REMOVE;
}

/* The socket's weak reference: on the thread that dropped it last. */
static void socket_gone(gpointer data, GObject *where_the_socket_was)
{
    connection *c = data;
    g_mutex_lock(&gone_lock);
    c->gone = true;
    if (c->orphaned) {
        g_mutex_unlock(&gone_lock);
        record_free(c);
        return;
    }
    if (on_control_thread(c->listener)) {
        g_mutex_unlock(&gone_lock);
        release(c);
        return;
    }
    c->gone_source = g_idle_source_new();
    g_source_set_priority(c->gone_source, G_PRIORITY_DEFAULT);
    g_source_set_callback(c->gone_source, release_handed_off, c, NULL);
    g_source_attach(c->gone_source, NULL);
    g_mutex_unlock(&gone_lock);
}

/* Best effort, never waits: a client that reads nothing does not get it.
 * With gone_lock held and the socket not gone. */
static void send_timeout_reply(connection *c, unsigned timeout_ms)
{
    char detail[96];
    snprintf(detail, sizeof detail, "the request did not arrive within %u s", timeout_ms / 1000);
    size_t body_length = 0;
    char *body = moat_http_error_json(408, "request_timeout", detail, &body_length);
    char *reply = g_strdup_printf("HTTP/1.1 408 Request Timeout\r\n"
                                  "Server: moat/" MOAT_VERSION "\r\n"
                                  "Content-Type: application/json\r\n"
                                  "Content-Length: %zu\r\n"
                                  "Connection: close\r\n\r\n%s",
                                  body_length, body);
    g_socket_send_with_blocking(c->socket, reply, strlen(reply), FALSE, NULL, NULL);
    g_free(reply);
    g_free(body);
}

/* Shuts the socket down both ways, a plain-HTTP 408 first when `reply`,
 * unless it is gone already (finalized on another thread, its hand-off on
 * the way: see socket_gone). False when it was. */
bool http_listener_shut_down(connection *c, bool reply)
{
    g_mutex_lock(&gone_lock);
    bool alive = !c->gone;
    if (alive) {
        if (reply)
            send_timeout_reply(c, c->listener->timeout_ms);
        g_socket_shutdown(c->socket, TRUE, TRUE, NULL);
    }
    g_mutex_unlock(&gone_lock);
    return alive;
}

static gboolean deadline_passed(gpointer data)
{
    connection *c = data;
    c->deadline = 0;
    if (c->waiting) {
        moat_http_note_refusal(c->listener->gateway, MOAT_REFUSED_REQUEST_TIMEOUT, c->peer);
        http_listener_drop_waiting(c); /* frees c */
        return G_SOURCE_REMOVE;
    }
    /* Over TLS a plain-text reply would only corrupt the stream (and the
     * deadline often passes inside the handshake): just close. A socket
     * already gone (its release on the way) is not counted. Either way
     * what libsoup has read of the request must not run. */
    c->timed_out = true;
    if (http_listener_shut_down(c, !c->listener->tls))
        moat_http_note_refusal(c->listener->gateway, MOAT_REFUSED_REQUEST_TIMEOUT, c->peer);
    return G_SOURCE_REMOVE;
}

static void arm(connection *c)
{
    if (c->deadline)
        g_source_remove(c->deadline);
    c->deadline =
        c->listener->timeout_ms ? g_timeout_add(c->listener->timeout_ms, deadline_passed, c) : 0;
}

static void disarm(connection *c)
{
    if (c->deadline)
        g_source_remove(c->deadline);
    c->deadline = 0;
}

static connection *find(moat_http_listener *listener, SoupServerMessage *message)
{
    GSocketAddress *remote = soup_server_message_get_remote_address(message);
    return remote ? g_hash_table_lookup(listener->connections, remote) : NULL;
}

static void request_started(SoupServer *server, SoupServerMessage *message, gpointer data)
{
    connection *c = find(data, message);
    if (c && c->first_request_timed)
        c->first_request_timed = false;
    else if (c)
        arm(c);
}

static void request_read(SoupServer *server, SoupServerMessage *message, gpointer data)
{
    connection *c = find(data, message);
    if (c)
        disarm(c);
}

/* Takes `stream` (the socket's, or the TLS stream once its handshake is
 * done) and `local`: libsoup gets the connection. */
void http_listener_hand_over(connection *c, GIOStream *stream, GSocketAddress *local)
{
    /* "request-started" arms the deadline before this returns (over TLS
     * it has run since the accept, and runs on). */
    soup_server_accept_iostream(c->listener->server, stream, local, c->remote, NULL);
    g_object_unref(stream);
    g_object_unref(local);
}

/* Drops a connection that never got to libsoup: closing and releasing the
 * socket finalizes it, and socket_gone frees `c`. */
void http_listener_drop_waiting(connection *c)
{
    http_listener_stop_waiting(c);
    GSocket *socket = c->waiting;
    c->waiting = NULL;
    g_socket_close(socket, NULL);
    g_object_unref(socket);
}

/* Takes `client`: refuses it (closed now, counted) or hands it to libsoup. */
static void admit(moat_http_listener *listener, GSocket *client)
{
    GSocketAddress *remote = g_socket_get_remote_address(client, NULL);
    GSocketAddress *local = g_socket_get_local_address(client, NULL);
    char peer[64], key[48];
    moat_http_peer_text(remote, peer, sizeof peer);
    moat_admission_source_key(peer, key, sizeof key);
    moat_connection_verdict verdict = remote && local
                                          ? moat_connection_counts_admit(listener->counts, key)
                                          : MOAT_CONNECTION_OVER_TOTAL; /* gone already */
    if (verdict != MOAT_CONNECTION_ADMITTED) {
        if (remote && local)
            moat_http_note_refusal(listener->gateway,
                                   verdict == MOAT_CONNECTION_OVER_SOURCE
                                       ? MOAT_REFUSED_MAX_CONNECTIONS_SRC
                                       : MOAT_REFUSED_MAX_CONNECTIONS,
                                   peer);
        g_socket_close(client, NULL);
        g_object_unref(client);
        g_clear_object(&remote);
        g_clear_object(&local);
        return;
    }
    connection *c = g_new0(connection, 1);
    c->listener = listener;
    c->socket = client;
    c->remote = remote;
    g_strlcpy(c->key, key, sizeof c->key);
    g_strlcpy(c->peer, peer, sizeof c->peer);
    assert(on_control_thread(listener));
    g_hash_table_insert(listener->connections, remote, c);
    g_object_weak_ref(G_OBJECT(client), socket_gone, c);

    g_socket_set_option(client, IPPROTO_TCP, TCP_NODELAY, TRUE, NULL);
    if (listener->tls) {
        c->waiting = client;
        c->local = local;
        c->first_request_timed = true;
        arm(c);
        http_listener_wait_for_hello(c);
        return;
    }
    GIOStream *stream = G_IO_STREAM(g_socket_connection_factory_create_connection(client));
    g_object_unref(client);
    http_listener_hand_over(c, stream, local);
}

static gboolean accept_ready(GSocket *socket, GIOCondition condition, gpointer data);

static void watch_listening_socket(moat_http_listener *listener)
{
    listener->accepting = g_socket_create_source(listener->socket, G_IO_IN, NULL);
    g_source_set_callback(listener->accepting, G_SOURCE_FUNC(accept_ready), listener, NULL);
    g_source_attach(listener->accepting, NULL);
}

static gboolean resume_accepting(gpointer data)
{
    moat_http_listener *listener = data;
    listener->resume_timer = 0;
    watch_listening_socket(listener);
    return G_SOURCE_REMOVE;
}

/* Out of descriptors (or another failure that would repeat at once): the
 * listening socket stays readable, so stop watching it for a moment rather
 * than spin, and keep listening. */
static void pause_accepting(moat_http_listener *listener, const char *why)
{
    moat_http_log(listener->gateway, "accepting HTTP connections paused for %d ms: %s",
                  ACCEPT_PAUSE_MS, why);
    g_source_unref(listener->accepting); /* its callback returns G_SOURCE_REMOVE */
    listener->accepting = NULL;
    listener->resume_timer = g_timeout_add(ACCEPT_PAUSE_MS, resume_accepting, listener);
}

/* One accept per wakeup: the loop calls again while more are queued, and a
 * lone connection costs no second accept() that would only fail. */
static gboolean accept_ready(GSocket *socket, GIOCondition condition, gpointer data)
{
    moat_http_listener *listener = data;
    GError *error = NULL;
    GSocket *client = g_socket_accept(socket, NULL, &error);
    if (client) {
        admit(listener, client);
        return G_SOURCE_CONTINUE;
    }
    bool would_block = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);
    if (!would_block)
        pause_accepting(listener, error->message);
    g_error_free(error);
    return would_block ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

moat_http_listener *moat_http_listener_start(SoupServer *server, moat_gateway *gateway, char *error,
                                             size_t error_size)
{
    GTlsCertificate *tls = NULL;
    if (moat_http_tls_configured(&gateway->config)) {
        tls = moat_http_tls_load(&gateway->config, error, error_size);
        if (!tls)
            return NULL;
    }
    GSocket *socket = moat_http_listen_socket(gateway->config.http_bind, gateway->config.http_port,
                                              error, error_size);
    if (!socket) {
        g_clear_object(&tls);
        return NULL;
    }
    moat_http_listener *listener = g_new0(moat_http_listener, 1);
    listener->tls = tls;
    listener->server = server;
    listener->gateway = gateway;
    listener->socket = socket;
    listener->timeout_ms = (unsigned)gateway->config.request_timeout_s * 1000u;
    listener->control = g_thread_self();
    listener->counts =
        moat_connection_counts_new((size_t)gateway->config.max_connections,
                                   (size_t)gateway->config.max_connections_per_source);
    listener->connections =
        g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, connection_free);
    if (tls)
        listener->handshakes =
            moat_handshakes_new((size_t)gateway->config.max_tls_handshakes,
                                (size_t)gateway->config.max_tls_handshakes_per_source,
                                http_listener_start_handshake, listener);
    g_signal_connect(server, "request-started", G_CALLBACK(request_started), listener);
    g_signal_connect(server, "request-read", G_CALLBACK(request_read), listener);
    watch_listening_socket(listener);
    return listener;
}

/* At the stop (control thread): `c` leaves the listener. A record whose
 * socket went on another thread, its hand-off not run, is freed now; one
 * whose socket is still alive stays for socket_gone to free, whenever and
 * wherever the socket goes. A socket still waiting for its hello is ours:
 * closed. libsoup's, or in its handshake: soup_server_disconnect() closes
 * its stream, and closing a TLS stream waits for a handshake in flight,
 * which waits on its client (one that stalled after its ClientHello held
 * the shutdown for as long as it stayed), and may write a close_notify to a
 * client that reads nothing; a handshake would run on in its thread. Shut
 * down, all end at once. */
static void orphan(connection *c)
{
    connection_detach(c);
    GSocket *waiting = c->waiting;
    c->waiting = NULL;
    g_mutex_lock(&gone_lock);
    bool gone = c->gone;
    if (c->gone_source) {
        g_source_destroy(c->gone_source);
        g_clear_pointer(&c->gone_source, g_source_unref);
    }
    c->orphaned = true;
    if (!gone && !waiting)
        g_socket_shutdown(c->socket, TRUE, TRUE, NULL);
    g_mutex_unlock(&gone_lock);
    if (gone) {
        record_free(c);
    } else if (waiting) {
        g_socket_close(waiting, NULL);
        g_object_unref(waiting); /* as a rule the last reference: socket_gone frees c */
    }
}

void moat_http_listener_stop(moat_http_listener *listener)
{
    if (!listener)
        return;
    g_signal_handlers_disconnect_by_data(listener->server, listener);
    if (listener->accepting) {
        g_source_destroy(listener->accepting);
        g_source_unref(listener->accepting);
    }
    if (listener->resume_timer)
        g_source_remove(listener->resume_timer);
    g_socket_close(listener->socket, NULL);
    g_object_unref(listener->socket);
    assert(on_control_thread(listener));
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, listener->connections);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        g_hash_table_iter_steal(&it);
        orphan(value);
    }
    g_hash_table_destroy(listener->connections);
    moat_handshakes_free(listener->handshakes);
    moat_connection_counts_free(listener->counts);
    g_clear_object(&listener->tls);
    g_free(listener);
}

GSocket *moat_http_listener_request_over(moat_http_listener *listener, SoupServerMessage *message)
{
    connection *c = listener ? find(listener, message) : NULL;
    if (!c)
        return NULL;
    disarm(c);
    return c->socket;
}

bool moat_http_listener_timed_out(moat_http_listener *listener, SoupServerMessage *message)
{
    connection *c = listener ? find(listener, message) : NULL;
    return c && c->timed_out;
}

GSocket *moat_http_listener_socket(moat_http_listener *listener, SoupServerMessage *message)
{
    connection *c = listener ? find(listener, message) : NULL;
    return c ? c->socket : NULL;
}

size_t moat_http_listener_connections(const moat_http_listener *listener)
{
    return listener ? moat_connection_counts_open(listener->counts) : 0;
}
