/* A recording of one session into a Matroska file through GStreamer, without
 * transcoding: Opus with VP8, VP9, H.264 or AV1 remuxed as they arrive.
 *
 * The session's worker feeds it through its media tap (media_tap.h) into a
 * bounded lock-free queue: a full queue drops the packet and counts it; the
 * worker never blocks and never calls GStreamer. The recorder's own thread
 * drains the queue into the pipeline: appsrc -> rtpjitterbuffer ->
 * depayloader [-> parser] -> matroskamux -> filesink. After the tap's
 * on_detach that thread finishes the file (EOS) and frees the recorder; a
 * file that reaches its limits->max_file_bytes is finished then, and the tap
 * queues nothing more. A pipeline that fails (a full disk: no_space; any
 * other error: write) ends the recording the same way at once: EOS so the
 * muxer rewrites what it can of the file's header (for a short while), the
 * pipeline freed, the tap queueing nothing more; its outcome says why. */
#ifndef MOAT_RECORDER_H
#define MOAT_RECORDER_H

#include "session/media_tap.h"

#include <stddef.h>
#include <stdint.h>

typedef struct moat_recorder moat_recorder;

/* Why a recording could not be written (/metrics:
 * moat_record_failures_total{reason}). */
typedef enum {
    MOAT_RECORD_FAILURE_NONE = 0,
    MOAT_RECORD_FAILURE_CREATE, /* the file could not be created (at start: an API error) */
    MOAT_RECORD_FAILURE_WRITE,  /* the pipeline failed while writing it (not for lack of space) */
    /* The folder had less than min_free_bytes free at start (an API error),
     * or its file system filled up while the file was written (ENOSPC). */
    MOAT_RECORD_FAILURE_SPACE,
    MOAT_RECORD_FAILURE_COUNT
} moat_record_failure;

/* Why the tap dropped a packet it would have recorded (/metrics:
 * moat_record_dropped_packets_total{reason}). */
typedef enum {
    MOAT_RECORD_DROP_QUEUE_FULL, /* the recorder's queue was full */
    MOAT_RECORD_DROP_TOO_BIG,    /* longer than a queue slot (MOAT_RECORD_RING_PACKET_MAX) */
    MOAT_RECORD_DROP_COUNT
} moat_record_drop;

/* Bounds of one recording ([record] max_file_mib, min_free_mib); 0: none. */
typedef struct {
    uint64_t max_file_bytes; /* media pushed into the file; reaching it finishes the file */
    uint64_t min_free_bytes; /* free space the folder's file system needs for a start */
} moat_recorder_limits;

/* Control thread. Creates `dir` if needed, creates the file
 * <dir>/<name>-<UTC start, YYYYmmddTHHMMSSZ>-<counter>.mkv with O_EXCL (two
 * recordings started within one second get two files; an existing file is
 * never truncated) and starts the recorder's thread. *file is the file's
 * name relative to `dir` (g_free it): what API replies show, never the
 * server's path. NULL with a message (no server path in it) and *failure
 * set when the file cannot be created or the folder's file system has less
 * than limits->min_free_bytes free (counted). */
moat_recorder *moat_recorder_new(const char *dir, const char *name,
                                 const moat_recorder_limits *limits, char **file, char *error,
                                 size_t error_size, moat_record_failure *failure);
/* Any thread: recordings that failed so. */
uint64_t moat_recorder_failures(moat_record_failure failure);
/* The failure's name as /metrics and API replies give it: "create",
 * "write", "no_space" ("" for none). */
const char *moat_record_failure_name(moat_record_failure failure);

/* What became of one recording, shared by its recorder and whoever started
 * it (reference counted; any thread). The recorder may be gone (freed after
 * its tap's on_detach) while its outcome is still read. */
typedef struct moat_record_outcome moat_record_outcome;
/* A new reference to the recorder's outcome: take it before handing the tap
 * on (the recorder frees itself after on_detach). */
moat_record_outcome *moat_recorder_outcome(moat_recorder *recorder);
void moat_record_outcome_unref(moat_record_outcome *outcome);
/* MOAT_RECORD_FAILURE_NONE while the recording goes on or when it ended
 * well; otherwise why it ended early (its recorder finishes the file at once
 * and records nothing more). */
moat_record_failure moat_record_outcome_failure(const moat_record_outcome *outcome);
/* The tap that feeds it. Exactly one session gets it; if it never does, call
 * its on_detach so the recorder frees itself. */
moat_media_tap moat_recorder_tap(moat_recorder *recorder);

/* Any thread: recordings whose file is still open (one finished at its size
 * limit or by a failure is not), and the packets every recorder's tap ever
 * dropped for `reason`. */
unsigned moat_recorder_active(void);
uint64_t moat_recorder_dropped_total(moat_record_drop reason);
/* Any thread: files finished because they reached max_file_bytes. */
uint64_t moat_recorder_files_at_size_limit(void);
/* Waits up to `timeout_ms` for every recorder to finish its file and free
 * itself. */
void moat_recorder_wait_idle(unsigned timeout_ms);
/* The longest a recorder takes to finish its file: EOS through the
 * pipeline (5 s), then, if the disk filled up meanwhile, EOS into the
 * muxer (2 s), and a second to spare. */
#define MOAT_RECORDER_FINISH_MAX_MS 8000u

#endif
