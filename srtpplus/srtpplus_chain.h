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

#include "srtpplus_scheme.h"

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

/* Appends the block to the plaintext RTP packet rtp[0 .. *len) and sets P.
 * tags[j] = T[k + D - j] for j < params->copies. Errors: SRTPPLUS_ERR_MALFORMED (not RTP
 * or inconsistent padding), SRTPPLUS_ERR_PADDING (total would exceed 255: the packet
 * must go without a block), SRTPPLUS_ERR_CAPACITY. The packet is unchanged on error. */
int srtpplus_chain_append(uint8_t *rtp, size_t *len, size_t capacity,
                          const struct srtpplus_chain_params *params, const uint32_t *tags);

/* Parses the block at the end of an RTP packet that passed srtp_unprotect, checking
 * the magic and that D and r are the negotiated ones. Returns SRTPPLUS_ERR_MALFORMED
 * when the block is missing or does not fit the packet. */
int srtpplus_chain_parse(const uint8_t *rtp, size_t len, const struct srtpplus_chain_params *params,
                         struct srtpplus_chain_block *out);

/* Removes a block srtpplus_chain_parse accepted, clearing P when P0 was 0. */
void srtpplus_chain_strip(uint8_t *rtp, size_t *len, const struct srtpplus_chain_block *block);

#endif
