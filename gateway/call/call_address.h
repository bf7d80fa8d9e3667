/* Where a call leg may send (issue 20, "Destinations"): a party's SDP must
 * never aim Moat at loopback, the unspecified address, multicast,
 * broadcast, link-local, an operator's denied networks, or one of Moat's
 * own sockets. Private ranges stay allowed (phones live there). Pure checks
 * plus one getifaddrs look-up, taken only when a destination's port is one
 * Moat has bound. Any thread; the policy is read-only once built. */
#ifndef MOAT_CALL_ADDRESS_H
#define MOAT_CALL_ADDRESS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    MOAT_CALL_ADDRESS_OK = 0,
    MOAT_CALL_ADDRESS_LOOPBACK,    /* 127.0.0.0/8, ::1 */
    MOAT_CALL_ADDRESS_UNSPECIFIED, /* 0.0.0.0/8, :: */
    MOAT_CALL_ADDRESS_MULTICAST,   /* 224.0.0.0/4, ff00::/8 */
    MOAT_CALL_ADDRESS_BROADCAST,   /* 255.255.255.255 (and the rest of 240.0.0.0/4) */
    MOAT_CALL_ADDRESS_LINK_LOCAL,  /* 169.254.0.0/16, fe80::/10 */
} moat_call_address_kind;

/* IPv4 addresses as IPv4-mapped IPv6 (::ffff:a.b.c.d), as everywhere in
 * the call layer; an address with an embedded IPv4 one (below) is
 * classified by that. */
moat_call_address_kind moat_call_address_classify(const struct in6_addr *address);
const char *moat_call_address_kind_name(moat_call_address_kind kind);

/* An IPv6 address that stands for an IPv4 one where a translator or tunnel
 * delivers it (IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4
 * 2002:AABB:CCDD::/48): true, with that IPv4 address mapped in *mapped.
 * Classification, the own-socket check and denied_networks look at both. */
bool moat_call_address_embedded_v4(const struct in6_addr *address, struct in6_addr *mapped);

/* One CIDR of [call] denied_networks; IPv4 ones are stored mapped, their
 * prefix + 96. */
typedef struct {
    struct in6_addr network;
    unsigned prefix;
} moat_call_network;

/* Parses "10.1.0.0/16, fd00::/8, 192.0.2.7" (no prefix: one host) into a
 * g_malloc'd array (NULL when the text is empty). 0, or -1 with a message. */
int moat_call_networks_parse(const char *text, moat_call_network **out, size_t *n_out, char *error,
                             size_t error_size);
bool moat_call_networks_contain(const moat_call_network *networks, size_t n,
                                const struct in6_addr *address);

/* Moat's own sockets, as the gateway knows them (HTTP, ng, worker and
 * ingest ports; the call layer adds its legs' range itself). The call
 * layer asks through this so it includes nothing above it. Control
 * thread. */
typedef struct {
    bool (*is_own_port)(void *user, uint16_t port);
    void *user;
} moat_call_own_endpoints;

/* Whether `address` is this host's: loopback, unspecified, or an address
 * of one of its interfaces (getifaddrs). */
bool moat_call_address_is_host(const struct in6_addr *address);

typedef struct {
    bool allow_loopback; /* [call] allow_loopback_destinations: phones on this host */
    const moat_call_network *denied;
    size_t n_denied;
    moat_call_own_endpoints own;                     /* is_own_port NULL: none */
    bool (*is_host)(const struct in6_addr *address); /* NULL: moat_call_address_is_host */
} moat_call_destination_policy;

/* 0 when a leg may send to `to` (an AF_INET6 address), or -1 with the
 * reason (for the ng error-reason). An own socket is refused whatever
 * allow_loopback says. */
int moat_call_destination_check(const moat_call_destination_policy *policy,
                                const struct sockaddr_in6 *to, char *reason, size_t reason_size);

#endif
