/* The rule for packets from the peer before the TUN device (tunnel_source.h):
 * the IPv4/IPv6 header check and the source address rule. */
#include "tunnel_source.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

bool tunnel_cidr_parse(const char *cidr, struct in_addr *address, struct in_addr *mask)
{
    char text[32];
    const char *slash = strchr(cidr, '/');
    size_t n = slash ? (size_t)(slash - cidr) : strlen(cidr);
    if (n == 0 || n >= sizeof text)
        return false;
    memcpy(text, cidr, n);
    text[n] = '\0';
    if (inet_pton(AF_INET, text, address) != 1)
        return false;
    long bits = 32;
    if (slash) {
        char *end = NULL;
        bits = strtol(slash + 1, &end, 10);
        if (!end || *end || end == slash + 1 || bits < 1 || bits > 32)
            return false;
    }
    mask->s_addr = htonl(bits == 32 ? 0xffffffffu : ~(0xffffffffu >> bits));
    return true;
}

int tunnel_source_rule_init(tunnel_source_rule *rule, const char *cidr, bool any_source)
{
    struct in_addr address, mask;
    memset(rule, 0, sizeof *rule);
    if (!cidr || !tunnel_cidr_parse(cidr, &address, &mask))
        return -1;
    rule->address = ntohl(address.s_addr);
    rule->mask = ntohl(mask.s_addr);
    rule->any_source = any_source;
    return 0;
}

static uint32_t read_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* An IPv4 source of the subnet that is neither ours nor (wider than /31)
 * its network or broadcast address. */
static bool ipv4_source_allowed(const tunnel_source_rule *rule, uint32_t source)
{
    if ((source & rule->mask) != (rule->address & rule->mask) || source == rule->address)
        return false;
    uint32_t host = source & ~rule->mask;
    bool wide = (rule->mask & 0x3u) == 0; /* /30 or wider: has network and broadcast */
    return !wide || (host != 0 && host != ~rule->mask);
}

static tunnel_source_verdict check_ipv4(const tunnel_source_rule *rule, const uint8_t *p,
                                        size_t length)
{
    if (length < 20)
        return TUNNEL_SOURCE_NOT_IP;
    size_t header = (size_t)(p[0] & 0x0f) * 4;
    size_t total = (size_t)p[2] << 8 | p[3];
    if (header < 20 || header > length || total < header || total > length)
        return TUNNEL_SOURCE_NOT_IP;
    if (rule->any_source || ipv4_source_allowed(rule, read_u32(p + 12)))
        return TUNNEL_SOURCE_ALLOWED;
    return TUNNEL_SOURCE_FOREIGN;
}

/* Link-local (fe80::/10) or unspecified (::). */
static bool ipv6_source_allowed(const uint8_t *source)
{
    if (source[0] == 0xfe && (source[1] & 0xc0) == 0x80)
        return true;
    for (int i = 0; i < 16; i++)
        if (source[i] != 0)
            return false;
    return true;
}

static tunnel_source_verdict check_ipv6(const tunnel_source_rule *rule, const uint8_t *p,
                                        size_t length)
{
    if (length < 40 || 40 + ((size_t)p[4] << 8 | p[5]) > length)
        return TUNNEL_SOURCE_NOT_IP;
    if (rule->any_source || ipv6_source_allowed(p + 8))
        return TUNNEL_SOURCE_ALLOWED;
    return TUNNEL_SOURCE_FOREIGN;
}

tunnel_source_verdict tunnel_source_check(const tunnel_source_rule *rule, const uint8_t *packet,
                                          size_t length)
{
    if (length < 1)
        return TUNNEL_SOURCE_NOT_IP;
    switch (packet[0] >> 4) {
    case 4:
        return check_ipv4(rule, packet, length);
    case 6:
        return check_ipv6(rule, packet, length);
    default:
        return TUNNEL_SOURCE_NOT_IP;
    }
}
