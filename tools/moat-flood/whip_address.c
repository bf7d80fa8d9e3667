/* Addresses, SDP fragment values and origins for WHIP clients (whip_address.h). */
#include "whip_address.h"

#include <arpa/inet.h>
#include <glib.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void v4_mapped(const struct in_addr *v4, struct sockaddr_in6 *out)
{
    out->sin6_addr.s6_addr[10] = 0xff;
    out->sin6_addr.s6_addr[11] = 0xff;
    memcpy(&out->sin6_addr.s6_addr[12], v4, 4);
}

bool whip_candidate_address(const moat_sdp_candidate *c, struct sockaddr_in6 *out)
{
    memset(out, 0, sizeof *out);
    out->sin6_family = AF_INET6;
    out->sin6_port = htons(c->port);
    struct in_addr v4;
    if (inet_pton(AF_INET, c->address, &v4) == 1) {
        v4_mapped(&v4, out);
        return c->port != 0;
    }
    return inet_pton(AF_INET6, c->address, &out->sin6_addr) == 1 && c->port != 0;
}

/* The first address of host, as a dual-stack destination. */
static bool resolve(const char *host, struct sockaddr_in6 *to)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *list = NULL;
    if (getaddrinfo(host, "9", &hints, &list) != 0 || list == NULL)
        return false;
    memset(to, 0, sizeof *to);
    to->sin6_family = AF_INET6;
    to->sin6_port = htons(9);
    if (list->ai_family == AF_INET) {
        struct sockaddr_in v4;
        memcpy(&v4, list->ai_addr, sizeof v4);
        v4_mapped(&v4.sin_addr, to);
    } else {
        memcpy(to, list->ai_addr, sizeof *to);
    }
    freeaddrinfo(list);
    return true;
}

/* A throwaway socket is connected to learn the source address: dissolving
 * the association of the session's own socket would also release its port
 * (Linux keeps it only when bind named one). */
void whip_learn_local_address(const char *url, int fd, struct sockaddr_in6 *local)
{
    GUri *uri = g_uri_parse(url, G_URI_FLAGS_NONE, NULL);
    const char *host = uri != NULL ? g_uri_get_host(uri) : NULL;
    struct sockaddr_in6 to;
    if (host != NULL && resolve(host, &to)) {
        socklen_t length = sizeof *local;
        int probe = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        int off = 0;
        if (probe >= 0 && setsockopt(probe, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off) == 0 &&
            connect(probe, (struct sockaddr *)&to, sizeof to) == 0)
            getsockname(probe, (struct sockaddr *)local, &length);
        if (probe >= 0)
            close(probe);
    }
    if (uri != NULL)
        g_uri_unref(uri);
    struct sockaddr_in6 bound;
    socklen_t length = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &length) == 0)
        local->sin6_port = bound.sin6_port;
    local->sin6_family = AF_INET6;
}

bool whip_fragment_value(const char *fragment, const char *name, char *out, size_t size)
{
    const char *at = strstr(fragment, name);
    if (at == NULL)
        return false;
    at += strlen(name);
    size_t n = strcspn(at, "\r\n");
    if (n == 0 || n >= size)
        return false;
    memcpy(out, at, n);
    out[n] = '\0';
    return true;
}

/* The port url names, or its scheme's default; -1 for another scheme
 * without one. */
static int origin_port(GUri *uri)
{
    int port = g_uri_get_port(uri);
    if (port > 0)
        return port;
    const char *scheme = g_uri_get_scheme(uri);
    return g_ascii_strcasecmp(scheme, "http") == 0    ? 80
           : g_ascii_strcasecmp(scheme, "https") == 0 ? 443
                                                      : -1;
}

bool whip_same_origin(const char *url, const char *other)
{
    GUri *a = g_uri_parse(url, G_URI_FLAGS_NONE, NULL);
    GUri *b = g_uri_parse(other, G_URI_FLAGS_NONE, NULL);
    bool same = a != NULL && b != NULL && g_uri_get_host(a) != NULL && g_uri_get_host(b) != NULL &&
                g_ascii_strcasecmp(g_uri_get_scheme(a), g_uri_get_scheme(b)) == 0 &&
                g_ascii_strcasecmp(g_uri_get_host(a), g_uri_get_host(b)) == 0 &&
                origin_port(a) == origin_port(b) && origin_port(a) > 0;
    if (a != NULL)
        g_uri_unref(a);
    if (b != NULL)
        g_uri_unref(b);
    return same;
}
