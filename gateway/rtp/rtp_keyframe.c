/* Keyframe detection per codec payload format (rtp_keyframe.h). */
#include "rtp/rtp_keyframe.h"

#include "rtp/h264_sps.h"

#include <string.h>
#include <strings.h>

moat_video_codec moat_video_codec_from_name(const char *name)
{
    if (strcasecmp(name, "VP8") == 0)
        return MOAT_VIDEO_CODEC_VP8;
    if (strcasecmp(name, "VP9") == 0)
        return MOAT_VIDEO_CODEC_VP9;
    if (strcasecmp(name, "H264") == 0)
        return MOAT_VIDEO_CODEC_H264;
    return MOAT_VIDEO_CODEC_UNKNOWN;
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* RFC 7741 §4.2: the payload descriptor's length, 0 when truncated. */
static size_t vp8_descriptor_length(const uint8_t *p, size_t length)
{
    size_t n = 1;
    if (length < 1)
        return 0;
    if (!(p[0] & 0x80))
        return n;
    if (length < 2)
        return 0;
    uint8_t x = p[1];
    n = 2;
    if (x & 0x80) { /* I: picture id, 7 or 15 bits */
        if (n >= length)
            return 0;
        n += (p[n] & 0x80) ? 2 : 1;
    }
    if (x & 0x40) /* L: TL0PICIDX */
        n++;
    if (x & 0x30) /* T or K: TID/Y/KEYIDX */
        n++;
    return n <= length ? n : 0;
}

/* The start of partition 0 of a frame whose P bit is 0 (RFC 7741 §4.3),
 * with the frame's size after the start code (RFC 6386 §9.1). */
static bool vp8_keyframe(const uint8_t *p, size_t length, moat_keyframe_info *out)
{
    size_t n = vp8_descriptor_length(p, length);
    bool start = n > 0 && (p[0] & 0x10) && (p[0] & 0x07) == 0;
    if (!start || n >= length || (p[n] & 0x01))
        return false;
    const uint8_t *frame = p + n;
    size_t left = length - n;
    if (left >= 10 && frame[3] == 0x9d && frame[4] == 0x01 && frame[5] == 0x2a) {
        out->width = le16(frame + 6) & 0x3fff;
        out->height = le16(frame + 8) & 0x3fff;
    }
    return true;
}

/* RFC 9628 §4.2 scalability structure: the largest spatial layer's size. */
static void vp9_sizes(const uint8_t *p, size_t length, size_t n, moat_keyframe_info *out)
{
    if (n >= length || !(p[n] & 0x10)) /* Y: sizes present */
        return;
    size_t layers = (size_t)(p[n] >> 5) + 1;
    n++;
    for (size_t i = 0; i < layers && n + 4 <= length; i++, n += 4) {
        out->width = be16(p + n);
        out->height = be16(p + n + 2);
    }
}

/* RFC 9628 §4.2: B (start of frame) and not P (inter-picture predicted),
 * in the base spatial layer when layer indices are present. */
static bool vp9_keyframe(const uint8_t *p, size_t length, moat_keyframe_info *out)
{
    if (length < 1)
        return false;
    uint8_t b = p[0];
    bool i = b & 0x80, predicted = b & 0x40, l = b & 0x20, f = b & 0x10, start = b & 0x08,
         v = b & 0x02;
    if (predicted || !start)
        return false;
    size_t n = 1;
    if (i) {
        if (n >= length)
            return false;
        n += (p[n] & 0x80) ? 2 : 1;
    }
    if (l) {
        if (n >= length || ((p[n] >> 1) & 0x07) != 0) /* SID */
            return false;
        n += f ? 1 : 2; /* non-flexible mode adds TL0PICIDX */
    }
    if (n > length)
        return false;
    if (v)
        vp9_sizes(p, length, n, out);
    return true;
}

static bool h264_key_nal(uint8_t type)
{
    return type == 5 || type == 7; /* IDR slice, sequence parameter set */
}

/* One NAL unit: a keyframe's, and its size when it is an SPS. */
static bool h264_nal(const uint8_t *nal, size_t length, moat_keyframe_info *out)
{
    uint8_t type = nal[0] & 0x1f;
    if (type == 7 && !out->width)
        moat_h264_sps_size(nal, length, &out->width, &out->height);
    return h264_key_nal(type);
}

/* RFC 6184 §5.7.1: a single NAL unit, an STAP-A holding one, or the first
 * fragment (FU-A) of one. */
static bool h264_keyframe(const uint8_t *p, size_t length, moat_keyframe_info *out)
{
    if (length < 1)
        return false;
    uint8_t type = p[0] & 0x1f;
    if (type >= 1 && type <= 23)
        return h264_nal(p, length, out);
    if (type == 28)
        return length >= 2 && (p[1] & 0x80) && h264_key_nal(p[1] & 0x1f);
    if (type != 24)
        return false;
    bool key = false;
    for (size_t n = 1; n + 2 < length;) {
        size_t size = be16(p + n);
        if (size == 0 || n + 2 + size > length)
            break;
        key = h264_nal(p + n + 2, size, out) || key;
        n += 2 + size;
    }
    if (!key)
        out->width = out->height = 0;
    return key;
}

bool moat_rtp_keyframe(moat_video_codec codec, const uint8_t *payload, size_t length,
                       moat_keyframe_info *out)
{
    memset(out, 0, sizeof *out);
    if (!payload)
        return false;
    switch (codec) {
    case MOAT_VIDEO_CODEC_VP8:
        out->keyframe = vp8_keyframe(payload, length, out);
        break;
    case MOAT_VIDEO_CODEC_VP9:
        out->keyframe = vp9_keyframe(payload, length, out);
        break;
    case MOAT_VIDEO_CODEC_H264:
        out->keyframe = h264_keyframe(payload, length, out);
        break;
    default:
        break;
    }
    return out->keyframe;
}
