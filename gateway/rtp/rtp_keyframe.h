/* Keyframe detection in video RTP payloads, for switching a subscriber
 * between simulcast layers at a point its decoder can start from: VP8
 * (RFC 7741), VP9 (RFC 9628) and H.264 (RFC 6184, packetization mode 1).
 * The payload is attacker input: every read is bounded by its length. Pure
 * functions, any thread. */
#ifndef MOAT_RTP_KEYFRAME_H
#define MOAT_RTP_KEYFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    MOAT_VIDEO_CODEC_UNKNOWN = 0, /* AV1 and others: keyframes not detected */
    MOAT_VIDEO_CODEC_VP8,
    MOAT_VIDEO_CODEC_VP9,
    MOAT_VIDEO_CODEC_H264,
} moat_video_codec;

typedef struct {
    bool keyframe;   /* the packet starts a frame a decoder can start from */
    uint16_t width;  /* coded size when the payload says it (VP8 and VP9 */
    uint16_t height; /* keyframes, an H.264 SPS), else 0 */
} moat_keyframe_info;

/* The codec of an SDP encoding name (case-insensitive). */
moat_video_codec moat_video_codec_from_name(const char *name);

/* Fills *out for one RTP payload (after the RTP header, without padding).
 * Returns out->keyframe. */
bool moat_rtp_keyframe(moat_video_codec codec, const uint8_t *payload, size_t length,
                       moat_keyframe_info *out);

#endif
