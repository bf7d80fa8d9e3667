/* Which packets from the peer moat-tunnel writes to its TUN device. The
 * peer (whoever joined the tunnel first with its token, or the baselines'
 * authenticated other end) chooses every byte of what it sends: written as
 * it is, a packet with any source address enters this host's stack and,
 * with forwarding on, every network the host routes to. By default only an
 * IP packet whose header fits the message and whose source is an address
 * of the tunnel's subnet passes:
 *   - IPv4: version 4, a header of 20 to 60 bytes within the message, a
 *     total length between the header's and the message's; the source in
 *     --address's subnet, not our own address and (subnets wider than /31)
 *     neither its network nor its broadcast address;
 *   - IPv6: version 6, the 40-byte header and its payload length within the
 *     message; the source link-local (fe80::/10) or unspecified (::), the
 *     tunnel's own link (neighbour discovery, MLD): --address gives the
 *     tunnel no IPv6 subnet.
 * --allow-any-source lifts the source rule (a site-to-site tunnel whose
 * peer forwards other networks' packets); the header check stays. Pure; no
 * state beyond the rule, any thread. */
#ifndef TUNNEL_SOURCE_H
#define TUNNEL_SOURCE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t address; /* ours in the tunnel, host byte order */
    uint32_t mask;    /* --address's prefix, host byte order */
    bool any_source;  /* --allow-any-source */
} tunnel_source_rule;

typedef enum {
    TUNNEL_SOURCE_ALLOWED = 0,
    TUNNEL_SOURCE_NOT_IP,  /* not IPv4/IPv6, or a header that does not fit */
    TUNNEL_SOURCE_FOREIGN, /* a source outside the tunnel's subnet (or ours) */
} tunnel_source_verdict;

/* "a.b.c.d/len" (len 1 to 32, /32 without one) into address and netmask
 * (network byte order); false when it is not one. */
bool tunnel_cidr_parse(const char *cidr, struct in_addr *address, struct in_addr *mask);

/* The rule for our --address; -1 when it is not an IPv4 CIDR. */
int tunnel_source_rule_init(tunnel_source_rule *rule, const char *cidr, bool any_source);

/* Whether a packet from the peer may go to the TUN device. */
tunnel_source_verdict tunnel_source_check(const tunnel_source_rule *rule, const uint8_t *packet,
                                          size_t length);

#endif
