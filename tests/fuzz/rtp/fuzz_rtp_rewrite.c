/* libFuzzer target for the forward rewrite (rtp/rtp_rewrite.h) and a
 * forwarded stream's retransmission map (rtp/retransmit_map.h): the first
 * 20 bytes are a rewrite, the rest a source packet (publisher input).
 * Invariants: no read or write past the packet (ASan); on success the
 * packet parses with the rewrite's SSRC, sequence number, timestamp and
 * payload type, no longer than before; a NACK of the rewritten sequence
 * number rebuilds exactly the packet sent. */
#include <stdlib.h>
#include <string.h>

#include "rtp/retransmit_map.h"
#include "rtp/rtp_packet.h"
#include "rtp/rtp_rewrite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const moat_retransmit_cache *resolve(void *user, uint64_t key, uint32_t id)
{
    return key == 1 && id == 1 ? user : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 20 || size - 20 > MOAT_RETRANSMIT_MAX_PACKET)
        return 0;
    moat_rtp_rewrite rw;
    memcpy(&rw, data, sizeof rw < 20 ? sizeof rw : 20);
    size_t length = size - 20;
    uint8_t *packet = malloc(length ? length : 1);
    if (!packet)
        return 0;
    memcpy(packet, data + 20, length);
    moat_rtp_header source;
    bool parsed = moat_rtp_parse(packet, length, &source) == MOAT_RTP_OK;
    moat_retransmit_cache *cache = moat_retransmit_cache_new(16, 0, 0);
    moat_retransmit_map *map = moat_retransmit_map_new(16, 0, 0);
    if (parsed)
        moat_retransmit_cache_store(cache, packet, length, 1);
    size_t n = length;
    if (moat_rtp_rewrite_apply(packet, &n, &rw) == MOAT_RTP_OK) {
        moat_rtp_header h;
        if (!parsed || n > length || moat_rtp_parse(packet, n, &h) != MOAT_RTP_OK ||
            h.ssrc != rw.ssrc || h.sequence != rw.sequence || h.timestamp != rw.timestamp ||
            h.payload_type != (rw.payload_type & 0x7f) || h.payload_length != source.payload_length)
            abort();
        moat_retransmit_map_record(map, 1, 1, source.sequence, &rw);
        uint8_t out[MOAT_RETRANSMIT_MAX_PACKET];
        size_t rebuilt = 0;
        if (moat_retransmit_map_rebuild(map, rw.sequence, 2, resolve, cache, out, sizeof out,
                                        &rebuilt) != MOAT_RTP_OK ||
            rebuilt != n || memcmp(out, packet, n) != 0)
            abort();
    } else if (n != length) {
        abort();
    }
    moat_retransmit_map_free(map);
    moat_retransmit_cache_free(cache);
    free(packet);
    return 0;
}
