/* The streaming thread of one transcoding pipeline, made by Moat before the
 * pipeline starts. GStreamer's default task pool makes the thread when the
 * pipeline goes to PLAYING, and when that fails (the process or its user
 * at its thread limit) it waits forever in gst_task_join for the task that
 * never ran (GStreamer 1.22): the control thread hung. A pipeline whose
 * appsrc task runs on this pool never asks for a thread: the pool's one
 * thread was made (g_thread_try_new) or the transcoder was refused before
 * anything started.
 *
 * The pool runs one task function at a time on its thread; a push while
 * one runs waits for it to return (a task restarted just as it ends).
 * Unref'd (finalized) on the control thread after the pipeline stopped:
 * the thread is told to end and joined. */
#ifndef MOAT_TRANSCODE_TASK_POOL_H
#define MOAT_TRANSCODE_TASK_POOL_H

#include <gst/gst.h>
#include <stddef.h>

/* A pool with its thread running, or NULL with a message. */
GstTaskPool *moat_transcode_task_pool_new(char *error, size_t error_size);

/* Bus sync handler work: a stream-status CREATE message for a task of
 * `owner` puts that task on `pool` (other messages and owners: nothing). */
void moat_transcode_task_pool_adopt(GstTaskPool *pool, GstMessage *message,
                                    const GstElement *owner);

#endif
