/* Network-order loads and stores for packet fields; inline because they sit on the
 * per-packet path and the library is built without LTO. */
#ifndef SRTPPLUS_BYTEORDER_H
#define SRTPPLUS_BYTEORDER_H

#include <stdint.h>

static inline uint16_t srtpplus_load_be16(const uint8_t *p)
{
    return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t srtpplus_load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void srtpplus_store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

#endif
