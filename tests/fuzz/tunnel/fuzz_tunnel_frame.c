/* libFuzzer target: moat-tunnel's TCP baseline framing (tunnel_frame.c)
 * reading a hostile byte stream in pieces whose sizes the input picks: it
 * never reads or writes past its buffer, never hands out an empty packet or
 * one over its maximum, and consumes every byte or reports an error. */
#include "tunnel_frame.h"

#include <stdint.h>
#include <stdlib.h>

static tunnel_frame_reader reader;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t max = 1 + (((size_t)data[0] << 8) | data[1]);
    tunnel_frame_reader_init(&reader, max);
    data += 2;
    size -= 2;
    size_t offset = 0;
    while (offset < size) {
        size_t piece = 1 + data[offset] % 97;
        if (piece > size - offset)
            piece = size - offset;
        size_t used = 0;
        while (used < piece) {
            const uint8_t *packet;
            size_t length;
            long took =
                tunnel_frame_feed(&reader, data + offset + used, piece - used, &packet, &length);
            if (took < 0)
                return 0;
            if (took == 0 && !packet)
                abort(); /* no progress */
            if (packet && (length == 0 || length > max || length > TUNNEL_FRAME_MAX))
                abort();
            used += (size_t)took;
        }
        offset += piece;
    }
    return 0;
}
