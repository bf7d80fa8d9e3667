/* The few RTP header facts SRTP+ needs (RFC 3550 section 5.1): where the header ends
 * and whether the packet is padded. Every read is bounds-checked. */
#ifndef SRTPPLUS_RTP_H
#define SRTPPLUS_RTP_H

#include <stddef.h>
#include <stdint.h>

#define SRTPPLUS_RTP_FIXED_HEADER_LEN 12
#define SRTPPLUS_RTP_PADDING_BIT      0x20

/* Length of the fixed header, CSRC list and header extension. Returns
 * SRTPPLUS_ERR_MALFORMED when the packet is shorter than that or is not version 2. */
int srtpplus_rtp_header_len(const uint8_t *packet, size_t len, size_t *header_len);

#endif
