/* Network byte order reads and writes on unaligned buffers. Callers check
 * lengths first; these helpers only move bytes. */
#ifndef MOAT_RTP_BYTES_H
#define MOAT_RTP_BYTES_H

#include <stdint.h>

static inline uint16_t moat_rd16(const uint8_t *p)
{
    return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t moat_rd24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t moat_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t moat_rd64(const uint8_t *p)
{
    return (uint64_t)moat_rd32(p) << 32 | moat_rd32(p + 4);
}

static inline void moat_wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void moat_wr24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 16);
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)v;
}

static inline void moat_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void moat_wr64(uint8_t *p, uint64_t v)
{
    moat_wr32(p, (uint32_t)(v >> 32));
    moat_wr32(p + 4, (uint32_t)v);
}

#endif
