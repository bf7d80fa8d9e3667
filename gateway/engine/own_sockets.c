/* Owns the record of Moat's own UDP sockets (own_sockets.h): a hold count
 * per port and the addresses its binds cover, read at creation. */
#include "engine/own_sockets.h"

#include <arpa/inet.h>
#include <glib.h>
#include <ifaddrs.h>
#include <string.h>

struct moat_own_sockets {
    uint8_t held[65536]; /* sockets bound on each port (atomic) */
    bool any_loopback;   /* a wildcard bind: every loopback address is own */
    size_t n_hosts;
    struct in6_addr hosts[MOAT_OWN_SOCKETS_MAX_HOSTS];
};

static void map_v4(struct in6_addr *out, const struct in_addr *v4)
{
    memset(out, 0, sizeof *out);
    out->s6_addr[10] = out->s6_addr[11] = 0xff;
    memcpy(&out->s6_addr[12], v4, 4);
}

/* This host's interface addresses now (IPv4 mapped). */
static size_t interface_addresses(struct in6_addr *out, size_t capacity)
{
    struct ifaddrs *list = NULL;
    size_t n = 0;
    if (getifaddrs(&list) != 0)
        return 0;
    for (struct ifaddrs *i = list; i && n < capacity; i = i->ifa_next) {
        const struct sockaddr *sa = i->ifa_addr;
        if (sa && sa->sa_family == AF_INET)
            map_v4(&out[n++], &((const struct sockaddr_in *)sa)->sin_addr);
        else if (sa && sa->sa_family == AF_INET6)
            out[n++] = ((const struct sockaddr_in6 *)sa)->sin6_addr;
    }
    freeifaddrs(list);
    return n;
}

moat_own_sockets *moat_own_sockets_new_with_hosts(const struct in6_addr *hosts, size_t n_hosts)
{
    moat_own_sockets *own = g_new0(moat_own_sockets, 1);
    own->any_loopback = true;
    own->n_hosts = MIN(n_hosts, (size_t)MOAT_OWN_SOCKETS_MAX_HOSTS);
    if (own->n_hosts)
        memcpy(own->hosts, hosts, own->n_hosts * sizeof *hosts);
    return own;
}

/* One bind's address; false for a wildcard or text that is no address. */
static bool bind_address(const char *text, struct in6_addr *out)
{
    struct in_addr v4;
    if (text && inet_pton(AF_INET, text, &v4) == 1)
        map_v4(out, &v4);
    else if (!text || inet_pton(AF_INET6, text, out) != 1)
        return false;
    return !IN6_IS_ADDR_UNSPECIFIED(out) &&
           !(IN6_IS_ADDR_V4MAPPED(out) && memcmp(&out->s6_addr[12], "\0\0\0\0", 4) == 0);
}

static void add_host(moat_own_sockets *own, const struct in6_addr *address)
{
    for (size_t i = 0; i < own->n_hosts; i++)
        if (memcmp(&own->hosts[i], address, sizeof *address) == 0)
            return;
    if (own->n_hosts < MOAT_OWN_SOCKETS_MAX_HOSTS)
        own->hosts[own->n_hosts++] = *address;
}

moat_own_sockets *moat_own_sockets_new_for_binds(const char *const *binds, size_t n_binds)
{
    moat_own_sockets *own = g_new0(moat_own_sockets, 1);
    for (size_t b = 0; b < n_binds; b++) {
        struct in6_addr address;
        if (bind_address(binds[b], &address)) {
            add_host(own, &address);
        } else if (!own->any_loopback) {
            own->any_loopback = true;
            struct in6_addr hosts[MOAT_OWN_SOCKETS_MAX_HOSTS];
            size_t n = interface_addresses(hosts, MOAT_OWN_SOCKETS_MAX_HOSTS);
            for (size_t i = 0; i < n; i++)
                add_host(own, &hosts[i]);
        }
    }
    return own;
}

void moat_own_sockets_free(moat_own_sockets *own)
{
    g_free(own);
}

void moat_own_sockets_hold(moat_own_sockets *own, uint16_t port)
{
    if (own && port)
        __atomic_add_fetch(&own->held[port], 1, __ATOMIC_RELEASE);
}

void moat_own_sockets_release(moat_own_sockets *own, uint16_t port)
{
    if (!own || !port)
        return;
    uint8_t count = __atomic_load_n(&own->held[port], __ATOMIC_RELAXED);
    while (count && !__atomic_compare_exchange_n(&own->held[port], &count, (uint8_t)(count - 1),
                                                 false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
}

bool moat_own_sockets_holds(const moat_own_sockets *own, uint16_t port)
{
    return own && __atomic_load_n(&own->held[port], __ATOMIC_ACQUIRE) != 0;
}

static bool is_host(const moat_own_sockets *own, const struct in6_addr *address)
{
    if (own->any_loopback && (IN6_IS_ADDR_LOOPBACK(address) ||
                              (IN6_IS_ADDR_V4MAPPED(address) && address->s6_addr[12] == 127)))
        return true;
    for (size_t i = 0; i < own->n_hosts; i++)
        if (memcmp(&own->hosts[i], address, sizeof *address) == 0)
            return true;
    return false;
}

bool moat_own_sockets_is_source(const moat_own_sockets *own, const struct sockaddr_in6 *source)
{
    return source->sin6_family == AF_INET6 &&
           moat_own_sockets_holds(own, ntohs(source->sin6_port)) &&
           is_host(own, &source->sin6_addr);
}
