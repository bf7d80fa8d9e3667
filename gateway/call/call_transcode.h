/* Transcoding for one call stream whose legs share no codec: two
 * transcoders (one per direction) and the sockets their output leaves from.
 * What leg `side` receives is pushed into direction `side`, whose output is
 * sent from the other leg's RTP socket to the other party.
 *
 * Threads: new on the control thread; push on the stream's worker (never
 * blocks); the output is sent from GStreamer's threads. The destination is
 * the worker's (latched or SDP) address, copied under a lock only when it
 * changes. release from any thread: on a worker it defers the free (which
 * waits for the pipelines) to the control thread's main loop. */
#ifndef MOAT_CALL_TRANSCODE_H
#define MOAT_CALL_TRANSCODE_H

#include "transcode/transcoder.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_call_transcode moat_call_transcode;

/* codecs[side]: the codec of the party behind leg `side`; rtp_fds[side]:
 * that leg's RTP socket (duplicated: the holder may outlive the leg). */
moat_call_transcode *moat_call_transcode_new(const moat_transcoder_codec codecs[2],
                                             const int rtp_fds[2], char *error, size_t error_size);

/* Worker: an RTP packet leg `side` received; `to` is where the other party
 * receives (family 0: not known yet). */
void moat_call_transcode_push(moat_call_transcode *transcode, int side, const uint8_t *packet,
                              size_t length, const struct sockaddr_in6 *to);

typedef struct {
    moat_transcoder_stats directions[2];
    uint64_t send_failed, no_destination;
} moat_call_transcode_stats;

void moat_call_transcode_get_stats(moat_call_transcode *transcode,
                                   moat_call_transcode_stats *stats);

/* `on_worker`: called on a media worker (the free is deferred). */
void moat_call_transcode_release(moat_call_transcode *transcode, bool on_worker);

#endif
