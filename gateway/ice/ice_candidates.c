/* The host candidates an ICE-lite session advertises: the machine's up
 * interface addresses from getifaddrs, deduplicated, and their RFC 8445
 * §5.1.2.1 priorities. */
#include "ice/ice_candidates.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>

static bool address_wanted(const struct ifaddrs *ifa, bool include_loopback, bool include_ipv6)
{
    if (ifa->ifa_addr == NULL || (ifa->ifa_flags & IFF_UP) == 0)
        return false;
    if ((ifa->ifa_flags & IFF_LOOPBACK) != 0 && !include_loopback)
        return false;

    if (ifa->ifa_addr->sa_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)ifa->ifa_addr;
        /* 127/8 can sit on a non-loopback interface too. */
        if ((ntohl(v4->sin_addr.s_addr) >> 24) == 127 && !include_loopback)
            return false;
        return true;
    }
    if (ifa->ifa_addr->sa_family == AF_INET6 && include_ipv6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)ifa->ifa_addr;
        if (IN6_IS_ADDR_LINKLOCAL(&v6->sin6_addr))
            return false;
        if (IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr) && !include_loopback)
            return false;
        return true;
    }
    return false;
}

static bool fill_address(moat_ice_address *out, const struct sockaddr *address)
{
    memset(out, 0, sizeof *out);
    if (address->sa_family == AF_INET) {
        struct sockaddr_in v4;
        memcpy(&v4, address, sizeof v4);
        v4.sin_port = 0;
        memcpy(&out->address, &v4, sizeof v4);
        out->length = sizeof v4;
        return inet_ntop(AF_INET, &v4.sin_addr, out->text, sizeof out->text) != NULL;
    }
    struct sockaddr_in6 v6;
    memcpy(&v6, address, sizeof v6);
    v6.sin6_port = 0;
    v6.sin6_flowinfo = 0;
    v6.sin6_scope_id = 0;
    memcpy(&out->address, &v6, sizeof v6);
    out->length = sizeof v6;
    return inet_ntop(AF_INET6, &v6.sin6_addr, out->text, sizeof out->text) != NULL;
}

/* The same address can be configured on several interfaces (or appear once
 * per alias); offering it twice would only double the peer's checks. */
static bool already_listed(const moat_ice_address *list, size_t count, const moat_ice_address *a)
{
    for (size_t i = 0; i < count; i++) {
        if (list[i].length == a->length && memcmp(&list[i].address, &a->address, a->length) == 0)
            return true;
    }
    return false;
}

int moat_ice_host_addresses(moat_ice_address *out, size_t capacity, bool include_loopback,
                            bool include_ipv6)
{
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0)
        return -1;

    size_t count = 0;
    for (const struct ifaddrs *ifa = list; ifa != NULL && count < capacity; ifa = ifa->ifa_next) {
        if (!address_wanted(ifa, include_loopback, include_ipv6))
            continue;
        if (!fill_address(&out[count], ifa->ifa_addr))
            continue;
        if (already_listed(out, count, &out[count]))
            continue;
        count++;
    }
    freeifaddrs(list);
    return count > (size_t)INT_MAX ? INT_MAX : (int)count;
}

uint32_t moat_ice_host_priority(uint32_t local_preference, uint32_t component)
{
    if (local_preference > 65535u)
        local_preference = 65535u;
    if (component < 1u)
        component = 1u;
    if (component > 256u)
        component = 256u;
    return (MOAT_ICE_TYPE_PREFERENCE_HOST << 24) + (local_preference << 8) + (256u - component);
}
