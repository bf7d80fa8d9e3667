/* The chain block of scheme chain (SRTPPLUS.md section 4), carried in the RTP padding
 * of the plaintext packet so SRTP encrypts it:
 *
 *   T[k+D] || T[k+D-1] || ... || T[k+D-r+1] || D || r || 0xC5 || total
 *
 * with total = P0 + 4r + 4 the new RTP padding count (P0 = padding already there). */
#ifndef SRTPPLUS_CHAIN_H
#define SRTPPLUS_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "srtpplus_byteorder.h"
#include "srtpplus_rtp.h"
#include "srtpplus_scheme.h"
#include "srtpplus_status.h"

#define SRTPPLUS_CHAIN_MAGIC 0xC5

static inline size_t srtpplus_chain_block_len(uint8_t copies)
{
    return 4 * (size_t)copies + 4;
}

/* What a parsed block says and where it starts. */
struct srtpplus_chain_block {
    uint32_t tags[SRTPPLUS_CHAIN_MAX_COPIES]; /* tags[j] = T[k + D - j] */
    uint8_t copies;
    uint8_t prior_padding; /* P0 */
    size_t stripped_len;   /* packet length once the block is removed */
};

/* Inline: the sender runs append and the receiver parse and strip on every packet.
 *
 * srtpplus_chain_append adds the block to the plaintext RTP packet rtp[0 .. *len) and
 * sets P; tags[j] = T[k + D - j] for j < params->copies. Errors: SRTPPLUS_ERR_MALFORMED
 * (not RTP or inconsistent padding), SRTPPLUS_ERR_PADDING (total would exceed 255: the
 * packet must go without a block), SRTPPLUS_ERR_CAPACITY. The packet is unchanged on
 * error.
 *
 * srtpplus_chain_parse reads the block at the end of an RTP packet that passed
 * srtp_unprotect, checking the magic and that D and r are the negotiated ones; it
 * returns SRTPPLUS_ERR_MALFORMED when the block is missing or does not fit the packet.
 *
 * srtpplus_chain_strip removes a block srtpplus_chain_parse accepted, clearing P when
 * P0 was 0. */

/* The existing padding of a plaintext RTP packet: 0 when P is clear. */
static inline int srtpplus_chain_prior_padding(const uint8_t *rtp, size_t len, size_t header_len,
                                               uint8_t *padding)
{
    *padding = 0;
    if (!(rtp[0] & SRTPPLUS_RTP_PADDING_BIT))
        return SRTPPLUS_OK;
    uint8_t count = rtp[len - 1];
    if (count == 0 || header_len + count > len)
        return SRTPPLUS_ERR_MALFORMED;
    *padding = count;
    return SRTPPLUS_OK;
}

static inline int srtpplus_chain_append(uint8_t *rtp, size_t *len, size_t capacity,
                                        const struct srtpplus_chain_params *params,
                                        const uint32_t *tags)
{
    if (!rtp || !len || !tags || !srtpplus_chain_params_valid(params))
        return SRTPPLUS_ERR_PARAM;
    size_t header_len;
    int rc = srtpplus_rtp_header_len(rtp, *len, &header_len);
    if (rc != SRTPPLUS_OK)
        return rc;
    uint8_t p0;
    rc = srtpplus_chain_prior_padding(rtp, *len, header_len, &p0);
    if (rc != SRTPPLUS_OK)
        return rc;
    size_t block_len = srtpplus_chain_block_len(params->copies);
    if (p0 + block_len > 255)
        return SRTPPLUS_ERR_PADDING;
    if (capacity < *len || capacity - *len < block_len)
        return SRTPPLUS_ERR_CAPACITY;

    uint8_t *block = rtp + *len;
    for (size_t j = 0; j < params->copies; j++)
        srtpplus_store_be32(block + 4 * j, tags[j]);
    block += 4 * (size_t)params->copies;
    block[0] = params->depth;
    block[1] = params->copies;
    block[2] = SRTPPLUS_CHAIN_MAGIC;
    block[3] = (uint8_t)(p0 + block_len);
    rtp[0] |= SRTPPLUS_RTP_PADDING_BIT;
    *len += block_len;
    return SRTPPLUS_OK;
}

static inline int srtpplus_chain_parse(const uint8_t *rtp, size_t len,
                                       const struct srtpplus_chain_params *params,
                                       struct srtpplus_chain_block *out)
{
    if (!rtp || !out || !srtpplus_chain_params_valid(params))
        return SRTPPLUS_ERR_PARAM;
    size_t header_len;
    if (srtpplus_rtp_header_len(rtp, len, &header_len) != SRTPPLUS_OK)
        return SRTPPLUS_ERR_MALFORMED;
    if (!(rtp[0] & SRTPPLUS_RTP_PADDING_BIT))
        return SRTPPLUS_ERR_MALFORMED;
    size_t block_len = srtpplus_chain_block_len(params->copies);
    size_t total = rtp[len - 1];
    if (total < block_len || header_len + total > len)
        return SRTPPLUS_ERR_MALFORMED;
    const uint8_t *trailer = rtp + len - 4;
    if (trailer[0] != params->depth || trailer[1] != params->copies ||
        trailer[2] != SRTPPLUS_CHAIN_MAGIC)
        return SRTPPLUS_ERR_MALFORMED;
    size_t p0 = total - block_len;
    /* Earlier padding ends with its own count (RFC 3550); anything else means the
     * octets before the block are not the padding the block claims. */
    if (p0 > 0 && rtp[len - block_len - 1] != p0)
        return SRTPPLUS_ERR_MALFORMED;

    const uint8_t *tags = rtp + len - block_len;
    for (size_t j = 0; j < params->copies; j++)
        out->tags[j] = srtpplus_load_be32(tags + 4 * j);
    out->copies = params->copies;
    out->prior_padding = (uint8_t)p0;
    out->stripped_len = len - block_len;
    return SRTPPLUS_OK;
}

static inline void srtpplus_chain_strip(uint8_t *rtp, size_t *len,
                                        const struct srtpplus_chain_block *block)
{
    *len = block->stripped_len;
    if (block->prior_padding == 0)
        rtp[0] &= (uint8_t)~SRTPPLUS_RTP_PADDING_BIT;
}

#endif
