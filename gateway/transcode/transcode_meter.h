/* The real-time meter of one transcoding direction's input: the media each
 * audio payload carries (its decoded duration) against the wall clock, as
 * a token bucket of media time. A party may send 1.2 s of media a second
 * plus a 500 ms burst (jitter, the backlog of a network hiccup); beyond
 * that its audio is dropped before it reaches the pipeline, so what the
 * transcoder sends the other party never runs much faster than real time,
 * whatever the input's timestamps or packet sizes say.
 * Plain data, no locking: owned by the thread that pushes the input. */
#ifndef MOAT_TRANSCODE_METER_H
#define MOAT_TRANSCODE_METER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_TRANSCODE_METER_RATE_PERCENT 120    /* media time per wall-clock time */
#define MOAT_TRANSCODE_METER_BURST_US     500000 /* media admitted at once */
/* What one Opus packet it cannot read is taken to carry (RFC 6716's most). */
#define MOAT_TRANSCODE_OPUS_MAX_US 120000

typedef struct {
    int64_t credit; /* media admissible now, in us * 100 */
    int64_t last_us;
    bool started;
} moat_transcode_meter;

void moat_transcode_meter_init(moat_transcode_meter *meter);

/* True when `media_us` of media arriving at `now_us` (a monotonic clock)
 * fits, and then takes it from the meter; false: drop the packet (it
 * takes nothing). Starts full. */
bool moat_transcode_meter_admit(moat_transcode_meter *meter, int64_t now_us, uint32_t media_us);

/* The decoded duration of one audio payload in microseconds. bytes_per_ms
 * non-zero: a constant-rate codec (G.711, G.722: 8 bytes a millisecond);
 * 0: Opus, from its TOC byte and frame count (RFC 6716 section 3.1), and
 * MOAT_TRANSCODE_OPUS_MAX_US for a packet that does not parse. */
uint32_t moat_transcode_payload_us(unsigned bytes_per_ms, const uint8_t *payload, size_t length);

#endif
