/* A recording of one session into a Matroska file through GStreamer, without
 * transcoding: Opus with VP8, VP9, H.264 or AV1 remuxed as they arrive.
 *
 * The session's worker feeds it through its media tap (media_tap.h) into a
 * bounded lock-free queue: a full queue drops the packet and counts it; the
 * worker never blocks and never calls GStreamer. The recorder's own thread
 * drains the queue into the pipeline: appsrc -> rtpjitterbuffer ->
 * depayloader [-> parser] -> matroskamux -> filesink. After the tap's
 * on_detach that thread finishes the file (EOS) and frees the recorder. */
#ifndef MOAT_RECORDER_H
#define MOAT_RECORDER_H

#include "core/media_tap.h"

#include <stddef.h>
#include <stdint.h>

typedef struct moat_recorder moat_recorder;

/* Control thread. Creates `dir` if needed and starts the recorder's thread;
 * the file is <dir>/<name>-<UTC start, YYYYmmddTHHMMSSZ>.mkv and its path is
 * returned in *path (g_free it). NULL with a message on failure. */
moat_recorder *moat_recorder_new(const char *dir, const char *name, char **path, char *error,
                                 size_t error_size);
/* The tap that feeds it. Exactly one session gets it; if it never does, call
 * its on_detach so the recorder frees itself. */
moat_media_tap moat_recorder_tap(moat_recorder *recorder);

/* Any thread: recordings whose file is still open, and the packets every
 * recorder's queue ever dropped. */
unsigned moat_recorder_active(void);
uint64_t moat_recorder_dropped_total(void);
/* Waits up to `timeout_ms` for every recording to finish its file. */
void moat_recorder_wait_idle(unsigned timeout_ms);

#endif
