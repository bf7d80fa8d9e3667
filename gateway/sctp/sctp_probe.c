/* Building PLPMTUD probes (HEARTBEAT + PAD) and recognising the peer's
 * HEARTBEAT ACK of one; see sctp_probe.h. */
#include "sctp/sctp_probe.h"

#include <string.h>

#include "sctp/sctp_crc32c.h"

#define CHUNK_DATA              0x00
#define CHUNK_INIT              0x01
#define CHUNK_HEARTBEAT         0x04
#define CHUNK_HEARTBEAT_ACK     0x05
#define CHUNK_ABORT             0x06
#define CHUNK_SHUTDOWN_COMPLETE 0x0e
#define CHUNK_PAD               0x84
#define PARAM_HEARTBEAT_INFO    0x0001

#define CHUNK_HEADER_SIZE 4u
#define INFO_SIZE         12u /* magic, seq, size */
#define INFO_PARAM_SIZE   (4u + INFO_SIZE)
#define HEARTBEAT_SIZE    (CHUNK_HEADER_SIZE + INFO_PARAM_SIZE)

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

void moat_sctp_probe_learn(moat_sctp_probe_header *h, const uint8_t *packet, size_t length)
{
    if (length < MOAT_SCTP_COMMON_HEADER_SIZE + CHUNK_HEADER_SIZE)
        return;
    uint8_t first = packet[MOAT_SCTP_COMMON_HEADER_SIZE];
    if (first == CHUNK_INIT || first == CHUNK_ABORT || first == CHUNK_SHUTDOWN_COMPLETE)
        return;
    uint32_t tag = get32(packet + 4);
    if (tag == 0)
        return;
    h->source_port = get16(packet);
    h->destination_port = get16(packet + 2);
    h->peer_tag = tag;
    h->known = true;
}

size_t moat_sctp_probe_build(const moat_sctp_probe_header *h, uint32_t seq, uint32_t size,
                             uint8_t *out, size_t capacity)
{
    if (!h->known || size < MOAT_SCTP_PROBE_MIN_SIZE || size > capacity || (size & 3u) != 0 ||
        size > 65535u)
        return 0;
    memset(out, 0, size);
    put16(out, h->source_port);
    put16(out + 2, h->destination_port);
    put32(out + 4, h->peer_tag);
    uint8_t *chunk = out + MOAT_SCTP_COMMON_HEADER_SIZE;
    chunk[0] = CHUNK_HEARTBEAT;
    put16(chunk + 2, HEARTBEAT_SIZE);
    put16(chunk + 4, PARAM_HEARTBEAT_INFO);
    put16(chunk + 6, INFO_PARAM_SIZE);
    put32(chunk + 8, MOAT_SCTP_PROBE_MAGIC);
    put32(chunk + 12, seq);
    put32(chunk + 16, size);
    uint8_t *pad = chunk + HEARTBEAT_SIZE;
    pad[0] = CHUNK_PAD;
    put16(pad + 2, (uint16_t)(size - MOAT_SCTP_COMMON_HEADER_SIZE - HEARTBEAT_SIZE));
    moat_sctp_packet_set_checksum(out, size);
    return size;
}

/* A HEARTBEAT ACK chunk body (value after the chunk header) holding exactly
 * our Heartbeat Information. */
static bool is_our_ack(const uint8_t *value, size_t length, moat_sctp_probe_ack *ack)
{
    if (length != INFO_PARAM_SIZE || get16(value) != PARAM_HEARTBEAT_INFO ||
        get16(value + 2) != INFO_PARAM_SIZE || get32(value + 4) != MOAT_SCTP_PROBE_MAGIC)
        return false;
    ack->seq = get32(value + 8);
    ack->size = get32(value + 12);
    return true;
}

bool moat_sctp_probe_find_ack(const uint8_t *packet, size_t length, moat_sctp_probe_ack *ack)
{
    if (packet == NULL || length < MOAT_SCTP_COMMON_HEADER_SIZE)
        return false;
    size_t offset = MOAT_SCTP_COMMON_HEADER_SIZE;
    while (length - offset >= CHUNK_HEADER_SIZE) {
        const uint8_t *chunk = packet + offset;
        size_t chunk_length = get16(chunk + 2);
        if (chunk_length < CHUNK_HEADER_SIZE || chunk_length > length - offset)
            return false;
        size_t padded = (chunk_length + 3u) & ~(size_t)3u;
        if (padded > length - offset)
            padded = length - offset;
        if (chunk[0] == CHUNK_HEARTBEAT_ACK &&
            is_our_ack(chunk + CHUNK_HEADER_SIZE, chunk_length - CHUNK_HEADER_SIZE, ack)) {
            ack->offset = offset;
            ack->length = padded;
            return true;
        }
        offset += padded;
    }
    return false;
}

bool moat_sctp_probe_has_other_chunks(size_t length, const moat_sctp_probe_ack *ack)
{
    return length - ack->length > MOAT_SCTP_COMMON_HEADER_SIZE;
}

size_t moat_sctp_probe_strip_ack(const uint8_t *packet, size_t length,
                                 const moat_sctp_probe_ack *ack, uint8_t *out)
{
    memcpy(out, packet, ack->offset);
    size_t tail = length - ack->offset - ack->length;
    memcpy(out + ack->offset, packet + ack->offset + ack->length, tail);
    size_t n = ack->offset + tail;
    moat_sctp_packet_set_checksum(out, n);
    return n;
}
