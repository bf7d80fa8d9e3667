/* The host candidates an ICE-lite session advertises: the machine's up and
 * running interface addresses from getifaddrs, deduplicated, ordered for a
 * caller that offers only some of them, and their RFC 8445 §5.1.2.1
 * priorities. */
#include "ice/ice_candidates.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

static bool address_wanted(const struct ifaddrs *ifa, bool include_loopback, bool include_ipv6)
{
    if (ifa->ifa_addr == NULL || (ifa->ifa_flags & IFF_UP) == 0)
        return false;
    /* Up without carrier (an idle docker0, a bridge with no port): nothing
     * reaches an address there, and it would take a candidate's place. */
    if ((ifa->ifa_flags & IFF_RUNNING) == 0)
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

bool moat_ice_address_is_loopback(const struct sockaddr *address)
{
    if (address->sa_family == AF_INET) {
        struct sockaddr_in v4;
        memcpy(&v4, address, sizeof v4);
        return (ntohl(v4.sin_addr.s_addr) >> 24) == 127;
    }
    if (address->sa_family == AF_INET6) {
        struct sockaddr_in6 v6;
        memcpy(&v6, address, sizeof v6);
        return IN6_IS_ADDR_LOOPBACK(&v6.sin6_addr);
    }
    return false;
}

bool moat_ice_text_is_loopback(const char *text)
{
    struct sockaddr_in v4 = {.sin_family = AF_INET};
    if (inet_pton(AF_INET, text, &v4.sin_addr) == 1)
        return moat_ice_address_is_loopback((const struct sockaddr *)&v4);
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6};
    if (inet_pton(AF_INET6, text, &v6.sin6_addr) == 1)
        return moat_ice_address_is_loopback((const struct sockaddr *)&v6);
    return false;
}

/* Which of the four kinds an address is: IPv4 or IPv6, loopback or not. */
static unsigned address_kind(const moat_ice_address *a)
{
    const struct sockaddr *address = (const struct sockaddr *)&a->address;
    return (address->sa_family == AF_INET6 ? 1u : 0u) +
           (moat_ice_address_is_loopback(address) ? 2u : 0u);
}

/* Every wanted address of the list, deduplicated, in interface order, in
 * *all (NULL when none; the caller frees it). -1: no memory. */
static int wanted_addresses(const struct ifaddrs *list, const moat_ice_gather_options *options,
                            moat_ice_address **all, size_t *count)
{
    size_t entries = 0;
    for (const struct ifaddrs *ifa = list; ifa != NULL; ifa = ifa->ifa_next)
        entries++;
    *count = 0;
    *all = entries ? calloc(entries, sizeof **all) : NULL;
    if (entries && !*all)
        return -1;
    for (const struct ifaddrs *ifa = list; ifa != NULL; ifa = ifa->ifa_next) {
        if (!address_wanted(ifa, options->include_loopback, options->include_ipv6))
            continue;
        if (!fill_address(&(*all)[*count], ifa->ifa_addr))
            continue;
        if (already_listed(*all, *count, &(*all)[*count]))
            continue;
        (*count)++;
    }
    return 0;
}

/* Every non-loopback address before every loopback one (a client elsewhere
 * cannot reach 127.0.0.1 or ::1), interface order within each. */
static void sort_loopback_last(const moat_ice_address *all, size_t n, moat_ice_address *sorted)
{
    size_t k = 0;
    for (unsigned loopback = 0; loopback < 2; loopback++)
        for (size_t i = 0; i < n; i++)
            if ((address_kind(&all[i]) >= 2u) == (loopback == 1))
                sorted[k++] = all[i];
}

/* Which of the sorted addresses are offered when only `keep` are: the
 * first of each kind (IPv4, IPv6, each loopback or not), then the others
 * in order. */
static void choose_offered(const moat_ice_address *sorted, size_t n, size_t keep, bool *chosen)
{
    bool kind_seen[4] = {false, false, false, false};
    size_t taken = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned kind = address_kind(&sorted[i]);
        chosen[i] = !kind_seen[kind] && taken < keep;
        taken += chosen[i] ? 1u : 0u;
        kind_seen[kind] = true;
    }
    for (size_t i = 0; i < n && taken < keep; i++) {
        if (!chosen[i]) {
            chosen[i] = true;
            taken++;
        }
    }
}

/* The offered addresses, then those left out, each in sorted order; at
 * most capacity written. */
static void write_ordered(const moat_ice_address *sorted, const bool *chosen, size_t n,
                          moat_ice_address *out, size_t capacity)
{
    size_t k = 0;
    for (unsigned pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n && k < capacity; i++) {
            if (chosen[i] == (pass == 0))
                out[k++] = sorted[i];
        }
    }
}

int moat_ice_select_addresses(const struct ifaddrs *list, const moat_ice_gather_options *options,
                              moat_ice_address *out, size_t capacity)
{
    size_t n = 0;
    moat_ice_address *all = NULL;
    if (wanted_addresses(list, options, &all, &n) != 0)
        return -1;
    moat_ice_address *sorted = n ? calloc(n, sizeof *sorted) : NULL;
    bool *chosen = n ? calloc(n, sizeof *chosen) : NULL;
    int status = n > (size_t)INT_MAX ? INT_MAX : (int)n;
    if (n && (!sorted || !chosen)) {
        status = -1;
    } else if (n) {
        sort_loopback_last(all, n, sorted);
        choose_offered(sorted, n, options->keep ? options->keep : n, chosen);
        write_ordered(sorted, chosen, n, out, capacity);
    }
    free(chosen);
    free(sorted);
    free(all);
    return status;
}

int moat_ice_host_addresses(moat_ice_address *out, size_t capacity,
                            const moat_ice_gather_options *options)
{
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0)
        return -1;
    int n = moat_ice_select_addresses(list, options, out, capacity);
    freeifaddrs(list);
    return n;
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
