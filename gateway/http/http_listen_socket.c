/* Owns the HTTP API's listening socket's making (bind, backlog, non-blocking)
 * and the text of a peer's address for logs and source keys. */
#include "http/http_listen_socket.h"

#include <stdio.h>

#define LISTEN_BACKLOG 511

GSocket *moat_http_listen_socket(const char *bind, int port, char *error, size_t error_size)
{
    GInetAddress *address = g_inet_address_new_from_string(bind);
    if (!address) {
        snprintf(error, error_size, "[http] bind = \"%s\": not an IP address", bind);
        return NULL;
    }
    GSocketAddress *socket_address = g_inet_socket_address_new(address, (guint16)port);
    GError *gerror = NULL;
    GSocket *socket = g_socket_new(g_inet_address_get_family(address), G_SOCKET_TYPE_STREAM,
                                   G_SOCKET_PROTOCOL_TCP, &gerror);
    if (socket) {
        g_socket_set_listen_backlog(socket, LISTEN_BACKLOG);
        g_socket_set_blocking(socket, FALSE);
        if (!g_socket_bind(socket, socket_address, TRUE, &gerror) ||
            !g_socket_listen(socket, &gerror))
            g_clear_object(&socket);
    }
    if (!socket) {
        snprintf(error, error_size, "cannot listen on HTTP port %s:%d: %s", bind, port,
                 gerror->message);
        g_error_free(gerror);
    }
    g_object_unref(socket_address);
    g_object_unref(address);
    return socket;
}

void moat_http_peer_text(GSocketAddress *address, char *out, size_t size)
{
    g_strlcpy(out, "?", size);
    if (!address || !G_IS_INET_SOCKET_ADDRESS(address))
        return;
    char *text =
        g_inet_address_to_string(g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(address)));
    g_strlcpy(out, text, size);
    g_free(text);
}
