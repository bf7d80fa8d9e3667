/* Test helper: hand-made STUN bytes (headers, FINGERPRINT values) for the
 * malformed cases libnice would never build. */
#include "stun_test_bytes.h"

#include <string.h>

void test_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

void test_put_stun_header(uint8_t *p, uint16_t type, uint16_t body_length)
{
    static const uint8_t cookie_and_id[16] = {0x21, 0x12, 0xA4, 0x42, 1, 2,  3,  4,
                                              5,    6,    7,    8,    9, 10, 11, 12};
    test_put16(p, type);
    test_put16(p + 2, body_length);
    memcpy(p + 4, cookie_and_id, sizeof cookie_and_id);
}

/* CRC-32 (ISO HDLC) XOR 0x5354554e, bitwise: speed does not matter here, and
 * an implementation independent of libnice's checks it. */
uint32_t test_stun_fingerprint(const uint8_t *data, size_t length)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < length; i++) {
        crc ^= data[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc ^ 0x5354554Eu;
}
