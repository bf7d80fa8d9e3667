/* The transcoder's input-to-output time mapping and the re-stamping of
 * telephone-event packets: pure arithmetic on RTP fields. */
#include "transcode/transcode_timeline.h"

#include "rtp/rtp_bytes.h"

#define JUMP_SECONDS      5
#define NS_PER_SECOND     1000000000LL
#define FRAMES_PER_SECOND 50 /* 20 ms */
/* Clock rates above this (none is near it) are clamped, so that every
 * product below stays far inside 64 bits. */
#define MAX_CLOCK (1u << 24)

static uint32_t clock_of(uint32_t rate)
{
    if (!rate)
        return 8000;
    return rate < MAX_CLOCK ? rate : MAX_CLOCK;
}

void moat_transcode_timeline_init(moat_transcode_timeline *timeline, uint32_t in_clock,
                                  uint32_t out_clock, uint32_t out_base)
{
    *timeline = (moat_transcode_timeline){
        .in_clock = clock_of(in_clock),
        .out_clock = clock_of(out_clock),
        .out_base = out_base,
    };
}

/* ticks * num / den, truncated toward zero like the plain expression:
 * whole `den`s and the remainder are scaled apart, so for |ticks| up to
 * (MOAT_TRANSCODE_TIMELINE_SECONDS + 2^31) * den, num <= 10^9 and
 * den <= MAX_CLOCK no product leaves 64 bits. */
static int64_t scale(int64_t ticks, int64_t num, int64_t den)
{
    return ticks / den * num + ticks % den * num / den;
}

static void anchor(moat_transcode_timeline *timeline, uint32_t timestamp)
{
    timeline->anchored = true;
    timeline->last_ts = timestamp;
    timeline->last_ext = 0;
}

bool moat_transcode_timeline_audio(moat_transcode_timeline *timeline, uint32_t timestamp,
                                   uint64_t *time_ns)
{
    if (!timeline->anchored) {
        anchor(timeline, timestamp);
        *time_ns = 0;
        return true;
    }
    int64_t delta = (int32_t)(timestamp - timeline->last_ts);
    int64_t jump = (int64_t)timeline->in_clock * JUMP_SECONDS;
    if (delta <= 0 && delta >= -jump)
        return false;
    if (delta >= jump || delta < -jump)
        delta = timeline->in_clock / FRAMES_PER_SECOND;
    if (timeline->last_ext + delta >
        (int64_t)timeline->in_clock * MOAT_TRANSCODE_TIMELINE_SECONDS) {
        anchor(timeline, timestamp); /* bounded: starts over, like a new sender */
        *time_ns = 0;
        return true;
    }
    timeline->last_ts = timestamp;
    timeline->last_ext += delta;
    *time_ns = (uint64_t)scale(timeline->last_ext, NS_PER_SECOND, timeline->in_clock);
    return true;
}

uint32_t moat_transcode_timeline_event(moat_transcode_timeline *timeline, uint32_t timestamp)
{
    if (!timeline->anchored)
        anchor(timeline, timestamp);
    int64_t ext = timeline->last_ext + (int32_t)(timestamp - timeline->last_ts);
    int64_t scaled = scale(ext, timeline->out_clock, timeline->in_clock);
    return timeline->out_base + (uint32_t)scaled;
}

uint32_t moat_transcode_frame_timestamp(uint32_t out_base, uint32_t out_clock, uint32_t timestamp)
{
    int64_t frame = out_clock / FRAMES_PER_SECOND;
    if (frame <= 0)
        return timestamp;
    int64_t offset = (int32_t)(timestamp - out_base);
    int64_t frames = (offset >= 0 ? offset + frame / 2 : offset - frame / 2) / frame;
    return out_base + (uint32_t)(frames * frame);
}

size_t moat_transcode_event_packet(const uint8_t *payload, size_t payload_length, bool marker,
                                   uint8_t payload_type, uint16_t sequence, uint32_t timestamp,
                                   uint32_t ssrc, uint32_t in_clock, uint32_t out_clock,
                                   uint8_t out[MOAT_TRANSCODE_EVENT_PACKET])
{
    if (payload_length < MOAT_TRANSCODE_EVENT_PAYLOAD || !in_clock || !out_clock)
        return 0;
    uint64_t duration = (uint64_t)moat_rd16(payload + 2) * out_clock / in_clock;
    out[0] = 0x80;
    out[1] = (uint8_t)((marker ? 0x80 : 0) | (payload_type & 0x7f));
    moat_wr16(out + 2, sequence);
    moat_wr32(out + 4, timestamp);
    moat_wr32(out + 8, ssrc);
    out[12] = payload[0];
    out[13] = payload[1];
    moat_wr16(out + 14, duration > 0xffff ? 0xffff : (uint16_t)duration);
    return MOAT_TRANSCODE_EVENT_PACKET;
}
