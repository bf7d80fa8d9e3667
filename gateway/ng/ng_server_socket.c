/* The ng control socket: one UDP socket (IPv4 or IPv6) read from a GSource
 * on the control thread's main context; each datagram goes through
 * moat_ng_server_process_from and its reply is sent back to the source. */
#include "ng/ng_server_private.h"

#include <errno.h>
#include <glib-unix.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Datagrams handled per wake-up before other sources get their turn. */
#define NG_DATAGRAMS_PER_DISPATCH 64

static void receive_one(moat_ng_server *server, bool *more)
{
    struct sockaddr_storage from;
    socklen_t from_length = sizeof from;
    /* MSG_TRUNC: the datagram's real length, so oversize ones are seen. */
    ssize_t n = recvfrom(server->fd, server->buffer, MOAT_NG_MAX_DATAGRAM + 1, MSG_TRUNC,
                         (struct sockaddr *)&from, &from_length);
    if (n < 0) {
        *more = false;
        return;
    }
    size_t length = (size_t)n;
    if (length > MOAT_NG_MAX_DATAGRAM + 1)
        length = MOAT_NG_MAX_DATAGRAM + 1; /* what the buffer holds: "too large" */
    GByteArray *reply = g_byte_array_new();
    moat_ng_server_process_from(server, server->buffer, length, (struct sockaddr *)&from,
                                from_length, reply);
    if (reply->len > 0 &&
        sendto(server->fd, reply->data, reply->len, 0, (struct sockaddr *)&from, from_length) < 0)
        server->errors[NG_ERROR_SEND]++;
    g_byte_array_free(reply, TRUE);
}

static gboolean on_readable(gint fd, GIOCondition condition, gpointer data)
{
    moat_ng_server *server = data;
    bool more = true;
    for (int i = 0; i < NG_DATAGRAMS_PER_DISPATCH && more; i++)
        receive_one(server, &more);
    return G_SOURCE_CONTINUE;
}

static int open_socket(const char *bind_address, int port, char *error, size_t error_size)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_DGRAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE};
    struct addrinfo *found = NULL;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    int status = getaddrinfo(bind_address, service, &hints, &found);
    if (status != 0) {
        snprintf(error, error_size, "[ng] bind = \"%s\": not an IP address (%s)", bind_address,
                 gai_strerror(status));
        return -1;
    }
    int fd = socket(found->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0 && found->ai_family == AF_INET6) {
        int off = 0; /* "::" takes IPv4 too */
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    }
    if (fd < 0 || bind(fd, found->ai_addr, found->ai_addrlen) != 0) {
        snprintf(error, error_size, "ng control socket: cannot bind udp %s port %d: %s",
                 bind_address, port, g_strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(found);
    return fd;
}

moat_ng_server *moat_ng_server_start(const char *bind_address, int port,
                                     const moat_ng_handlers *handlers, char *error,
                                     size_t error_size)
{
    if (error_size > 0)
        error[0] = '\0';
    if (port == 0)
        return NULL; /* the protocol is off */
    int fd = open_socket(bind_address, port, error, error_size);
    if (fd < 0)
        return NULL;
    moat_ng_server *server = moat_ng_server_new_detached(handlers);
    server->fd = fd;
    server->buffer = g_malloc(MOAT_NG_MAX_DATAGRAM + 1);
    server->source = g_unix_fd_source_new(fd, G_IO_IN);
    g_source_set_callback(server->source, G_SOURCE_FUNC(on_readable), server, NULL);
    g_source_attach(server->source, g_main_context_get_thread_default());
    return server;
}

void moat_ng_server_stop(moat_ng_server *server)
{
    if (!server)
        return;
    if (server->source) {
        g_source_destroy(server->source);
        g_source_unref(server->source);
    }
    if (server->fd >= 0)
        close(server->fd);
    moat_ng_cookie_cache_free(server->cache);
    g_free(server->buffer);
    g_free(server);
}
