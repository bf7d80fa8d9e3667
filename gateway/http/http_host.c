/* Owns the Host header check of the API (http_host.h). */
#include "http/http_host.h"

#include <arpa/inet.h>
#include <glib.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

static void add_name(GPtrArray *names, const char *name)
{
    if (!name || !*name)
        return;
    char *lower = g_ascii_strdown(name, -1);
    size_t length = strlen(lower);
    if (lower[0] == '[' && length > 2 && lower[length - 1] == ']') {
        memmove(lower, lower + 1, length - 2);
        lower[length - 2] = '\0';
    }
    g_ptr_array_add(names, lower);
}

static void add_interfaces(GPtrArray *names)
{
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0)
        return;
    for (struct ifaddrs *i = list; i; i = i->ifa_next) {
        char text[INET6_ADDRSTRLEN];
        const struct sockaddr *a = i->ifa_addr;
        if (a && a->sa_family == AF_INET &&
            inet_ntop(AF_INET, &((const struct sockaddr_in *)a)->sin_addr, text, sizeof text))
            add_name(names, text);
        else if (a && a->sa_family == AF_INET6 &&
                 inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)a)->sin6_addr, text,
                           sizeof text))
            add_name(names, text);
    }
    freeifaddrs(list);
}

char **moat_http_host_names(const char *bind, const char *server_names, bool interfaces)
{
    GPtrArray *names = g_ptr_array_new();
    add_name(names, "localhost");
    add_name(names, "127.0.0.1");
    add_name(names, "::1");
    if (bind && strcmp(bind, "0.0.0.0") != 0 && strcmp(bind, "::") != 0)
        add_name(names, bind);
    if (interfaces)
        add_interfaces(names);
    char **entries = g_strsplit(server_names ? server_names : "", ",", -1);
    for (char **entry = entries; *entry; entry++)
        add_name(names, g_strstrip(*entry));
    g_strfreev(entries);
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

/* The host part of a Host header into `out`: brackets and port removed. */
static bool host_part(const char *host, char *out, size_t size)
{
    const char *start = host, *end = NULL;
    if (host[0] == '[') {
        start = host + 1;
        end = strchr(start, ']');
        if (!end || (end[1] != '\0' && end[1] != ':'))
            return false;
    } else {
        end = strchr(host, ':');
        if (end && strchr(end + 1, ':'))
            return false; /* an IPv6 address needs brackets */
        if (!end)
            end = host + strlen(host);
    }
    size_t length = (size_t)(end - start);
    if (length == 0 || length >= size)
        return false;
    for (size_t i = 0; i < length; i++)
        out[i] = g_ascii_tolower(start[i]);
    out[length] = '\0';
    /* A fully qualified name may end with a dot. */
    if (length > 1 && out[length - 1] == '.')
        out[length - 1] = '\0';
    return true;
}

bool moat_http_host_allowed(const char *host, const char *const *names)
{
    char name[256];
    if (!host || !*host || !names || !host_part(host, name, sizeof name))
        return false;
    for (const char *const *n = names; *n; n++) {
        if (strcmp(*n, "*") == 0 || strcmp(*n, name) == 0)
            return true;
    }
    return false;
}
