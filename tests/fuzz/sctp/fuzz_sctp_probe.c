/* libFuzzer target: PLPMTUD probe acknowledgements (sctp_probe.c) as a peer
 * could send them. Any input is walked without reading past its end; a
 * recognised acknowledgement lies inside the packet, and stripping it leaves
 * a packet with a valid checksum, one chunk shorter. The input also seeds a
 * probe, which must come out as built and be recognised once echoed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sctp/sctp_crc32c.h"
#include "sctp/sctp_probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ack(const uint8_t *packet, size_t size)
{
    moat_sctp_probe_ack ack;
    if (!moat_sctp_probe_find_ack(packet, size, &ack))
        return;
    if (ack.offset < MOAT_SCTP_COMMON_HEADER_SIZE || ack.length < 20 ||
        ack.offset + ack.length > size)
        abort();
    uint8_t *out = malloc(size);
    if (out == NULL)
        return;
    size_t n = moat_sctp_probe_strip_ack(packet, size, &ack, out);
    if (n != size - ack.length || !moat_sctp_packet_checksum_ok(out, n))
        abort();
    if (moat_sctp_probe_has_other_chunks(size, &ack) != (n > MOAT_SCTP_COMMON_HEADER_SIZE))
        abort();
    free(out);
}

static void check_build(const uint8_t *data, size_t size)
{
    if (size < 12)
        return;
    moat_sctp_probe_header h = {0};
    uint8_t learned[16];
    memcpy(learned, data, 12);
    learned[12] = 0x00; /* DATA */
    learned[13] = learned[14] = 0;
    learned[15] = 4;
    moat_sctp_probe_learn(&h, learned, sizeof learned);
    uint32_t seq, probe_size;
    memcpy(&seq, data + 4, 4);
    memcpy(&probe_size, data + 8, 4);
    probe_size = MOAT_SCTP_PROBE_MIN_SIZE + (probe_size % 4096u) * 4u;
    uint8_t *probe = malloc(probe_size);
    if (probe == NULL)
        return;
    size_t n = moat_sctp_probe_build(&h, seq, probe_size, probe, probe_size);
    if (h.known != (n == probe_size))
        abort();
    if (n > 0) {
        if (!moat_sctp_packet_checksum_ok(probe, n))
            abort();
        /* The peer's answer: the HEARTBEAT's information in a HEARTBEAT ACK. */
        uint8_t ack_packet[32];
        memcpy(ack_packet, probe, sizeof ack_packet);
        ack_packet[12] = 0x05;
        moat_sctp_probe_ack ack;
        if (!moat_sctp_probe_find_ack(ack_packet, sizeof ack_packet, &ack) || ack.seq != seq ||
            ack.size != probe_size)
            abort();
        if (moat_sctp_probe_find_ack(probe, n, &ack))
            abort();
    }
    free(probe);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly size bytes, so reading past the end is caught. */
    uint8_t *copy = malloc(size > 0 ? size : 1);
    if (copy == NULL)
        return 0;
    if (size > 0)
        memcpy(copy, data, size);
    check_ack(copy, size);
    check_build(copy, size);
    free(copy);
    return 0;
}
