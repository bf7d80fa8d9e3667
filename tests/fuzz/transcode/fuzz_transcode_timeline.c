/* The transcoder's handling of hostile RTP before GStreamer: each record of
 * the input is one packet (1 byte: audio or event clock choice, 2 bytes:
 * length, then the packet) parsed as the push path does, then run through
 * the real-time meter (the payload's duration as Opus or G.711, a clock
 * stepped by the sequence number's low bits), the timeline and the
 * telephone-event re-stamping. Invariants: an Opus duration is within
 * (0, 120 ms], the meter never admits more than its burst plus 1.2x the
 * clock, accepted audio times only grow (or start over at 0, at the
 * timeline's bound), an event packet is exactly 16 bytes. */
#include "rtp/rtp_packet.h"
#include "transcode/transcode_meter.h"
#include "transcode/transcode_timeline.h"

#include <stdlib.h>

static const uint32_t clocks[] = {8000, 16000, 48000};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    moat_transcode_timeline timeline;
    moat_transcode_timeline_init(&timeline, clocks[data[0] % 3], clocks[(data[0] / 3) % 3],
                                 (uint32_t)size * 2654435761u);
    moat_transcode_meter meter;
    moat_transcode_meter_init(&meter);
    int64_t now = 0, admitted = 0;
    uint64_t last_time = 0;
    bool any = false;
    size_t offset = 1;
    while (offset + 3 <= size) {
        uint8_t kind = data[offset];
        size_t length = (size_t)data[offset + 1] << 8 | data[offset + 2];
        offset += 3;
        if (length > size - offset)
            length = size - offset;
        const uint8_t *packet = data + offset;
        offset += length;
        moat_rtp_header header;
        if (moat_rtp_parse(packet, length, &header) != MOAT_RTP_OK)
            continue;
        if (kind & 1) {
            uint32_t media = moat_transcode_payload_us(
                kind & 2 ? 0 : 8, packet + header.payload_offset, header.payload_length);
            if ((kind & 2) && (media == 0 || media > MOAT_TRANSCODE_OPUS_MAX_US))
                abort();
            now += header.sequence & 0xfff;
            if (moat_transcode_meter_admit(&meter, now, media))
                admitted += media;
            if (admitted >
                MOAT_TRANSCODE_METER_BURST_US + now * MOAT_TRANSCODE_METER_RATE_PERCENT / 100)
                abort();
            uint64_t time_ns;
            if (!moat_transcode_timeline_audio(&timeline, header.timestamp, &time_ns))
                continue;
            if (any && time_ns <= last_time && time_ns != 0) /* 0: over at the bound */
                abort();
            last_time = time_ns;
            any = true;
            moat_transcode_frame_timestamp(timeline.out_base, timeline.out_clock, header.timestamp);
            continue;
        }
        uint8_t out[MOAT_TRANSCODE_EVENT_PACKET];
        uint32_t timestamp = moat_transcode_timeline_event(&timeline, header.timestamp);
        size_t written = moat_transcode_event_packet(
            packet + header.payload_offset, header.payload_length, header.marker, kind >> 1,
            header.sequence, timestamp, 1, clocks[kind % 3], clocks[(kind / 3) % 3], out);
        if (written != 0 && written != MOAT_TRANSCODE_EVENT_PACKET)
            abort();
    }
    return 0;
}
