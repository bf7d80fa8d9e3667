/* Where moat-flood may send: loopback and private networks only unless
 * --allow-remote; checks every resolved address of the WHIP host, --target and
 * the answers' candidates. */
#include "target_policy.h"

#include <arpa/inet.h>
#include <glib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ipv4_is_local(uint32_t a)
{
    return (a >> 24) == 127 ||                  /* loopback */
           (a >> 24) == 10 ||                   /* RFC 1918 */
           (a >> 20) == ((172u << 4) | 1u) ||   /* 172.16.0.0/12 */
           (a >> 16) == ((192u << 8) | 168u) || /* 192.168.0.0/16 */
           (a >> 22) == ((100u << 2) | 1u) ||   /* 100.64.0.0/10 */
           (a >> 16) == ((169u << 8) | 254u);   /* link-local */
}

bool target_address_is_local(const struct sockaddr *address)
{
    if (address == NULL)
        return false;
    if (address->sa_family == AF_INET) {
        struct sockaddr_in v4;
        memcpy(&v4, address, sizeof v4);
        return ipv4_is_local(ntohl(v4.sin_addr.s_addr));
    }
    if (address->sa_family != AF_INET6)
        return false;
    struct sockaddr_in6 v6;
    memcpy(&v6, address, sizeof v6);
    const uint8_t *b = v6.sin6_addr.s6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) {
        uint32_t a = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
        return ipv4_is_local(a);
    }
    return IN6_IS_ADDR_LOOPBACK(&v6.sin6_addr) || (b[0] & 0xfe) == 0xfc || /* fc00::/7 */
           (b[0] == 0xfe && (b[1] & 0xc0) == 0x80);                        /* fe80::/10 */
}

void target_address_text(const struct sockaddr *address, char *out, size_t size)
{
    char text[INET6_ADDRSTRLEN] = "?";
    if (address->sa_family == AF_INET) {
        struct sockaddr_in v4;
        memcpy(&v4, address, sizeof v4);
        inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    } else if (address->sa_family == AF_INET6) {
        struct sockaddr_in6 v6;
        memcpy(&v6, address, sizeof v6);
        if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr))
            inet_ntop(AF_INET, &v6.sin6_addr.s6_addr[12], text, sizeof text);
        else
            inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    }
    snprintf(out, size, "%s", text);
}

int target_policy_check_host(const char *host, bool allow_remote, char *error, size_t error_size)
{
    if (host == NULL || host[0] == '\0') {
        snprintf(error, error_size, "no host");
        return -1;
    }
    /* A bracketed IPv6 literal as URLs write it. */
    char bare[256];
    size_t length = strlen(host);
    if (host[0] == '[' && length >= 2 && host[length - 1] == ']' && length - 2 < sizeof bare) {
        memcpy(bare, host + 1, length - 2);
        bare[length - 2] = '\0';
    } else {
        snprintf(bare, sizeof bare, "%s", host);
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *list = NULL;
    int status = getaddrinfo(bare, NULL, &hints, &list);
    if (status != 0) {
        snprintf(error, error_size, "cannot resolve %s: %s", bare, gai_strerror(status));
        return -1;
    }
    int result = 0;
    for (struct addrinfo *ai = list; ai != NULL && result == 0; ai = ai->ai_next) {
        if (allow_remote || target_address_is_local(ai->ai_addr))
            continue;
        char text[INET6_ADDRSTRLEN];
        target_address_text(ai->ai_addr, text, sizeof text);
        snprintf(error, error_size,
                 "refusing to send to %s (%s): not loopback or a private network; "
                 "pass --allow-remote to load-test a remote target you are allowed to test",
                 bare, text);
        result = -1;
    }
    freeaddrinfo(list);
    return result;
}

int target_policy_check_url(const char *url, bool allow_remote, char *error, size_t error_size)
{
    GError *parse_error = NULL;
    GUri *uri = g_uri_parse(url, G_URI_FLAGS_NONE, &parse_error);
    if (uri == NULL) {
        snprintf(error, error_size, "bad URL %s: %s", url, parse_error->message);
        g_error_free(parse_error);
        return -1;
    }
    const char *scheme = g_uri_get_scheme(uri);
    const char *host = g_uri_get_host(uri);
    int result;
    if (scheme == NULL ||
        (g_ascii_strcasecmp(scheme, "http") != 0 && g_ascii_strcasecmp(scheme, "https") != 0)) {
        snprintf(error, error_size, "bad URL %s: the WHIP endpoint must be http or https", url);
        result = -1;
    } else if (host == NULL || host[0] == '\0') {
        snprintf(error, error_size, "bad URL %s: no host", url);
        result = -1;
    } else {
        result = target_policy_check_host(host, allow_remote, error, error_size);
    }
    g_uri_unref(uri);
    return result;
}

int target_policy_resolve(const char *host_port, bool allow_remote, struct sockaddr_in6 *out,
                          char *error, size_t error_size)
{
    const char *colon = strrchr(host_port, ':');
    if (colon == NULL || colon == host_port || colon[1] == '\0') {
        snprintf(error, error_size, "bad target %s: expected HOST:PORT", host_port);
        return -1;
    }
    char host[256];
    size_t host_length = (size_t)(colon - host_port);
    if (host_length >= sizeof host) {
        snprintf(error, error_size, "bad target %s: host too long", host_port);
        return -1;
    }
    memcpy(host, host_port, host_length);
    host[host_length] = '\0';
    char *end = NULL;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end != '\0' || port == 0 || port > 65535) {
        snprintf(error, error_size, "bad target %s: port must be 1..65535", host_port);
        return -1;
    }
    if (target_policy_check_host(host, allow_remote, error, error_size) != 0)
        return -1;
    if (host[0] == '[') {
        memmove(host, host + 1, host_length);
        host[host_length - 2] = '\0';
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM};
    struct addrinfo *list = NULL;
    if (getaddrinfo(host, NULL, &hints, &list) != 0 || list == NULL) {
        snprintf(error, error_size, "cannot resolve %s", host);
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->sin6_family = AF_INET6;
    out->sin6_port = htons((uint16_t)port);
    if (list->ai_family == AF_INET) {
        struct sockaddr_in v4;
        memcpy(&v4, list->ai_addr, sizeof v4);
        out->sin6_addr.s6_addr[10] = 0xff;
        out->sin6_addr.s6_addr[11] = 0xff;
        memcpy(&out->sin6_addr.s6_addr[12], &v4.sin_addr, 4);
    } else {
        struct sockaddr_in6 v6;
        memcpy(&v6, list->ai_addr, sizeof v6);
        out->sin6_addr = v6.sin6_addr;
        out->sin6_scope_id = v6.sin6_scope_id;
    }
    freeaddrinfo(list);
    return 0;
}
