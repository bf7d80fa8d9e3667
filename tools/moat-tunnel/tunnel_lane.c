/* The flow key and lane of an IP packet (tunnel_lane.h): FNV-1a over the
 * flow's endpoints in a fixed order (the lower address/port pair first),
 * the protocol and its ports, then MurmurHash3's finalizer: FNV-1a's low
 * bits are weak (the lowest is the parity of the bytes' lowest bits), and
 * Linux gives connect() even ports, so without it every TCP flow between
 * two hosts had the same low bit and used half of 8 lanes. */
#include "tunnel_lane.h"

#include <string.h>

#define PROTO_TCP 6
#define PROTO_UDP 17

static uint32_t fnv(uint32_t h, const uint8_t *data, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        h ^= data[i];
        h *= 16777619u;
    }
    return h;
}

/* The hash of a flow between (a, port a) and (b, port b), either way. */
static uint32_t flow_hash(const uint8_t *a, const uint8_t *b, size_t address_length,
                          const uint8_t *ports, uint8_t protocol)
{
    const uint8_t *ports_a = ports, *ports_b = ports + 2;
    int order = memcmp(a, b, address_length);
    if (order > 0 || (order == 0 && memcmp(ports_a, ports_b, 2) > 0)) {
        const uint8_t *t = a;
        a = b;
        b = t;
        ports_a = ports + 2;
        ports_b = ports;
    }
    uint32_t h = fnv(2166136261u, &protocol, 1);
    h = fnv(h, a, address_length);
    h = fnv(h, ports_a, 2);
    h = fnv(h, b, address_length);
    h = fnv(h, ports_b, 2);
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

static bool ipv4_flow(const uint8_t *p, size_t length, uint32_t *key)
{
    size_t header = (size_t)(p[0] & 0x0f) * 4;
    if (length < 20 || header < 20 || length < header + 4)
        return false;
    /* More fragments, or a fragment offset: ports are not in every piece. */
    if ((p[6] & 0x3f) != 0 || p[7] != 0)
        return false;
    uint8_t protocol = p[9];
    if (protocol != PROTO_TCP && protocol != PROTO_UDP)
        return false;
    *key = flow_hash(p + 12, p + 16, 4, p + header, protocol);
    return true;
}

static bool ipv6_flow(const uint8_t *p, size_t length, uint32_t *key)
{
    if (length < 40 + 4)
        return false;
    uint8_t next = p[6]; /* extension headers (fragments among them): lane 0 */
    if (next != PROTO_TCP && next != PROTO_UDP)
        return false;
    *key = flow_hash(p + 8, p + 24, 16, p + 40, next);
    return true;
}

bool tunnel_flow_of(const uint8_t *packet, size_t length, uint32_t *key)
{
    if (!packet || length == 0 || !key)
        return false;
    switch (packet[0] >> 4) {
    case 4:
        return ipv4_flow(packet, length, key);
    case 6:
        return ipv6_flow(packet, length, key);
    default:
        return false;
    }
}

unsigned tunnel_lane_of(const uint8_t *packet, size_t length, unsigned lanes)
{
    uint32_t key;
    if (lanes <= 1 || !tunnel_flow_of(packet, length, &key))
        return 0;
    return key % lanes;
}
