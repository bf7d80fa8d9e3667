/* Audio transcoding for one call direction through a GStreamer pipeline
 * (appsrc ! depayloader ! decoder ! audioconvert ! audioresample ! encoder
 * ! payloader ! appsink), off the media workers. The pipeline runs on the
 * input's RTP timeline (buffer times from unwrapped RTP timestamps, no
 * clock and no jitter buffer: late or duplicate packets are dropped and
 * counted), so its output timestamps follow the input's. RFC 4733
 * telephone-event packets bypass the pipeline and are re-stamped onto the
 * output stream (payload type, SSRC, clock rate, one sequence).
 *
 * Input is metered against its arrival times (transcode_meter.h): audio
 * beyond 1.2 s of media a second plus a 500 ms burst is dropped and
 * counted, so the output never runs much faster than real time, however
 * small or fast the party's packets.
 *
 * Threads: moat_transcoder_push may be called from any one thread at a time
 * (the leg's worker); it never blocks: a full input queue drops and counts.
 * The output callback runs on the transcoder's threads (GStreamer's
 * streaming thread for audio, its feeding thread for telephone-events),
 * never two at once, so it must only hand the packet on. new/free on the
 * control thread; free waits for the pipeline to stop, after which the
 * callback is never called again. */
#ifndef MOAT_TRANSCODER_H
#define MOAT_TRANSCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_transcoder moat_transcoder;

/* One side's codec: encoding name as in SDP ("opus", "PCMU", "PCMA",
 * "G722", "telephone-event"), RTP clock rate, channels, payload type. */
typedef struct {
    const char *name;
    uint32_t clock_rate;
    unsigned channels;
    uint8_t payload_type;
    uint8_t dtmf_payload_type; /* telephone-event PT on this side; 0: none */
    uint32_t dtmf_clock_rate;
} moat_transcoder_codec;

/* A complete RTP packet in the output codec, SSRC `output_ssrc`. */
typedef void (*moat_transcoder_output_fn)(void *context, const uint8_t *packet, size_t length);

typedef struct {
    uint64_t packets_in;
    uint64_t packets_out;
    uint64_t dropped_queue_full; /* push found the input queue full */
    uint64_t dropped_invalid;    /* not RTP, or a payload type of neither codec */
    uint64_t dropped_too_fast;   /* audio beyond the real-time meter */
    uint64_t dtmf_events;        /* telephone-event packets passed through */
    uint64_t dropped_late;       /* audio not newer than the newest (reordered, duplicate) */
    uint64_t dropped_dtmf;       /* telephone-event with none on the output side */
    bool failed;                 /* the pipeline reported an error: input is dropped */
} moat_transcoder_stats;

/* True when name (case-insensitive) is a codec this build can decode and
 * encode (the GStreamer elements are present). */
bool moat_transcoder_supports(const char *name);

/* NULL with a message if a codec is unsupported, the pipeline fails or
 * no thread can be made for it (never an abort). */
moat_transcoder *moat_transcoder_new(const moat_transcoder_codec *input,
                                     const moat_transcoder_codec *output, uint32_t output_ssrc,
                                     moat_transcoder_output_fn output_fn, void *context,
                                     char *error, size_t error_size);
/* Plaintext RTP in the input codec (or its telephone-event), arrived at
 * `arrival_us` on a monotonic microsecond clock (a call's worker: now).
 * The meter holds the media of the audio against these times; a caller
 * that replays a recorded stream faster than real time (a test, a
 * benchmark) passes the times it would have arrived at. */
void moat_transcoder_push(moat_transcoder *transcoder, const uint8_t *packet, size_t length,
                          int64_t arrival_us);
void moat_transcoder_get_stats(const moat_transcoder *transcoder, moat_transcoder_stats *stats);
void moat_transcoder_free(moat_transcoder *transcoder);

/* Control thread: the sum over every transcoder this process ran (live and
 * freed; `failed` is set when any live one failed) and how many are live. */
void moat_transcoder_totals(moat_transcoder_stats *totals, unsigned *live);
/* How many transcoders are live now (made and not yet freed). */
unsigned moat_transcoder_live(void);

#endif
