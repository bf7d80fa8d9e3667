/* RTX (RFC 4588 section 4): a retransmission sent on its own SSRC, payload
 * type and sequence numbers, the original sequence number (OSN) first in
 * the payload, so the receiver's loss and jitter statistics of the media
 * stream are not disturbed by duplicates. Pure, any thread. */
#ifndef MOAT_RTP_RTX_H
#define MOAT_RTP_RTX_H

#include <stddef.h>
#include <stdint.h>

/* Writes the RTX packet of the plaintext RTP `packet` into `out`: its
 * header (CSRCs and extension kept, marker kept, padding dropped) with
 * `rtx_pt`, `rtx_seq` and `rtx_ssrc`, then the OSN, then the payload.
 * Returns the length, or a negative moat_rtp_result (malformed packet,
 * MOAT_RTP_ERR_NO_SPACE when `capacity` is short). */
int moat_rtx_wrap(const uint8_t *packet, size_t length, uint8_t rtx_pt, uint16_t rtx_seq,
                  uint32_t rtx_ssrc, uint8_t *out, size_t capacity);

#endif
