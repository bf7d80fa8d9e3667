/* RTX wrapping of a retransmission (rtx.h). */
#include "rtp/rtx.h"

#include "rtp/rtp_packet.h"

#include <string.h>

int moat_rtx_wrap(const uint8_t *packet, size_t length, uint8_t rtx_pt, uint16_t rtx_seq,
                  uint32_t rtx_ssrc, uint8_t *out, size_t capacity)
{
    moat_rtp_header h;
    int rc = moat_rtp_parse(packet, length, &h);
    if (rc != MOAT_RTP_OK)
        return rc;
    size_t total = h.payload_offset + 2 + h.payload_length;
    if (total > capacity)
        return MOAT_RTP_ERR_NO_SPACE;
    memcpy(out, packet, h.payload_offset);
    out[0] &= (uint8_t)~0x20; /* no padding */
    moat_rtp_set_payload_type(out, rtx_pt);
    moat_rtp_set_sequence(out, rtx_seq);
    moat_rtp_set_ssrc(out, rtx_ssrc);
    out[h.payload_offset] = (uint8_t)(h.sequence >> 8);
    out[h.payload_offset + 1] = (uint8_t)h.sequence;
    memcpy(out + h.payload_offset + 2, packet + h.payload_offset, h.payload_length);
    return (int)total;
}
