/* The media timeline of one transcoding direction: input RTP timestamps,
 * unwrapped from the first packet, become the pipeline's buffer times, and
 * the same mapping gives the output timestamp of a telephone-event packet,
 * so events land on the output clock where the transcoded audio is.
 * Plain data, no locking: owned by the transcoder's feeding thread. */
#ifndef MOAT_TRANSCODE_TIMELINE_H
#define MOAT_TRANSCODE_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RFC 4733 event payload and the header written in front of it. */
#define MOAT_TRANSCODE_EVENT_PAYLOAD 4
#define MOAT_TRANSCODE_EVENT_PACKET  (12 + MOAT_TRANSCODE_EVENT_PAYLOAD)

/* How far the timeline runs from its anchor (68 years) before it starts
 * over at 0: only a party whose timestamps run far ahead of real time gets
 * there, and bounded, the nanoseconds never overflow. */
#define MOAT_TRANSCODE_TIMELINE_SECONDS (INT64_C(1) << 31)

typedef struct {
    uint32_t in_clock, out_clock; /* RTP clock rates of the two sides' audio */
    uint32_t out_base;            /* output timestamp of the anchor */
    bool anchored;
    uint32_t last_ts; /* newest input audio timestamp */
    int64_t last_ext; /* its input ticks since the anchor, at most
                       * in_clock * MOAT_TRANSCODE_TIMELINE_SECONDS */
} moat_transcode_timeline;

void moat_transcode_timeline_init(moat_transcode_timeline *timeline, uint32_t in_clock,
                                  uint32_t out_clock, uint32_t out_base);

/* An input audio packet's time on the pipeline's timeline, in nanoseconds
 * from the anchor. False for a packet not newer than the newest one seen
 * (late or duplicate: the caller drops it). A jump of 5 s or more forward,
 * or more than 5 s back (a restarted sender), re-anchors: the packet
 * follows the newest one by 20 ms. A packet that would take the timeline
 * past MOAT_TRANSCODE_TIMELINE_SECONDS starts it over at 0. Clock rates
 * (init) of 0 mean 8000; above 2^24 they are clamped. */
bool moat_transcode_timeline_audio(moat_transcode_timeline *timeline, uint32_t timestamp,
                                   uint64_t *time_ns);

/* The output timestamp of a telephone-event whose input timestamp is
 * `timestamp` (same clock as the input audio, RFC 4733 section 2.1). */
uint32_t moat_transcode_timeline_event(moat_transcode_timeline *timeline, uint32_t timestamp);

/* The payloader's output timestamp moved to the nearest 20 ms frame from
 * out_base: an encoder's look-ahead makes its first frame short (Opus:
 * 6.5 ms), which would otherwise shift every later timestamp off the frame
 * grid the input and the telephone-events are on. */
uint32_t moat_transcode_frame_timestamp(uint32_t out_base, uint32_t out_clock, uint32_t timestamp);

/* Writes `payload` (an RFC 4733 event, at least 4 bytes; only the first
 * event is kept) into out as a complete packet with the given header
 * fields; the marker comes from `marker`, the duration is scaled from
 * in_clock to out_clock ticks. Returns the packet's length, or 0 when the
 * payload is too short. */
size_t moat_transcode_event_packet(const uint8_t *payload, size_t payload_length, bool marker,
                                   uint8_t payload_type, uint16_t sequence, uint32_t timestamp,
                                   uint32_t ssrc, uint32_t in_clock, uint32_t out_clock,
                                   uint8_t out[MOAT_TRANSCODE_EVENT_PACKET]);

#endif
