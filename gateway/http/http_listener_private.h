/* What the listener (http_listener.c: accept, caps, deadlines, the socket's
 * release) and its TLS half (http_listener_tls.c: the ClientHello wait and
 * the handshake) share of a connection. Control thread only, except where a
 * field says otherwise; only these two files include it. */
#ifndef MOAT_HTTP_LISTENER_PRIVATE_H
#define MOAT_HTTP_LISTENER_PRIVATE_H

#include "http/http_connections.h"
#include "http/http_handshakes.h"
#include "http/http_listener.h"

#include <gio/gio.h>
#include <libsoup/soup.h>
#include <stdbool.h>

struct moat_http_listener {
    SoupServer *server;
    moat_gateway *gateway;
    GSocket *socket;
    GSource *accepting; /* NULL while paused after a failed accept */
    guint resume_timer;
    unsigned timeout_ms; /* 0: no deadline */
    moat_connection_counts *counts;
    GHashTable *connections;     /* remote GSocketAddress * -> connection (owned) */
    GTlsCertificate *tls;        /* NULL: plain HTTP */
    moat_handshakes *handshakes; /* TLS only */
    GThread *control;            /* the only thread that edits the tables */
};

typedef struct connection connection;

/* A TLS handshake in flight: its callback's data, which outlives the
 * connection when the listener stops first. */
typedef struct {
    connection *c; /* NULL once the connection is forgotten */
    GIOStream *tls;
} handshake;

struct connection {
    moat_http_listener *listener;
    GSocket *socket;        /* weak: the entry goes when the socket is finalized */
    GSocketAddress *remote; /* owned; the table's key */
    guint deadline;         /* timer id; 0: not armed */
    char key[48];           /* source key (http_admission.h) */
    char peer[64];
    /* TLS, until the client's first record is in: the socket (owned), its
     * local address (owned), the readability watch or the retry timer. */
    GSocket *waiting;
    GSocketAddress *local;
    GSource *hello_watch;
    guint hello_retry;
    bool queued; /* hello in, waiting for a handshake slot (http_handshakes.h) */
    /* TLS: the first request's deadline runs from the accept, handshake
     * included; its "request-started", at the hand-over, must not restart
     * it. */
    bool first_request_timed;
    /* The request deadline passed: the 408 is out (plain HTTP) and the
     * socket shut down. Whatever libsoup still makes of the bytes it had
     * (end of file after part of a header block reads as its end) is
     * refused, never routed (moat_http_listener_timed_out). */
    bool timed_out;
    /* TLS, from the handshake's start to its end: the stream is there. */
    handshake *handshake;
    guint handshake_timer;
    /* Under gone_lock. gone: the socket is finalized (socket_gone ran), the
     * record waits for gone_source, the hand-off to the control thread
     * (owned; NULL once run, or when socket_gone ran on the control thread).
     * orphaned: the listener stopped with the socket alive; socket_gone
     * only frees the record. */
    bool gone;
    GSource *gone_source;
    bool orphaned;
};

/* http_listener.c */

/* Removes the hello watch or its retry timer. */
void http_listener_stop_waiting(connection *c);
/* Shuts the socket down both ways, a plain-HTTP 408 first when `reply`,
 * unless it is gone already; false when it was. */
bool http_listener_shut_down(connection *c, bool reply);
/* Takes `stream` and `local`: libsoup gets the connection. */
void http_listener_hand_over(connection *c, GIOStream *stream, GSocketAddress *local);
/* Drops a connection that never got to libsoup (socket_gone frees `c`). */
void http_listener_drop_waiting(connection *c);

/* http_listener_tls.c */

/* Watches a TLS connection's socket until its whole ClientHello is in,
 * then queues it for a handshake slot. */
void http_listener_wait_for_hello(connection *c);
/* moat_handshake_start_fn: the connection got its slot. */
void http_listener_start_handshake(void *data, void *user);

#endif
