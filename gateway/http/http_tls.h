/* TLS for the HTTP listener ([http] tls_cert, tls_key): loads the PEM
 * certificate (chain) and key once, at start, and wraps each accepted
 * connection in a server-side GTlsConnection (glib-networking's GnuTLS
 * backend); the listener runs its handshake, inside the connection's
 * request deadline, before libsoup sees it (http_listener.h).
 *
 * Control thread only. */
#ifndef MOAT_HTTP_TLS_H
#define MOAT_HTTP_TLS_H

#include "base/config.h"

#include <gio/gio.h>
#include <stdbool.h>
#include <stddef.h>

/* Whether the configuration asks for HTTPS (both files named). */
bool moat_http_tls_configured(const moat_config *config);

/* Loads [http] tls_cert and tls_key. Returns a new reference, or NULL when
 * TLS is not configured (no error) or on failure (one line in `error`:
 * no TLS backend, a file unreadable, not PEM, key not matching). */
GTlsCertificate *moat_http_tls_load(const moat_config *config, char *error, size_t error_size);

/* Checks that the configured files load (for start-up validation, before
 * anything else starts). Returns 0, or -1 with one line in `error`. */
int moat_http_tls_check(const moat_config *config, char *error, size_t error_size);

/* What the first bytes a client sent say, before any TLS work is spent on
 * it: `head` holds the first min(available, 5) bytes, `available` how many
 * are queued in all. A TLS record header is type 22 (handshake), version
 * 3.x, then a 16-bit length of at most 2^14 + 2048. */
typedef enum {
    MOAT_TLS_HELLO_INCOMPLETE, /* wait for more */
    MOAT_TLS_HELLO_COMPLETE,   /* a whole first record is queued */
    MOAT_TLS_HELLO_NOT_TLS,    /* not a TLS handshake (plain HTTP, garbage) */
} moat_tls_hello_state;

moat_tls_hello_state moat_http_tls_hello_state(const unsigned char *head, size_t head_length,
                                               size_t available);

/* Wraps `base` (taken) in a server TLS connection with `certificate` and
 * no certificate database (client certificates are never asked for).
 * Returns the new stream, or NULL (base closed and dropped) when the
 * backend refuses. */
GIOStream *moat_http_tls_wrap(GIOStream *base, GTlsCertificate *certificate);

#endif
