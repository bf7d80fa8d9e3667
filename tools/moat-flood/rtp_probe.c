/* The RTT probe every legitimate packet carries in its payload: a magic word
 * and the send time, written and read back from the echoed copy. */
#include "rtp_probe.h"

#include "rtp/rtp_bytes.h"

#define PROBE_MAGIC 0x4D464C44u /* "MFLD" */

void rtp_probe_write(uint8_t *at, uint64_t send_us)
{
    moat_wr32(at, PROBE_MAGIC);
    moat_wr64(at + 4, send_us);
}

bool rtp_probe_read(const uint8_t *payload, size_t length, size_t offset, uint64_t *send_us)
{
    if (length < offset || length - offset < RTP_PROBE_LENGTH ||
        moat_rd32(payload + offset) != PROBE_MAGIC)
        return false;
    *send_us = moat_rd64(payload + offset + 4);
    return true;
}
