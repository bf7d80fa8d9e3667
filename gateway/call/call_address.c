/* Owns the classification of call-leg destinations: special-purpose
 * ranges, operators' denied networks, and Moat's own sockets
 * (call_address.h). */
#include "call/call_address.h"

#include <arpa/inet.h>
#include <glib.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>

static bool is_mapped(const struct in6_addr *a)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(a->s6_addr, prefix, sizeof prefix) == 0;
}

static moat_call_address_kind classify_v4(const uint8_t *b)
{
    if (b[0] == 127)
        return MOAT_CALL_ADDRESS_LOOPBACK;
    if (b[0] == 0)
        return MOAT_CALL_ADDRESS_UNSPECIFIED;
    if (b[0] >= 224 && b[0] <= 239)
        return MOAT_CALL_ADDRESS_MULTICAST;
    if (b[0] >= 240)
        return MOAT_CALL_ADDRESS_BROADCAST;
    if (b[0] == 169 && b[1] == 254)
        return MOAT_CALL_ADDRESS_LINK_LOCAL;
    return MOAT_CALL_ADDRESS_OK;
}

/* The IPv4 address an IPv6 address stands for where a translator or
 * tunnel would deliver it (RFC 4291's deprecated IPv4-compatible ::a.b.c.d,
 * RFC 6052's NAT64 64:ff9b::a.b.c.d, RFC 3056's 6to4 2002:AABB:CCDD::/48),
 * as a mapped address; false when it stands for none. */
bool moat_call_address_embedded_v4(const struct in6_addr *address, struct in6_addr *mapped)
{
    static const uint8_t zero[12] = {0};
    static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    const uint8_t *b = address->s6_addr, *v4 = NULL;
    if (memcmp(b, zero, 12) == 0 && !IN6_IS_ADDR_UNSPECIFIED(address) &&
        !IN6_IS_ADDR_LOOPBACK(address))
        v4 = b + 12;
    else if (memcmp(b, nat64, 12) == 0)
        v4 = b + 12;
    else if (b[0] == 0x20 && b[1] == 0x02)
        v4 = b + 2;
    if (!v4)
        return false;
    memset(mapped, 0, sizeof *mapped);
    mapped->s6_addr[10] = mapped->s6_addr[11] = 0xff;
    memcpy(&mapped->s6_addr[12], v4, 4);
    return true;
}

moat_call_address_kind moat_call_address_classify(const struct in6_addr *address)
{
    struct in6_addr embedded;
    if (is_mapped(address))
        return classify_v4(&address->s6_addr[12]);
    if (moat_call_address_embedded_v4(address, &embedded))
        return classify_v4(&embedded.s6_addr[12]);
    if (IN6_IS_ADDR_LOOPBACK(address))
        return MOAT_CALL_ADDRESS_LOOPBACK;
    if (IN6_IS_ADDR_UNSPECIFIED(address))
        return MOAT_CALL_ADDRESS_UNSPECIFIED;
    if (IN6_IS_ADDR_MULTICAST(address))
        return MOAT_CALL_ADDRESS_MULTICAST;
    if (IN6_IS_ADDR_LINKLOCAL(address))
        return MOAT_CALL_ADDRESS_LINK_LOCAL;
    return MOAT_CALL_ADDRESS_OK;
}

const char *moat_call_address_kind_name(moat_call_address_kind kind)
{
    switch (kind) {
    case MOAT_CALL_ADDRESS_LOOPBACK:
        return "loopback";
    case MOAT_CALL_ADDRESS_UNSPECIFIED:
        return "unspecified";
    case MOAT_CALL_ADDRESS_MULTICAST:
        return "multicast";
    case MOAT_CALL_ADDRESS_BROADCAST:
        return "broadcast";
    case MOAT_CALL_ADDRESS_LINK_LOCAL:
        return "link-local";
    default:
        return "allowed";
    }
}

static bool parse_address(const char *text, struct in6_addr *out, bool *v4)
{
    struct in_addr a4;
    *v4 = false;
    if (inet_pton(AF_INET6, text, out) == 1)
        return true;
    if (inet_pton(AF_INET, text, &a4) != 1)
        return false;
    memset(out, 0, sizeof *out);
    out->s6_addr[10] = out->s6_addr[11] = 0xff;
    memcpy(&out->s6_addr[12], &a4, 4);
    *v4 = true;
    return true;
}

static bool parse_network(const char *text, moat_call_network *out)
{
    char *copy = g_strdup(text);
    char *slash = strchr(copy, '/');
    long prefix = -1;
    if (slash) {
        *slash = '\0';
        char *end = NULL;
        prefix = strtol(slash + 1, &end, 10);
        if (end == slash + 1 || *end || prefix < 0)
            prefix = 1000; /* invalid */
    }
    bool v4;
    bool ok = parse_address(copy, &out->network, &v4);
    g_free(copy);
    long max = v4 ? 32 : 128;
    if (!ok || prefix > max)
        return false;
    out->prefix = (unsigned)((prefix < 0 ? max : prefix) + (v4 ? 96 : 0));
    return true;
}

int moat_call_networks_parse(const char *text, moat_call_network **out, size_t *n_out, char *error,
                             size_t error_size)
{
    *out = NULL;
    *n_out = 0;
    if (!text)
        return 0;
    char **parts = g_strsplit(text, ",", -1);
    GArray *networks = g_array_new(FALSE, TRUE, sizeof(moat_call_network));
    int status = 0;
    for (size_t i = 0; parts[i] && status == 0; i++) {
        char *item = g_strstrip(parts[i]);
        if (!*item)
            continue;
        moat_call_network network;
        if (!parse_network(item, &network)) {
            snprintf(error, error_size,
                     "[call] denied_networks: \"%s\" is not an IPv4 or IPv6 network (CIDR)", item);
            status = -1;
            break;
        }
        g_array_append_val(networks, network);
    }
    g_strfreev(parts);
    if (status != 0 || networks->len == 0) {
        g_array_free(networks, TRUE);
        return status;
    }
    *n_out = networks->len;
    *out = (moat_call_network *)g_array_free(networks, FALSE);
    return 0;
}

static bool in_network(const moat_call_network *network, const struct in6_addr *address)
{
    unsigned bits = network->prefix;
    size_t bytes = bits / 8;
    if (memcmp(network->network.s6_addr, address->s6_addr, bytes) != 0)
        return false;
    if (bits % 8 == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff << (8 - bits % 8));
    return (network->network.s6_addr[bytes] & mask) == (address->s6_addr[bytes] & mask);
}

bool moat_call_networks_contain(const moat_call_network *networks, size_t n,
                                const struct in6_addr *address)
{
    for (size_t i = 0; i < n; i++)
        if (in_network(&networks[i], address))
            return true;
    return false;
}

static void ifaddr_to_in6(const struct sockaddr *sa, struct in6_addr *out, bool *ok)
{
    *ok = false;
    if (sa && sa->sa_family == AF_INET) {
        memset(out, 0, sizeof *out);
        out->s6_addr[10] = out->s6_addr[11] = 0xff;
        memcpy(&out->s6_addr[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
        *ok = true;
    } else if (sa && sa->sa_family == AF_INET6) {
        *out = ((const struct sockaddr_in6 *)sa)->sin6_addr;
        *ok = true;
    }
}

bool moat_call_address_is_host(const struct in6_addr *address)
{
    moat_call_address_kind kind = moat_call_address_classify(address);
    if (kind == MOAT_CALL_ADDRESS_LOOPBACK || kind == MOAT_CALL_ADDRESS_UNSPECIFIED)
        return true;
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0)
        return true; /* cannot tell: assume the worst */
    bool found = false;
    for (struct ifaddrs *i = list; i && !found; i = i->ifa_next) {
        struct in6_addr a;
        bool ok;
        ifaddr_to_in6(i->ifa_addr, &a, &ok);
        found = ok && memcmp(&a, address, sizeof a) == 0;
    }
    freeifaddrs(list);
    return found;
}

static bool own_port(const moat_call_destination_policy *policy, uint16_t port)
{
    return policy->own.is_own_port && policy->own.is_own_port(policy->own.user, port);
}

int moat_call_destination_check(const moat_call_destination_policy *policy,
                                const struct sockaddr_in6 *to, char *reason, size_t reason_size)
{
    char text[INET6_ADDRSTRLEN] = "?";
    if (is_mapped(&to->sin6_addr))
        inet_ntop(AF_INET, &to->sin6_addr.s6_addr[12], text, sizeof text);
    else
        inet_ntop(AF_INET6, &to->sin6_addr, text, sizeof text);
    uint16_t port = ntohs(to->sin6_port);
    bool (*is_host)(const struct in6_addr *) =
        policy->is_host ? policy->is_host : moat_call_address_is_host;
    struct in6_addr v4; /* where a NAT64 or tunnel would take it */
    bool embedded = moat_call_address_embedded_v4(&to->sin6_addr, &v4);
    if (own_port(policy, port) && (is_host(&to->sin6_addr) || (embedded && is_host(&v4)))) {
        snprintf(reason, reason_size, "media address %s port %u is one of Moat's own sockets", text,
                 port);
        return -1;
    }
    moat_call_address_kind kind = moat_call_address_classify(&to->sin6_addr);
    if (kind == MOAT_CALL_ADDRESS_LOOPBACK && policy->allow_loopback)
        kind = MOAT_CALL_ADDRESS_OK;
    if (kind != MOAT_CALL_ADDRESS_OK) {
        snprintf(reason, reason_size, "media address %s is %s", text,
                 moat_call_address_kind_name(kind));
        return -1;
    }
    if (moat_call_networks_contain(policy->denied, policy->n_denied, &to->sin6_addr) ||
        (embedded && moat_call_networks_contain(policy->denied, policy->n_denied, &v4))) {
        snprintf(reason, reason_size, "media address %s is in [call] denied_networks", text);
        return -1;
    }
    return 0;
}
