/* Transcoding for one call stream whose legs share no codec: two
 * transcoders (one per direction) and the queues that bring their output
 * back to the stream's worker, which protects (SDES legs) and sends it
 * like any relayed packet. What leg `side` receives goes into direction
 * `side`; its output is queued for the party behind the other leg.
 *
 * Threads: new on the control thread; push, pop and the wake-up fd on the
 * stream's worker (never blocking; full queues drop and count); the
 * transcoders' threads fill the output queues and signal the fd. release
 * from any thread: on a worker it defers the free (which waits for the
 * pipelines) to the control thread's main loop. */
#ifndef MOAT_CALL_TRANSCODE_H
#define MOAT_CALL_TRANSCODE_H

#include "transcode/transcoder.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_call_transcode moat_call_transcode;

/* codecs[side]: the codec of the party behind leg `side`. */
moat_call_transcode *moat_call_transcode_new(const moat_transcoder_codec codecs[2], char *error,
                                             size_t error_size);

/* Readable when output is queued; the worker polls it with the legs. */
int moat_call_transcode_fd(const moat_call_transcode *transcode);

/* Worker: a plaintext RTP packet leg `side` received, just now (its
 * arrival time is what the transcoder's real-time meter goes by). */
void moat_call_transcode_push(moat_call_transcode *transcode, int side, const uint8_t *packet,
                              size_t length);
/* Worker: clears the fd's wake-up, then pops until 0 (none left). Copies
 * the next packet for the party behind leg `to_side` into buffer. */
void moat_call_transcode_woken(moat_call_transcode *transcode);
size_t moat_call_transcode_pop(moat_call_transcode *transcode, int to_side, uint8_t *buffer,
                               size_t size);

typedef struct {
    moat_transcoder_stats directions[2];
    uint64_t output_dropped; /* an output queue was full */
} moat_call_transcode_stats;

void moat_call_transcode_get_stats(moat_call_transcode *transcode,
                                   moat_call_transcode_stats *stats);

/* `on_worker`: called on a media worker (the free is deferred). */
void moat_call_transcode_release(moat_call_transcode *transcode, bool on_worker);

#endif
