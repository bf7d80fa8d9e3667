#include "srtpplus_rtp.h"
#include "srtpplus_byteorder.h"
#include "srtpplus_status.h"

int srtpplus_rtp_header_len(const uint8_t *packet, size_t len, size_t *header_len)
{
    if (!packet || !header_len)
        return SRTPPLUS_ERR_PARAM;
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
