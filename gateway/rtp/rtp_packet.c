/* RTP header parsing, extension lookup and header rewrites. */
#include "rtp/rtp_packet.h"

#include <string.h>

#include "rtp/rtp_bytes.h"

int moat_rtp_parse(const uint8_t *buf, size_t len, moat_rtp_header *out)
{
    if (buf == NULL || out == NULL)
        return MOAT_RTP_ERR_INVALID;
    if (len < MOAT_RTP_FIXED_HEADER_SIZE)
        return MOAT_RTP_ERR_TRUNCATED;

    moat_rtp_header h;
    memset(&h, 0, sizeof(h));
    h.version = buf[0] >> 6;
    if (h.version != MOAT_RTP_VERSION)
        return MOAT_RTP_ERR_VERSION;
    h.padding = (buf[0] & 0x20) != 0;
    h.extension = (buf[0] & 0x10) != 0;
    h.csrc_count = buf[0] & 0x0F;
    h.marker = (buf[1] & 0x80) != 0;
    h.payload_type = buf[1] & 0x7F;
    h.sequence = moat_rd16(buf + 2);
    h.timestamp = moat_rd32(buf + 4);
    h.ssrc = moat_rd32(buf + 8);

    size_t offset = MOAT_RTP_FIXED_HEADER_SIZE + 4u * h.csrc_count;
    if (offset > len)
        return MOAT_RTP_ERR_CSRC;

    if (h.extension) {
        if (len - offset < 4)
            return MOAT_RTP_ERR_EXTENSION;
        h.extension_profile = moat_rd16(buf + offset);
        size_t ext_len = 4u * moat_rd16(buf + offset + 2);
        offset += 4;
        if (ext_len > len - offset)
            return MOAT_RTP_ERR_EXTENSION;
        h.extension_offset = offset;
        h.extension_length = ext_len;
        offset += ext_len;
    }
    h.header_length = offset;

    size_t remaining = len - offset;
    if (h.padding) {
        /* The count includes its own octet, so 0 is impossible, and it may
         * consume the whole payload (padding-only probes) but not the header. */
        h.padding_length = buf[len - 1];
        if (h.padding_length == 0 || h.padding_length > remaining)
            return MOAT_RTP_ERR_PADDING;
    }
    h.payload_offset = offset;
    h.payload_length = remaining - h.padding_length;
    *out = h;
    return MOAT_RTP_OK;
}

int moat_rtp_one_byte_next(const uint8_t *ext, size_t n, size_t *at, uint8_t *id,
                           const uint8_t **value, size_t *size)
{
    size_t i = *at;
    while (i < n && ext[i] == 0)
        i++;
    *at = i;
    if (i == n)
        return MOAT_RTP_ONE_BYTE_END;
    uint8_t elem_id = ext[i] >> 4;
    if (elem_id == 0 || elem_id == 15)
        return MOAT_RTP_ONE_BYTE_END;
    size_t elem_len = (size_t)(ext[i] & 0x0F) + 1;
    if (elem_len > n - i - 1)
        return MOAT_RTP_ONE_BYTE_OVERRUN;
    *id = elem_id;
    *value = ext + i + 1;
    *size = elem_len;
    *at = i + 1 + elem_len;
    return MOAT_RTP_ONE_BYTE_ELEMENT;
}

/* One-byte form: ids 1..14 (moat_rtp_one_byte_next's rule). */
static int find_one_byte(const uint8_t *ext, size_t ext_len, uint8_t id, const uint8_t **data,
                         size_t *len)
{
    if (id == 0 || id >= 15)
        return MOAT_RTP_ERR_NOT_FOUND;
    size_t at = 0;
    uint8_t elem_id;
    const uint8_t *value;
    size_t size;
    int step;
    while ((step = moat_rtp_one_byte_next(ext, ext_len, &at, &elem_id, &value, &size)) ==
           MOAT_RTP_ONE_BYTE_ELEMENT) {
        if (elem_id == id) {
            *data = value;
            *len = size;
            return MOAT_RTP_OK;
        }
    }
    return step == MOAT_RTP_ONE_BYTE_OVERRUN ? MOAT_RTP_ERR_MALFORMED : MOAT_RTP_ERR_NOT_FOUND;
}

/* Two-byte form (RFC 8285 section 4.3): an 8-bit id and 8-bit length per
 * element; a zero octet in place of an id is padding. */
static int find_two_byte(const uint8_t *ext, size_t ext_len, uint8_t id, const uint8_t **data,
                         size_t *len)
{
    if (id == 0)
        return MOAT_RTP_ERR_NOT_FOUND;
    size_t i = 0;
    while (i < ext_len) {
        uint8_t elem_id = ext[i];
        if (elem_id == 0) {
            i++;
            continue;
        }
        if (ext_len - i < 2)
            return MOAT_RTP_ERR_MALFORMED;
        size_t elem_len = ext[i + 1];
        i += 2;
        if (elem_len > ext_len - i)
            return MOAT_RTP_ERR_MALFORMED;
        if (elem_id == id) {
            *data = ext + i;
            *len = elem_len;
            return MOAT_RTP_OK;
        }
        i += elem_len;
    }
    return MOAT_RTP_ERR_NOT_FOUND;
}

int moat_rtp_find_extension(const uint8_t *buf, const moat_rtp_header *h, uint8_t id,
                            const uint8_t **data, size_t *len)
{
    if (buf == NULL || h == NULL || data == NULL || len == NULL)
        return MOAT_RTP_ERR_INVALID;
    if (!h->extension)
        return MOAT_RTP_ERR_NOT_FOUND;
    const uint8_t *ext = buf + h->extension_offset;
    if (h->extension_profile == MOAT_RTP_EXTENSION_ONE_BYTE)
        return find_one_byte(ext, h->extension_length, id, data, len);
    if ((h->extension_profile & MOAT_RTP_EXTENSION_TWO_BYTE_MASK) == MOAT_RTP_EXTENSION_TWO_BYTE)
        return find_two_byte(ext, h->extension_length, id, data, len);
    return MOAT_RTP_ERR_NOT_FOUND;
}

void moat_rtp_set_ssrc(uint8_t *buf, uint32_t ssrc)
{
    moat_wr32(buf + 8, ssrc);
}

void moat_rtp_set_sequence(uint8_t *buf, uint16_t sequence)
{
    moat_wr16(buf + 2, sequence);
}

void moat_rtp_set_payload_type(uint8_t *buf, uint8_t payload_type)
{
    buf[1] = (uint8_t)((buf[1] & 0x80) | (payload_type & 0x7F));
}

void moat_rtp_set_timestamp(uint8_t *buf, uint32_t timestamp)
{
    moat_wr32(buf + 4, timestamp);
}

bool moat_rtp_is_rtcp(const uint8_t *buf, size_t len)
{
    if (buf == NULL || len < 2)
        return false;
    return buf[1] >= 192 && buf[1] <= 223;
}
