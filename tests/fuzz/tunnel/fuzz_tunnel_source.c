/* libFuzzer target: moat-tunnel's rule for packets from the peer
 * (tunnel_source.h). The first byte picks the rule (a prefix of 1 to 32
 * bits, any source or not); the rest is the packet. The check never reads
 * past the packet, and a packet it lets through is an IPv4 packet whose
 * header and total length fit, or an IPv6 packet whose payload fits; without
 * --allow-any-source, an IPv4 one comes from the subnet and not from our
 * address. */
#include "tunnel_source.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_allowed(const tunnel_source_rule *rule, const uint8_t *p, size_t n)
{
    if (p[0] >> 4 == 4) {
        size_t header = (size_t)(p[0] & 0x0f) * 4, total = (size_t)p[2] << 8 | p[3];
        if (n < 20 || header < 20 || header > n || total < header || total > n)
            abort();
        uint32_t source =
            (uint32_t)p[12] << 24 | (uint32_t)p[13] << 16 | (uint32_t)p[14] << 8 | p[15];
        if (!rule->any_source &&
            ((source & rule->mask) != (rule->address & rule->mask) || source == rule->address))
            abort();
    } else if (p[0] >> 4 == 6) {
        if (n < 40 || 40 + ((size_t)p[4] << 8 | p[5]) > n)
            abort();
    } else {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char cidr[32];
    snprintf(cidr, sizeof cidr, "10.77.0.1/%u", 1 + (data[0] & 0x1f));
    tunnel_source_rule rule;
    if (tunnel_source_rule_init(&rule, cidr, data[0] & 0x80) != 0)
        abort();
    /* A copy of exactly the packet's length, so ASan sees any overread. */
    size_t n = size - 1;
    uint8_t *packet = malloc(n ? n : 1);
    memcpy(packet, data + 1, n);
    if (tunnel_source_check(&rule, packet, n) == TUNNEL_SOURCE_ALLOWED)
        check_allowed(&rule, packet, n);
    free(packet);
    return 0;
}
