/* VP8 (RFC 7741 section 4.2) and VP9 (RFC 9628 section 4.2) payload
 * descriptors: where a packet carries its picture id and TL0PICIDX, so an
 * SFU can rewrite them in place, and the per-subscriber mapping that keeps
 * them continuous when the forwarded source changes (a simulcast layer or
 * another publisher), as sequence numbers and timestamps are. H.264 has no
 * such ids. The payload is attacker input: every read is bounded by its
 * length. Parsing and writing are pure; a moat_picture_map belongs to its
 * caller (one thread). */
#ifndef MOAT_RTP_VIDEO_DESCRIPTOR_H
#define MOAT_RTP_VIDEO_DESCRIPTOR_H

#include "rtp/rtp_error.h"
#include "rtp/rtp_keyframe.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t length;           /* of the descriptor, from the payload's start */
    uint8_t picture_id_bits; /* 7 or 15; 0: no picture id */
    uint16_t picture_id;
    size_t picture_id_offset; /* from the payload's start */
    bool has_tl0picidx;
    uint8_t tl0picidx;
    size_t tl0picidx_offset;
    bool has_tid;
    uint8_t tid;       /* temporal layer index */
    bool layer_sync;   /* VP8 Y, VP9 U: depends on TL0 only (with has_tid) */
    bool begins_frame; /* VP8: S with partition 0; VP9: B */
} moat_video_descriptor;

/* Parses the descriptor at the start of a VP8 or VP9 payload (after the
 * RTP header, without padding). MOAT_RTP_OK, MOAT_RTP_ERR_TRUNCATED when
 * it runs past `length`, MOAT_RTP_ERR_TYPE for other codecs. */
int moat_video_descriptor_parse(moat_video_codec codec, const uint8_t *payload, size_t length,
                                moat_video_descriptor *out);

/* Writes a picture id (masked to the descriptor's width) and TL0PICIDX
 * where `d` (parsed from this payload) says they are; absent ones are left
 * alone. The payload length does not change. */
void moat_video_descriptor_write(uint8_t *payload, const moat_video_descriptor *d,
                                 uint16_t picture_id, uint8_t tl0picidx);

/* One subscriber stream's mapping from source ids to the ids it sends. */
typedef struct {
    bool started;
    uint16_t picture_delta; /* mod 2^15 */
    uint8_t tl0_delta;
    uint16_t last_picture; /* newest sent, 15 bits */
    uint8_t last_tl0;      /* newest sent */
} moat_picture_map;

/* Maps the ids of one packet whose descriptor is `d`. `source_changed`:
 * the packet is the first of another source (SSRC) than the last one; the
 * new source then continues at the picture after the newest one sent (and
 * the next TL0PICIDX). Returns the ids to write. */
void moat_picture_map_apply(moat_picture_map *m, bool source_changed,
                            const moat_video_descriptor *d, uint16_t *picture_id,
                            uint8_t *tl0picidx);

#endif
