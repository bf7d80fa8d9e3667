/* Owns writing one one-byte-header extension element into an RTP packet
 * (rtp_extension_put.h). */
#include "rtp/rtp_extension_put.h"

#include "rtp/rtp_bytes.h"
#include "rtp/rtp_packet.h"

#include <string.h>

#define ONE_BYTE_PROFILE 0xbedeu

/* Bytes an element of `size` takes, padded to whole 32-bit words. */
static size_t padded(size_t size)
{
    return (1 + size + 3) & ~(size_t)3;
}

/* The packet has no extension: a new block after the CSRCs. */
static bool put_new_block(uint8_t *d, size_t *length, size_t capacity, size_t start, uint8_t id,
                          const uint8_t *value, size_t size)
{
    size_t n = *length, add = 4 + padded(size);
    if (n + add > capacity)
        return false;
    memmove(d + start + add, d + start, n - start);
    memset(d + start, 0, add);
    moat_wr16(d + start, ONE_BYTE_PROFILE);
    moat_wr16(d + start + 2, (uint16_t)(padded(size) / 4));
    d[start + 4] = (uint8_t)(id << 4 | (size - 1));
    memcpy(d + start + 5, value, size);
    d[0] |= 0x10;
    *length = n + add;
    return true;
}

bool moat_rtp_put_extension(uint8_t *d, size_t *length, size_t capacity, uint8_t id,
                            const uint8_t *value, size_t size)
{
    size_t n = *length;
    if (n < 12 || n > capacity || id < 1 || id > 14 || size < 1 || size > 16)
        return false;
    size_t start = 12 + 4u * (d[0] & 0x0f);
    if (start > n)
        return false;
    if (!(d[0] & 0x10))
        return put_new_block(d, length, capacity, start, id, value, size);
    if (start + 4 > n || moat_rd16(d + start) != ONE_BYTE_PROFILE)
        return false;
    size_t words = moat_rd16(d + start + 2);
    size_t end = start + 4 + 4 * words;
    if (end > n)
        return false;
    size_t at = 0, block = end - (start + 4);
    uint8_t element;
    const uint8_t *found;
    size_t found_size;
    int step;
    while ((step = moat_rtp_one_byte_next(d + start + 4, block, &at, &element, &found,
                                          &found_size)) == MOAT_RTP_ONE_BYTE_ELEMENT) {
        if (element != id)
            continue;
        if (found_size != size)
            return false;
        memcpy(d + (found - d), value, size);
        return true;
    }
    /* An element appended after an octet that ends processing, or after an
     * overrun, would be invisible to every receiver. */
    if (step != MOAT_RTP_ONE_BYTE_END || at != block)
        return false;
    size_t add = padded(size);
    if (n + add > capacity || words + add / 4 > 0xffff)
        return false;
    memmove(d + end + add, d + end, n - end);
    memset(d + end, 0, add);
    d[end] = (uint8_t)(id << 4 | (size - 1));
    memcpy(d + end + 1, value, size);
    moat_wr16(d + start + 2, (uint16_t)(words + add / 4));
    *length = n + add;
    return true;
}
