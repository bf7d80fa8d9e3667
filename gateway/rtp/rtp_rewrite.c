/* Applying a forward rewrite to a packet (rtp_rewrite.h). */
#include "rtp/rtp_rewrite.h"

#include "rtp/rtp_error.h"
#include "rtp/rtp_packet.h"

#include <string.h>

static int check_offsets(const moat_rtp_rewrite *rw, size_t payload_length)
{
    if (rw->flags & MOAT_RTP_REWRITE_PICTURE) {
        size_t width = rw->picture_id_bits == 15 ? 2 : 1;
        if (rw->picture_id_bits != 7 && rw->picture_id_bits != 15)
            return MOAT_RTP_ERR_INVALID;
        if ((size_t)rw->picture_id_offset + width > payload_length)
            return MOAT_RTP_ERR_TRUNCATED;
    }
    if ((rw->flags & MOAT_RTP_REWRITE_TL0PICIDX) && rw->tl0picidx_offset >= payload_length)
        return MOAT_RTP_ERR_TRUNCATED;
    return MOAT_RTP_OK;
}

static void write_ids(uint8_t *payload, const moat_rtp_rewrite *rw)
{
    if (rw->flags & MOAT_RTP_REWRITE_PICTURE) {
        uint8_t *at = payload + rw->picture_id_offset;
        if (rw->picture_id_bits == 15) {
            at[0] = (uint8_t)(0x80 | ((rw->picture_id >> 8) & 0x7f));
            at[1] = (uint8_t)rw->picture_id;
        } else {
            at[0] = (uint8_t)(rw->picture_id & 0x7f);
        }
    }
    if (rw->flags & MOAT_RTP_REWRITE_TL0PICIDX)
        payload[rw->tl0picidx_offset] = rw->tl0picidx;
}

/* The header extension block (RFC 3550 5.3.1) removed, X cleared. */
static void strip_extensions(uint8_t *d, size_t *length)
{
    if (!(d[0] & 0x10))
        return;
    size_t start = 12 + 4u * (d[0] & 0x0f);
    size_t words = (size_t)(d[start + 2] << 8 | d[start + 3]);
    size_t block = 4 + 4 * words;
    memmove(d + start, d + start + block, *length - start - block);
    *length -= block;
    d[0] &= (uint8_t)~0x10;
}

int moat_rtp_rewrite_apply(uint8_t *data, size_t *length, const moat_rtp_rewrite *rw)
{
    moat_rtp_header h;
    int status = moat_rtp_parse(data, *length, &h);
    if (status != MOAT_RTP_OK)
        return status;
    status = check_offsets(rw, h.payload_length);
    if (status != MOAT_RTP_OK)
        return status;
    write_ids(data + h.payload_offset, rw);
    if (rw->flags & MOAT_RTP_REWRITE_STRIP_EXTENSIONS)
        strip_extensions(data, length); /* parsed: the block fits */
    data[1] = (uint8_t)((data[1] & 0x80) | (rw->payload_type & 0x7f));
    data[2] = (uint8_t)(rw->sequence >> 8);
    data[3] = (uint8_t)rw->sequence;
    data[4] = (uint8_t)(rw->timestamp >> 24);
    data[5] = (uint8_t)(rw->timestamp >> 16);
    data[6] = (uint8_t)(rw->timestamp >> 8);
    data[7] = (uint8_t)rw->timestamp;
    moat_rtp_set_ssrc(data, rw->ssrc);
    return MOAT_RTP_OK;
}
