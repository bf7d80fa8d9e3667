/* The transcoder's real-time input meter and the media durations it
 * charges: pure arithmetic on payload bytes and a caller's clock
 * (transcode_meter.h). */
#include "transcode/transcode_meter.h"

#define CREDIT_MAX ((int64_t)MOAT_TRANSCODE_METER_BURST_US * 100)

void moat_transcode_meter_init(moat_transcode_meter *meter)
{
    *meter = (moat_transcode_meter){0};
}

static void refill(moat_transcode_meter *meter, int64_t now_us)
{
    if (!meter->started) {
        meter->started = true;
        meter->credit = CREDIT_MAX;
        meter->last_us = now_us;
        return;
    }
    int64_t elapsed = now_us - meter->last_us;
    if (elapsed <= 0)
        return;
    meter->last_us = now_us;
    if (elapsed >= MOAT_TRANSCODE_METER_BURST_US) {
        meter->credit = CREDIT_MAX;
        return;
    }
    meter->credit += elapsed * MOAT_TRANSCODE_METER_RATE_PERCENT;
    if (meter->credit > CREDIT_MAX)
        meter->credit = CREDIT_MAX;
}

bool moat_transcode_meter_admit(moat_transcode_meter *meter, int64_t now_us, uint32_t media_us)
{
    refill(meter, now_us);
    int64_t cost = (int64_t)media_us * 100;
    if (cost > meter->credit)
        return false;
    meter->credit -= cost;
    return true;
}

/* One frame's duration from the TOC's configuration (RFC 6716 table 2). */
static uint32_t opus_frame_us(uint8_t toc)
{
    static const uint32_t silk[] = {10000, 20000, 40000, 60000};
    static const uint32_t celt[] = {2500, 5000, 10000, 20000};
    unsigned config = toc >> 3;
    if (config < 12)
        return silk[config & 3];
    if (config < 16)
        return config & 1 ? 20000 : 10000; /* hybrid */
    return celt[config & 3];
}

static uint32_t opus_payload_us(const uint8_t *payload, size_t length)
{
    if (length < 1)
        return MOAT_TRANSCODE_OPUS_MAX_US;
    unsigned frames;
    switch (payload[0] & 3) {
    case 0:
        frames = 1;
        break;
    case 1:
    case 2:
        frames = 2;
        break;
    default:
        frames = length >= 2 ? payload[1] & 0x3f : 0;
        break;
    }
    uint32_t total = frames * opus_frame_us(payload[0]);
    if (frames == 0 || total > MOAT_TRANSCODE_OPUS_MAX_US)
        return MOAT_TRANSCODE_OPUS_MAX_US;
    return total;
}

uint32_t moat_transcode_payload_us(unsigned bytes_per_ms, const uint8_t *payload, size_t length)
{
    if (!bytes_per_ms)
        return opus_payload_us(payload, length);
    if (length > UINT32_MAX / 1000)
        return UINT32_MAX;
    return (uint32_t)(length * 1000 / bytes_per_ms);
}
