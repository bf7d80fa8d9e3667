/* The few RTP header facts SRTP+ needs (RFC 3550 section 5.1): where the header ends
 * and whether the packet is padded. Every read is bounds-checked. */
#ifndef SRTPPLUS_RTP_H
#define SRTPPLUS_RTP_H

#include <stddef.h>
#include <stdint.h>

#include "srtpplus_byteorder.h"
#include "srtpplus_status.h"

#define SRTPPLUS_RTP_FIXED_HEADER_LEN 12
#define SRTPPLUS_RTP_PADDING_BIT      0x20

/* Length of the fixed header, CSRC list and header extension. Returns
 * SRTPPLUS_ERR_MALFORMED when the packet is shorter than that or is not version 2.
 * Inline: confirm runs it on every packet. */
static inline int srtpplus_rtp_header_len(const uint8_t *packet, size_t len, size_t *header_len)
{
    if (len < SRTPPLUS_RTP_FIXED_HEADER_LEN || (packet[0] >> 6) != 2)
        return SRTPPLUS_ERR_MALFORMED;
    size_t n = SRTPPLUS_RTP_FIXED_HEADER_LEN + 4 * (size_t)(packet[0] & 0x0f);
    if (packet[0] & 0x10) {
        if (len < n + 4)
            return SRTPPLUS_ERR_MALFORMED;
        n += 4 + 4 * (size_t)srtpplus_load_be16(packet + n + 2);
    }
    if (len < n)
        return SRTPPLUS_ERR_MALFORMED;
    *header_len = n;
    return SRTPPLUS_OK;
}

#endif
