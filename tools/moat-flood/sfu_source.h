/* A fan-out publisher's media, paced evenly as a real sender paces it (no
 * frame bursts): VP8-shaped video, 150 packets of about 1200 octets a
 * second by default (five packets per 30 fps frame, a keyframe every 3 s),
 * and Opus, 50 packets a second; about 1.5 Mbit/s together. Owned by one
 * session. */
#ifndef SFU_SOURCE_H
#define SFU_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flood_random.h"

#define SFU_VIDEO_PPS           150
#define SFU_VIDEO_PACKET_LENGTH 1180 /* RTP header and payload, before SRTP */
#define SFU_AUDIO_PPS           50
#define SFU_AUDIO_PACKET_LENGTH 132

typedef struct {
    bool video;
    uint32_t ssrc;
    uint8_t payload_type;
    uint16_t sequence; /* of the next packet */
    uint32_t timestamp;
    uint64_t interval_us;
    uint64_t next_us;
    uint64_t packets; /* written so far */
} sfu_stream;

typedef struct {
    sfu_stream audio, video;
    flood_random random;
} sfu_source;

/* Both streams start within one interval of start_us, at random offsets;
 * video at video_pps packets a second (0: SFU_VIDEO_PPS; --video-pps). */
void sfu_source_init(sfu_source *s, uint32_t audio_ssrc, uint8_t audio_pt, uint32_t video_ssrc,
                     uint8_t video_pt, unsigned video_pps, uint64_t start_us);
/* The stream whose packet is due at or before now_us, or NULL. */
sfu_stream *sfu_source_due(sfu_source *s, uint64_t now_us);
uint64_t sfu_source_next_us(const sfu_source *s);
/* Writes the stream's next RTP packet into out and schedules the one after
 * (a sender late by more than 200 ms restarts its schedule rather than
 * bursting). Returns its length, 0 if capacity is too small. */
size_t sfu_source_write(sfu_source *s, sfu_stream *stream, uint64_t now_us, uint8_t *out,
                        size_t capacity);

#endif
