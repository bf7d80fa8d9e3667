/* Which HTTPS connections may run their TLS handshake now. A handshake
 * takes a thread of GLib's pool while it waits on its client
 * (glib-networking's way), so at most [http] max_tls_handshakes run at once,
 * and max_tls_handshakes_per_source from one source (the key of
 * http_admission.h: an IPv4 address or an IPv6 /64). A connection beyond
 * either cap waits, holding no thread, in a queue; when a handshake ends the
 * freed slot goes to the source that runs the fewest handshakes (the one
 * waiting longest among equals), so sources that stall many handshakes do
 * not keep another source's first one waiting behind theirs, and to that
 * source's newest waiting connection, so a burst of stalled hellos does not
 * keep the source's next real client behind all of them either.
 * Pure accounting and order: no sockets, no clock (http_listener.c starts
 * the handshakes and bounds each in time).
 * Control thread only (not locked). */
#ifndef MOAT_HTTP_HANDSHAKES_H
#define MOAT_HTTP_HANDSHAKES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct moat_handshakes moat_handshakes;

/* Called with a connection that may start its handshake now: its slot is
 * taken (give it back with moat_handshakes_end). It may call back into the
 * table (end a handshake that could not start). */
typedef void (*moat_handshake_start_fn)(void *connection, void *user);

/* 0 for either cap: no limit. */
moat_handshakes *moat_handshakes_new(size_t max_total, size_t max_per_source,
                                     moat_handshake_start_fn start, void *user);
void moat_handshakes_free(moat_handshakes *handshakes);

/* `connection`'s ClientHello is in: start() is called with it now if both
 * caps allow (returns true), else it waits in the queue (false). */
bool moat_handshakes_request(moat_handshakes *handshakes, const char *key, void *connection);
/* A waiting connection is gone: it leaves the queue (one not in it: no-op). */
void moat_handshakes_forget(moat_handshakes *handshakes, void *connection);
/* The handshake of a connection of source `key` has ended (either way): its
 * slot goes to the waiting connections that fit, fairest first. */
void moat_handshakes_end(moat_handshakes *handshakes, const char *key);

size_t moat_handshakes_running(const moat_handshakes *handshakes);
size_t moat_handshakes_waiting(const moat_handshakes *handshakes);

#endif
