/* The HTTP API's listening socket and a peer address's text, for
 * http_listener.c. Control thread. */
#ifndef MOAT_HTTP_LISTEN_SOCKET_H
#define MOAT_HTTP_LISTEN_SOCKET_H

#include <gio/gio.h>
#include <stddef.h>

/* A non-blocking TCP socket listening on bind:port (an IP address), or NULL
 * with `error` saying why. */
GSocket *moat_http_listen_socket(const char *bind, int port, char *error, size_t error_size);
/* The address part of `address` ("?" when it has none). */
void moat_http_peer_text(GSocketAddress *address, char *out, size_t size);

#endif
