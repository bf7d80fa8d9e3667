/* Legitimate RTP for one session: G.711 (a 400 Hz tone), Opus (20 ms frames)
 * or a VP8-like video pattern with keyframe bursts; frame timing, packet sizes
 * and payloads, each with an RTT probe. */
#include "rtp_source.h"
#include "rtp_probe.h"

#include "rtp/rtp_bytes.h"

#include <math.h>
#include <string.h>

#define G711_SAMPLES         160  /* 20 ms at 8 kHz */
#define TONE_HZ              400  /* 20 samples per period: 160 samples loop seamlessly */
#define OPUS_TOC_CELT_20MS   0xFC /* config 31 (CELT FB 20 ms), stereo, one frame */
#define VIDEO_FPS            30
#define KEYFRAME_EVERY       90 /* frames: one every 3 s */
#define KEYFRAME_MIN_BYTES   25000
#define KEYFRAME_MAX_BYTES   35000
#define DELTA_MIN_BYTES      800
#define DELTA_MAX_BYTES      5000
#define VP8_DESCRIPTOR_START 0x10 /* S bit: first packet of a partition */
/* A sender that fell behind by more than this restarts its schedule rather
 * than bursting to catch up. */
#define MAX_LAG_US 200000u

static uint8_t g711_tone[G711_SAMPLES];
static bool g711_tone_ready;

/* ITU-T G.711 mu-law encoding of a 16-bit linear sample. */
static uint8_t linear_to_mulaw(int sample)
{
    const int bias = 0x84, clip = 32635;
    int sign = sample < 0 ? 0x80 : 0;
    if (sign)
        sample = -sample;
    if (sample > clip)
        sample = clip;
    sample += bias;
    int exponent = 7;
    for (int mask = 0x4000; (sample & mask) == 0 && exponent > 0; mask >>= 1)
        exponent--;
    int mantissa = (sample >> (exponent + 3)) & 0x0F;
    return (uint8_t) ~(sign | (exponent << 4) | mantissa);
}

static void prepare_tone(void)
{
    if (g711_tone_ready)
        return;
    for (int i = 0; i < G711_SAMPLES; i++)
        g711_tone[i] = linear_to_mulaw((int)(8000.0 * sin(2.0 * M_PI * TONE_HZ * i / 8000.0)));
    g711_tone_ready = true;
}

uint32_t rtp_source_clock_rate(flood_media media)
{
    switch (media) {
    case FLOOD_MEDIA_G711:
        return 8000;
    case FLOOD_MEDIA_OPUS:
        return 48000;
    case FLOOD_MEDIA_VIDEO:
    default:
        return 90000;
    }
}

size_t rtp_source_probe_offset(flood_media media)
{
    return media == FLOOD_MEDIA_G711 ? 0 : 1;
}

void rtp_source_init(rtp_source *s, flood_media media, uint8_t payload_type, uint32_t ssrc,
                     uint64_t start_us)
{
    memset(s, 0, sizeof *s);
    s->media = media;
    s->payload_type = payload_type & 0x7f;
    s->clock_rate = rtp_source_clock_rate(media);
    s->ssrc = ssrc;
    flood_random_seed(&s->random);
    s->sequence = (uint16_t)flood_random_u32(&s->random);
    s->timestamp = flood_random_u32(&s->random);
    if (media == FLOOD_MEDIA_VIDEO) {
        s->frame_interval_us = 1000000u / VIDEO_FPS;
        s->timestamp_step = 90000 / VIDEO_FPS;
        s->keyframe_requested = true; /* a video stream starts on a keyframe */
    } else {
        s->frame_interval_us = 20000;
        s->timestamp_step = s->clock_rate / 50;
    }
    s->next_frame_us = start_us;
    s->nominal_frame_us = start_us;
    prepare_tone();
}

bool rtp_source_frame_due(const rtp_source *s, uint64_t now_us)
{
    return now_us >= s->next_frame_us;
}

static void plan_video(rtp_source *s, rtp_frame *frame)
{
    frame->keyframe = s->keyframe_requested || s->frames_since_keyframe >= KEYFRAME_EVERY;
    uint32_t bytes = frame->keyframe
                         ? flood_random_range(&s->random, KEYFRAME_MIN_BYTES, KEYFRAME_MAX_BYTES)
                         : flood_random_range(&s->random, DELTA_MIN_BYTES, DELTA_MAX_BYTES);
    /* Each packet carries the descriptor and the probe on top of its share. */
    const uint32_t share = RTP_SOURCE_MAX_PAYLOAD - 1 - RTP_PROBE_LENGTH;
    size_t n = (bytes + share - 1) / share;
    if (n > RTP_SOURCE_MAX_FRAME_PACKETS)
        n = RTP_SOURCE_MAX_FRAME_PACKETS;
    frame->n_packets = n;
    for (size_t i = 0; i < n; i++) {
        uint32_t left = bytes > share * i ? bytes - share * (uint32_t)i : 0;
        uint32_t part = left < share ? left : share;
        frame->payload_length[i] = (uint16_t)(part + 1 + RTP_PROBE_LENGTH);
    }
    if (frame->keyframe) {
        s->keyframe_requested = false;
        s->frames_since_keyframe = 0;
    }
    s->frames_since_keyframe++;
}

void rtp_source_next_frame(rtp_source *s, uint64_t now_us, rtp_frame *frame)
{
    memset(frame, 0, sizeof *frame);
    switch (s->media) {
    case FLOOD_MEDIA_G711:
        frame->n_packets = 1;
        frame->payload_length[0] = G711_SAMPLES;
        break;
    case FLOOD_MEDIA_OPUS:
        frame->n_packets = 1;
        frame->payload_length[0] = (uint16_t)flood_random_range(&s->random, 80, 160);
        break;
    case FLOOD_MEDIA_VIDEO:
        plan_video(s, frame);
        break;
    }
    frame->timestamp = s->timestamp;
    s->timestamp += s->timestamp_step;
    s->frames++;
    s->nominal_frame_us += s->frame_interval_us;
    if (now_us > s->nominal_frame_us + MAX_LAG_US)
        s->nominal_frame_us = now_us + s->frame_interval_us;
    s->next_frame_us = s->nominal_frame_us;
    if (s->jitter > 0) {
        /* Uniform in +-jitter of the interval around the nominal time. */
        uint32_t span = (uint32_t)(2.0 * s->jitter * s->frame_interval_us);
        int64_t offset = (int64_t)flood_random_range(&s->random, 0, span) - (int64_t)(span / 2);
        s->next_frame_us = (uint64_t)((int64_t)s->nominal_frame_us + offset);
    }
}

static void write_video_payload(rtp_source *s, const rtp_frame *frame, size_t index,
                                uint8_t *payload, size_t length, uint64_t now_us)
{
    payload[0] = index == 0 ? VP8_DESCRIPTOR_START : 0x00;
    rtp_probe_write(payload + 1, now_us);
    uint8_t *rest = payload + 1 + RTP_PROBE_LENGTH;
    size_t rest_length = length - 1 - RTP_PROBE_LENGTH;
    flood_random_fill(&s->random, rest, rest_length);
    if (index == 0 && rest_length >= 10) {
        /* VP8 frame tag: P bit clear on keyframes, which then carry the
         * start code and a 640x480 size. */
        rest[0] = frame->keyframe ? (uint8_t)(rest[0] & 0xFE) : (uint8_t)(rest[0] | 0x01);
        if (frame->keyframe) {
            static const uint8_t start[7] = {0x9d, 0x01, 0x2a, 0x80, 0x02, 0xe0, 0x01};
            memcpy(rest + 3, start, sizeof start);
        }
    }
}

size_t rtp_source_write(rtp_source *s, const rtp_frame *frame, size_t index, uint64_t now_us,
                        uint8_t *out, size_t capacity)
{
    if (index >= frame->n_packets)
        return 0;
    size_t payload_length = frame->payload_length[index];
    size_t length = RTP_SOURCE_HEADER_LENGTH + payload_length;
    if (capacity < length)
        return 0;
    bool marker = s->media == FLOOD_MEDIA_VIDEO && index + 1 == frame->n_packets;
    out[0] = 0x80; /* V=2, no padding, extension or CSRC */
    out[1] = (uint8_t)((marker ? 0x80 : 0x00) | s->payload_type);
    moat_wr16(out + 2, s->sequence++);
    moat_wr32(out + 4, frame->timestamp);
    moat_wr32(out + 8, s->ssrc);
    uint8_t *payload = out + RTP_SOURCE_HEADER_LENGTH;
    switch (s->media) {
    case FLOOD_MEDIA_G711:
        memcpy(payload, g711_tone, G711_SAMPLES);
        rtp_probe_write(payload, now_us);
        break;
    case FLOOD_MEDIA_OPUS:
        payload[0] = OPUS_TOC_CELT_20MS;
        rtp_probe_write(payload + 1, now_us);
        flood_random_fill(&s->random, payload + 1 + RTP_PROBE_LENGTH,
                          payload_length - 1 - RTP_PROBE_LENGTH);
        break;
    case FLOOD_MEDIA_VIDEO:
        write_video_payload(s, frame, index, payload, payload_length, now_us);
        break;
    }
    return length;
}

void rtp_source_request_keyframe(rtp_source *s)
{
    if (s->media == FLOOD_MEDIA_VIDEO)
        s->keyframe_requested = true;
}
