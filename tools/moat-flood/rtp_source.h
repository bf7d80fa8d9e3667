/* Realistic legitimate RTP for one session: G.711 (PCMU, 20 ms, 172-byte
 * packets carrying a tone), Opus (20 ms, variable size) or a VP8-like video
 * pattern (30 fps, small delta frames, keyframe bursts every 3 s and on
 * request). Every packet carries an RTT probe (rtp_probe.h). */
#ifndef RTP_SOURCE_H
#define RTP_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flood_options.h"
#include "flood_random.h"

#define RTP_SOURCE_MAX_FRAME_PACKETS 64
/* Largest RTP payload: with the header, SRTP, SRTP+ chain block and tag a
 * packet stays under 1200 octets. */
#define RTP_SOURCE_MAX_PAYLOAD   1100
#define RTP_SOURCE_HEADER_LENGTH 12

typedef struct {
    size_t n_packets;
    uint16_t payload_length[RTP_SOURCE_MAX_FRAME_PACKETS];
    bool keyframe;
    uint32_t timestamp;
} rtp_frame;

typedef struct {
    flood_media media;
    uint8_t payload_type;
    uint32_t clock_rate;
    uint32_t ssrc;
    uint16_t sequence; /* of the next packet */
    uint32_t timestamp;
    uint32_t timestamp_step;
    uint64_t frame_interval_us;
    uint64_t next_frame_us;
    uint64_t nominal_frame_us; /* the schedule without jitter */
    double jitter;             /* fraction of the frame interval */
    uint64_t frames;
    uint64_t frames_since_keyframe;
    bool keyframe_requested;
    flood_random random;
} rtp_source;

uint32_t rtp_source_clock_rate(flood_media media);
/* Where the probe sits in the payload (after the Opus TOC or VP8 descriptor). */
size_t rtp_source_probe_offset(flood_media media);

/* First frame at start_us; random initial sequence number and timestamp. */
void rtp_source_init(rtp_source *s, flood_media media, uint8_t payload_type, uint32_t ssrc,
                     uint64_t start_us);
bool rtp_source_frame_due(const rtp_source *s, uint64_t now_us);
/* Plans the next frame (sizes and packet count) and schedules the one after. */
void rtp_source_next_frame(rtp_source *s, uint64_t now_us, rtp_frame *frame);
/* Writes packet `index` of frame (header, probe with now_us, content) into
 * out and advances the sequence number. Returns its length, 0 if capacity
 * is too small. */
size_t rtp_source_write(rtp_source *s, const rtp_frame *frame, size_t index, uint64_t now_us,
                        uint8_t *out, size_t capacity);
/* A PLI or FIR asked for one: the next video frame is a keyframe. */
void rtp_source_request_keyframe(rtp_source *s);

#endif
