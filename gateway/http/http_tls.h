/* TLS for the HTTP listener ([http] tls_cert, tls_key): loads the PEM
 * certificate (chain) and key once, at start, and wraps each accepted
 * connection in a server-side GTlsConnection (glib-networking's GnuTLS
 * backend) before libsoup sees it; the handshake runs on its first read,
 * inside the connection's request deadline (http_listener.h).
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

/* Wraps `base` (taken) in a server TLS connection with `certificate`.
 * Returns the new stream, or NULL (base closed and dropped) when the
 * backend refuses. */
GIOStream *moat_http_tls_wrap(GIOStream *base, GTlsCertificate *certificate);

#endif
