/* libFuzzer target for VP8/VP9 payload descriptors
 * (rtp/video_descriptor.h): the first byte picks the codec, the rest is
 * the payload. Invariants: no read past the payload (ASan); on success the
 * ids lie inside the descriptor, which lies inside the payload; rewriting
 * with the ids read back changes nothing, the continuity map keeps a
 * source switch one picture on, and a layer sync bit comes only with a
 * temporal layer index. */
#include <stdlib.h>
#include <string.h>

#include "rtp/video_descriptor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    moat_video_codec codec = (moat_video_codec)(data[0] % 4);
    size_t length = size - 1;
    uint8_t *payload = malloc(length ? length : 1);
    if (!payload)
        return 0;
    memcpy(payload, data + 1, length);
    moat_video_descriptor d;
    if (moat_video_descriptor_parse(codec, payload, length, &d) == MOAT_RTP_OK) {
        if (d.length > length)
            abort();
        if (d.picture_id_bits && d.picture_id_offset + d.picture_id_bits / 8 + 1 > d.length)
            abort();
        if (d.has_tl0picidx && d.tl0picidx_offset >= d.length)
            abort();
        if (d.layer_sync && !d.has_tid)
            abort();
        moat_video_descriptor_write(payload, &d, d.picture_id, d.tl0picidx);
        if (memcmp(payload, data + 1, length) != 0)
            abort();
        moat_picture_map m = {0};
        uint16_t first, next;
        uint8_t tl0;
        moat_picture_map_apply(&m, false, &d, &first, &tl0);
        moat_picture_map_apply(&m, true, &d, &next, &tl0);
        if (d.picture_id_bits && next != ((first + 1) & 0x7fff))
            abort();
    }
    free(payload);
    return 0;
}
