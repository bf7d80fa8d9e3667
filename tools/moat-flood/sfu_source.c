/* Paced publisher media for the fan-out mode: one packet at a time per
 * stream, each on its own even schedule. */
#include "sfu_source.h"

#include "rtp/rtp_bytes.h"

#include <string.h>

#define VIDEO_PACKETS_PER_FRAME 5
#define VIDEO_TIMESTAMP_STEP    3000 /* 90 kHz at 30 fps */
#define KEYFRAME_EVERY          90   /* frames */
#define AUDIO_TIMESTAMP_STEP    960  /* 48 kHz, 20 ms */
#define OPUS_TOC_CELT_20MS      0xFC
#define VP8_DESCRIPTOR_START    0x10
#define MAX_LAG_US              200000u
#define HEADER_LENGTH           12

static void stream_init(sfu_stream *st, flood_random *random, bool video, unsigned pps,
                        uint32_t ssrc, uint8_t pt, uint64_t start_us)
{
    memset(st, 0, sizeof *st);
    st->video = video;
    st->ssrc = ssrc;
    st->payload_type = pt & 0x7f;
    st->sequence = (uint16_t)flood_random_u32(random);
    st->timestamp = flood_random_u32(random);
    st->interval_us = 1000000u / (pps ? pps : 1);
    if (st->interval_us == 0)
        st->interval_us = 1;
    st->next_us = start_us + flood_random_range(random, 0, (uint32_t)st->interval_us - 1);
}

void sfu_source_init(sfu_source *s, uint32_t audio_ssrc, uint8_t audio_pt, uint32_t video_ssrc,
                     uint8_t video_pt, unsigned video_pps, uint64_t start_us)
{
    flood_random_seed(&s->random);
    stream_init(&s->audio, &s->random, false, SFU_AUDIO_PPS, audio_ssrc, audio_pt, start_us);
    stream_init(&s->video, &s->random, true, video_pps ? video_pps : SFU_VIDEO_PPS, video_ssrc,
                video_pt, start_us);
}

sfu_stream *sfu_source_due(sfu_source *s, uint64_t now_us)
{
    sfu_stream *first = s->audio.next_us <= s->video.next_us ? &s->audio : &s->video;
    return first->next_us <= now_us ? first : NULL;
}

uint64_t sfu_source_next_us(const sfu_source *s)
{
    return s->audio.next_us < s->video.next_us ? s->audio.next_us : s->video.next_us;
}

/* VP8 payload descriptor, then a frame tag on a frame's first packet (P bit
 * clear on keyframes, which carry the start code and a 640x480 size). */
static void write_video(sfu_source *s, sfu_stream *st, uint8_t *payload, size_t length)
{
    uint64_t index = st->packets % VIDEO_PACKETS_PER_FRAME;
    uint64_t frame = st->packets / VIDEO_PACKETS_PER_FRAME;
    bool keyframe = frame % KEYFRAME_EVERY == 0;
    flood_random_fill(&s->random, payload, length);
    payload[0] = index == 0 ? VP8_DESCRIPTOR_START : 0x00;
    if (index != 0)
        return;
    payload[1] = keyframe ? (uint8_t)(payload[1] & 0xFE) : (uint8_t)(payload[1] | 0x01);
    if (keyframe) {
        static const uint8_t start[7] = {0x9d, 0x01, 0x2a, 0x80, 0x02, 0xe0, 0x01};
        memcpy(payload + 4, start, sizeof start);
    }
}

size_t sfu_source_write(sfu_source *s, sfu_stream *st, uint64_t now_us, uint8_t *out,
                        size_t capacity)
{
    size_t length = st->video ? SFU_VIDEO_PACKET_LENGTH : SFU_AUDIO_PACKET_LENGTH;
    if (capacity < length)
        return 0;
    bool last_of_frame =
        st->video && st->packets % VIDEO_PACKETS_PER_FRAME == VIDEO_PACKETS_PER_FRAME - 1;
    out[0] = 0x80;
    out[1] = (uint8_t)((last_of_frame ? 0x80 : 0x00) | st->payload_type);
    moat_wr16(out + 2, st->sequence++);
    moat_wr32(out + 4, st->timestamp);
    moat_wr32(out + 8, st->ssrc);
    uint8_t *payload = out + HEADER_LENGTH;
    if (st->video) {
        write_video(s, st, payload, length - HEADER_LENGTH);
    } else {
        flood_random_fill(&s->random, payload, length - HEADER_LENGTH);
        payload[0] = OPUS_TOC_CELT_20MS;
    }
    if (!st->video)
        st->timestamp += AUDIO_TIMESTAMP_STEP;
    else if (last_of_frame)
        st->timestamp += VIDEO_TIMESTAMP_STEP;
    st->packets++;
    st->next_us += st->interval_us;
    if (now_us > st->next_us + MAX_LAG_US)
        st->next_us = now_us + st->interval_us;
    return length;
}
