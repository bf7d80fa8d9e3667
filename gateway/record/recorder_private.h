/* What recorder.c (the recorder's thread, the control thread) and
 * recorder_tap.c (the media worker's tap) share of a recorder: its
 * structure, whose comments say which thread writes each field. Only these
 * two files include it. */
#ifndef MOAT_RECORDER_PRIVATE_H
#define MOAT_RECORDER_PRIVATE_H

#include "record/record_ring.h"
#include "record/record_ssrc.h"
#include "record/recorder.h"

#include <gst/gst.h>
#include <stdatomic.h>
#include <stdbool.h>

enum { STREAM_AUDIO, STREAM_VIDEO, STREAM_COUNT };

typedef struct {
    bool used;
    moat_tap_codec codec;
    moat_record_ssrc ssrc; /* worker only */
    GstElement *src;
} record_stream;

struct moat_record_outcome {
    atomic_int failure; /* moat_record_failure */
};

struct moat_recorder {
    char *path;
    char *name;
    moat_record_ring *ring;
    /* Written by the attaching thread before `attached` is released. */
    record_stream streams[STREAM_COUNT];
    atomic_bool attached;
    atomic_bool detached;
    atomic_uint_fast64_t dropped[MOAT_RECORD_DROP_COUNT]; /* written by the worker only */
    /* Set by the recorder's thread when the file reached max_bytes or the
     * pipeline failed: the tap stops queueing. */
    atomic_bool finished;
    /* Cleared by the recorder's thread once the file is closed
     * (moat_recordings_active). */
    atomic_bool open;
    moat_record_outcome *outcome; /* one reference */
    /* Recorder thread only. */
    GThread *thread;
    GstElement *pipeline;
    bool playing;
    bool failed;
    uint64_t max_bytes; /* 0: no limit */
    uint64_t pushed;    /* bytes of RTP pushed into the pipeline */
};

/* The stream (STREAM_AUDIO or STREAM_VIDEO) whose codec has this payload
 * type, or -1. Any thread, once the tap attached. */
int moat_recorder_stream_of(moat_recorder *recorder, uint8_t payload_type);

/* The index of a codec the recorder can remux on this installation, or -1.
 * Any thread, after the first recorder was made. */
int moat_recorder_known_codec(const char *codec);

#endif
