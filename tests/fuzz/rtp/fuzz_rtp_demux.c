/* libFuzzer target for the routing core's BUNDLE demux (rtp/rtp_demux.h):
 * the input is a series of packets (two-byte big-endian length, then the
 * packet) fed to one demux whose m-lines use every extension id and an RTX
 * mapping. Invariants: the m-line index is valid, payload bounds stay in the
 * packet, strings are terminated, an unwrapped RTX packet parses as the
 * stream it claims, and the stream table stays bounded. */
#include <stdlib.h>
#include <string.h>

#include "rtp/rtp_demux.h"
#include "rtp/rtp_packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

static void media_table(moat_media_info *media)
{
    memset(media, 0, 2 * sizeof *media);
    media[0].kind = MOAT_MEDIA_KIND_AUDIO;
    strcpy(media[0].mid, "0");
    media[0].peer_sends = true;
    media[0].payload_types[0] = 111;
    media[0].n_payload_types = 1;
    media[1].kind = MOAT_MEDIA_KIND_VIDEO;
    strcpy(media[1].mid, "1");
    media[1].peer_sends = true;
    media[1].remote_ssrc = 0x01020304;
    media[1].remote_rtx_ssrc = 0x01020305;
    media[1].payload_types[0] = 96;
    media[1].n_payload_types = 1;
    media[1].codecs[0].payload_type = 96;
    media[1].codecs[0].rtx_payload_type = 97;
    media[1].n_codecs = 1;
    for (int i = 0; i < 2; i++)
        media[i].extensions = (moat_extension_ids){.mid = 1,
                                                   .rid = 2,
                                                   .repaired_rid = 3,
                                                   .abs_send_time = 4,
                                                   .transport_wide_cc = 5,
                                                   .audio_level = 6,
                                                   .video_orientation = 7};
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    moat_media_info media[2];
    media_table(media);
    moat_rtp_demux demux;
    moat_rtp_demux_init(&demux, media, 2);
    uint8_t buffer[2048];
    while (size >= 2) {
        size_t length = (size_t)(data[0] << 8 | data[1]) % sizeof buffer;
        data += 2;
        size -= 2;
        if (length > size)
            length = size;
        memcpy(buffer, data, length);
        data += length;
        size -= length;
        moat_rtp_packet p;
        if (moat_rtp_demux_packet(&demux, buffer, length, sizeof buffer, 0, &p) != 0)
            continue;
        CHECK(p.media_index >= -1 && p.media_index < 2);
        CHECK(p.length <= length && p.data == buffer);
        CHECK(p.payload_offset + p.payload_length <= p.length);
        CHECK(memchr(p.mid, 0, sizeof p.mid) && memchr(p.rid, 0, sizeof p.rid) &&
              memchr(p.repaired_rid, 0, sizeof p.repaired_rid));
        CHECK(!(p.repaired && p.rtx));
        if (p.repaired) {
            moat_rtp_header h;
            CHECK(moat_rtp_parse(buffer, p.length, &h) == MOAT_RTP_OK);
            CHECK(h.ssrc == p.ssrc && h.sequence == p.sequence && h.payload_type == p.payload_type);
        }
        CHECK(demux.n_streams <= MOAT_DEMUX_MAX_STREAMS);
    }
    return 0;
}
