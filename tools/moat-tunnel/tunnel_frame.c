/* Length-prefixed IP packets for the TCP baseline (tunnel_frame.h). */
#include "tunnel_frame.h"

#include <string.h>

void tunnel_frame_reader_init(tunnel_frame_reader *r, size_t max_packet)
{
    r->max_packet = max_packet < TUNNEL_FRAME_MAX ? max_packet : TUNNEL_FRAME_MAX;
    r->have = 0;
}

int tunnel_frame_header(size_t length, uint8_t header[TUNNEL_FRAME_HEADER])
{
    if (length == 0 || length > TUNNEL_FRAME_MAX)
        return -1;
    header[0] = (uint8_t)(length >> 8);
    header[1] = (uint8_t)length;
    return 0;
}

long tunnel_frame_feed(tunnel_frame_reader *r, const uint8_t *data, size_t length,
                       const uint8_t **packet, size_t *packet_length)
{
    *packet = NULL;
    *packet_length = 0;
    size_t used = 0;
    if (r->have < TUNNEL_FRAME_HEADER) {
        size_t take = TUNNEL_FRAME_HEADER - r->have;
        if (take > length)
            take = length;
        memcpy(r->buffer + r->have, data, take);
        r->have += take;
        used += take;
        if (r->have < TUNNEL_FRAME_HEADER)
            return (long)used;
    }
    size_t want = ((size_t)r->buffer[0] << 8) | r->buffer[1];
    if (want == 0 || want > r->max_packet)
        return -1;
    size_t missing = TUNNEL_FRAME_HEADER + want - r->have;
    size_t take = length - used < missing ? length - used : missing;
    memcpy(r->buffer + r->have, data + used, take);
    r->have += take;
    used += take;
    if (r->have == TUNNEL_FRAME_HEADER + want) {
        *packet = r->buffer + TUNNEL_FRAME_HEADER;
        *packet_length = want;
        r->have = 0;
    }
    return (long)used;
}
