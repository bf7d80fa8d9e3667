/* The HTTP API's listening socket and every connection accepted from it.
 *
 * Bounds what slow or idle clients can hold (slowloris): a connection must
 * deliver its request, headers and body, within [http] request_timeout_s of
 * its accept (or of the start of its next request), or it gets a 408 (if it
 * can still be written) and is closed, and what it sent of the request never
 * runs; at most [http] max_connections are
 * open, and [http] max_connections_per_source from one source (an IPv4
 * address or an IPv6 /64); connections beyond either cap are closed at
 * accept, before anything is read. Each is counted on /metrics
 * (moat_http_refused_total{reason}). Once its request is read a connection
 * is no longer timed: replies may be deferred, and a WebSocket upgraded
 * from it (events.c) lives as long as its client wants; it keeps counting
 * against the caps until its socket is gone.
 *
 * With [http] tls_cert and tls_key every accepted connection is wrapped in
 * TLS (http_tls.h) before libsoup sees it; the handshake is part of the
 * first request's time, so the same deadline bounds it. It starts once the
 * whole ClientHello is in and a handshake slot is free ([http]
 * max_tls_handshakes, max_tls_handshakes_per_source: http_handshakes.h),
 * has 3 s from then (moat_http_refused_total{reason="tls_handshake_timeout"}),
 * and libsoup gets the connection only once it is done. From then on the
 * client may not renegotiate: a handshake record ends the connection
 * (http_tls_guard.h; reason="tls_renegotiation").
 *
 * Control thread only: every function, and every callback it installs,
 * runs on the default main context, but one: the weak reference that sees
 * a connection's socket go runs on the thread that dropped it last (a TLS
 * stream's can be a GLib pool thread) and hands the release of the
 * connection's place to the control thread; the tables are never touched
 * elsewhere (asserted unless NDEBUG). */
#ifndef MOAT_HTTP_LISTENER_H
#define MOAT_HTTP_LISTENER_H

#include "session/gateway_state.h"

#include <libsoup/soup.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct moat_http_listener moat_http_listener;

/* Listens on [http] bind:port and hands admitted connections to `server`.
 * Returns NULL with one line in `error` when it cannot listen. */
moat_http_listener *moat_http_listener_start(SoupServer *server, moat_gateway *gateway, char *error,
                                             size_t error_size);
/* Stops listening and forgets every connection: those libsoup holds are
 * shut down both ways (libsoup still closes them), so none that waits on
 * its client, a TLS handshake included, holds up soup_server_disconnect().
 * Call before soup_server_disconnect(). */
void moat_http_listener_stop(moat_http_listener *listener);

/* The request of `message` has ended early (its connection was stolen to
 * refuse it): its deadline no longer applies. Returns the connection's
 * socket (transfer none; NULL if not ours). */
GSocket *moat_http_listener_request_over(moat_http_listener *listener, SoupServerMessage *message);

/* `message`'s connection passed its request deadline (it got its 408 and
 * was shut down): libsoup may still hand over what it had read of the
 * request (end of file after part of a header block reads as its end),
 * which must be refused, not routed. */
bool moat_http_listener_timed_out(moat_http_listener *listener, SoupServerMessage *message);

/* The socket of `message`'s connection (transfer none; NULL if not ours). */
GSocket *moat_http_listener_socket(moat_http_listener *listener, SoupServerMessage *message);

/* API connections open now (/metrics, tests). */
size_t moat_http_listener_connections(const moat_http_listener *listener);

#endif
