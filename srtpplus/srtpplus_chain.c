#include "srtpplus_chain.h"
#include "srtpplus_byteorder.h"
#include "srtpplus_rtp.h"
#include "srtpplus_status.h"

/* The existing padding of a plaintext RTP packet: 0 when P is clear. */
static int prior_padding(const uint8_t *rtp, size_t len, size_t header_len, uint8_t *padding)
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

int srtpplus_chain_append(uint8_t *rtp, size_t *len, size_t capacity,
                          const struct srtpplus_chain_params *params, const uint32_t *tags)
{
    if (!rtp || !len || !tags || !srtpplus_chain_params_valid(params))
        return SRTPPLUS_ERR_PARAM;
    size_t header_len;
    int rc = srtpplus_rtp_header_len(rtp, *len, &header_len);
    if (rc != SRTPPLUS_OK)
        return rc;
    uint8_t p0;
    rc = prior_padding(rtp, *len, header_len, &p0);
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

int srtpplus_chain_parse(const uint8_t *rtp, size_t len, const struct srtpplus_chain_params *params,
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

void srtpplus_chain_strip(uint8_t *rtp, size_t *len, const struct srtpplus_chain_block *block)
{
    *len = block->stripped_len;
    if (block->prior_padding == 0)
        rtp[0] &= (uint8_t)~SRTPPLUS_RTP_PADDING_BIT;
}
