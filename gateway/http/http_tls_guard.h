/* The HTTPS listener's refusal of TLS renegotiation. glib-networking 2.74
 * answers a TLS 1.2 client that asks to renegotiate, and offers no way to
 * refuse it: the new handshake runs on a thread of GLib's pool with no
 * deadline, outside the listener's handshake slots (http_handshakes.h), for
 * as long as the client stalls it. So a stream between the socket and the
 * TLS connection follows the client's record headers (in the clear in
 * every TLS version) as GnuTLS reads them, and once the first handshake is
 * done a handshake record fails the read: GnuTLS never sees the new
 * ClientHello, the read fails and the connection ends. TLS 1.3 has no
 * renegotiation, and its post-handshake messages (KeyUpdate) travel in
 * application-data records, which pass. */
#ifndef MOAT_HTTP_TLS_GUARD_H
#define MOAT_HTTP_TLS_GUARD_H

#include <gio/gio.h>
#include <stdbool.h>
#include <stddef.h>

#define MOAT_TLS_RECORD_HEADER    5
#define MOAT_TLS_RECORD_HANDSHAKE 22

/* Where the client's bytes stand in its TLS records. Zeroed: at the start
 * of the first record. */
typedef struct {
    unsigned char header[MOAT_TLS_RECORD_HEADER];
    size_t header_have; /* bytes of the next record's header seen */
    size_t body_left;   /* bytes of the current record's body still to come */
} moat_tls_records;

/* How many of the next `length` bytes may go on to the TLS library: all of
 * them, unless `refuse_handshake` and a handshake record starts among
 * them, then those before its first byte. Moves `records` over them. */
size_t moat_tls_records_pass(moat_tls_records *records, const unsigned char *data, size_t length,
                             bool refuse_handshake);

/* Called once, from the thread that read the refused record (the main
 * loop's, after the handshake). */
typedef void (*moat_tls_guard_refused_fn)(void *user);

/* The TCP socket of `connection` (taken) as a GSocketConnection whose reads
 * pass the guard (not armed yet). Closing it closes the socket. */
GIOStream *moat_tls_guard_new(GSocketConnection *connection);

/* `guarded` (from moat_tls_guard_new; anything else is ignored): from now
 * on a handshake record from the client fails the read, and the first
 * calls `refused` with `user`; `free_user` frees `user` with the stream. */
void moat_tls_guard_arm(GIOStream *guarded, moat_tls_guard_refused_fn refused, void *user,
                        GDestroyNotify free_user);

#endif
