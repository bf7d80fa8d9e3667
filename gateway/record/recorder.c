/* The recorder: its thread and its GStreamer pipeline, and the outcome it
 * leaves (a failure, why). Nothing here runs on the packet path: the tap
 * the media worker calls is recorder_tap.c. */
#include "record/recorder.h"

#include "base/log.h"
#include "record/record_dir.h"
#include "record/record_ring.h"
#include "record/recorder_private.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define QUEUE_SLOTS  1024
#define IDLE_WAIT_US 5000
/* Both within MOAT_RECORDER_FINISH_MAX_MS (recorder.h). */
#define FINISH_TIMEOUT    (5 * GST_SECOND)
#define JITTER_LATENCY_MS 300
/* A failed pipeline's muxer gets this long to rewrite the file's header. */
#define FAILED_FINISH_TIMEOUT (2 * GST_SECOND)

/* Recorders whose thread runs (their files open or not), for /metrics and
 * shutdown. Touched by the control thread and recorder threads, never by a
 * media worker. */
static GMutex active_lock;
static GList *active_recorders;
static uint64_t finished_dropped[MOAT_RECORD_DROP_COUNT];

/* Files made by this process (the counter in their names), and recordings
 * that could not be written, by failure (any thread). */
static atomic_uint file_counter;
static atomic_uint_fast64_t failures[MOAT_RECORD_FAILURE_COUNT];
static atomic_uint_fast64_t files_at_size_limit;

/* Recorder thread: the file cannot be written, for `failure` (counted once
 * per recorder): the recording ends, and its outcome says why. */
static void recorder_failed(moat_recorder *recorder, moat_record_failure failure)
{
    if (recorder->failed)
        return;
    recorder->failed = true;
    atomic_fetch_add(&failures[failure], 1);
    atomic_store(&recorder->outcome->failure, (int)failure);
    atomic_store_explicit(&recorder->finished, true, memory_order_relaxed);
}

const char *moat_record_failure_name(moat_record_failure failure)
{
    switch (failure) {
    case MOAT_RECORD_FAILURE_CREATE:
        return "create";
    case MOAT_RECORD_FAILURE_WRITE:
        return "write";
    case MOAT_RECORD_FAILURE_SPACE:
        return "no_space";
    default:
        return "";
    }
}

/* ---- the outcome: any thread ---- */

moat_record_outcome *moat_recorder_outcome(moat_recorder *recorder)
{
    return g_atomic_rc_box_acquire(recorder->outcome);
}

void moat_record_outcome_unref(moat_record_outcome *outcome)
{
    if (outcome)
        g_atomic_rc_box_release(outcome);
}

moat_record_failure moat_record_outcome_failure(const moat_record_outcome *outcome)
{
    return (moat_record_failure)atomic_load(&outcome->failure);
}

static const struct {
    const char *codec, *depayloader, *chain;
} known_codecs[] = {
    {"opus", "rtpopusdepay", "rtpopusdepay ! opusparse"},
    {"VP8", "rtpvp8depay", "rtpvp8depay"},
    {"VP9", "rtpvp9depay", "rtpvp9depay"},
    {"H264", "rtph264depay", "rtph264depay ! h264parse"},
    {"AV1", "rtpav1depay", "rtpav1depay ! av1parse"},
};
#define KNOWN_CODECS G_N_ELEMENTS(known_codecs)

/* Which of known_codecs this GStreamer installation can depayload (Debian 12
 * has no rtpav1depay, for one). Set once, before any recorder exists. */
static bool codec_available[KNOWN_CODECS];

int moat_recorder_known_codec(const char *codec)
{
    for (size_t i = 0; i < KNOWN_CODECS; i++) {
        if (g_ascii_strcasecmp(codec, known_codecs[i].codec) == 0)
            return codec_available[i] ? (int)i : -1;
    }
    return -1;
}

static void init_gstreamer(void)
{
    static gsize done = 0;
    if (g_once_init_enter(&done)) {
        gst_init(NULL, NULL);
        for (size_t i = 0; i < KNOWN_CODECS; i++) {
            GstElementFactory *factory = gst_element_factory_find(known_codecs[i].depayloader);
            codec_available[i] = factory != NULL;
            if (factory)
                gst_object_unref(factory);
        }
        g_once_init_leave(&done, 1);
    }
}

/* ---- the recorder's thread ---- */

static char *pipeline_description(moat_recorder *recorder)
{
    GString *text = g_string_new("matroskamux name=mux ! filesink name=sink");
    for (int i = 0; i < STREAM_COUNT; i++) {
        if (recorder->streams[i].used)
            g_string_append_printf(
                text,
                " appsrc name=src%d format=time is-live=true do-timestamp=false"
                " ! rtpjitterbuffer latency=%d ! %s ! mux.",
                i, JITTER_LATENCY_MS,
                known_codecs[moat_recorder_known_codec(recorder->streams[i].codec.codec)].chain);
    }
    return g_string_free(text, FALSE);
}

static GstCaps *rtp_caps(const moat_tap_codec *codec)
{
    char *name = g_ascii_strup(codec->codec, -1);
    GstCaps *caps =
        gst_caps_new_simple("application/x-rtp", "media", G_TYPE_STRING,
                            codec->kind == MOAT_MEDIA_KIND_AUDIO ? "audio" : "video", "clock-rate",
                            G_TYPE_INT, (int)codec->clock_rate, "encoding-name", G_TYPE_STRING,
                            name, "payload", G_TYPE_INT, (int)codec->payload_type, NULL);
    if (codec->kind == MOAT_MEDIA_KIND_AUDIO)
        gst_caps_set_simple(caps, "encoding-params", G_TYPE_STRING, "2", NULL);
    g_free(name);
    return caps;
}

static int build_pipeline(moat_recorder *recorder)
{
    if (!recorder->streams[STREAM_AUDIO].used && !recorder->streams[STREAM_VIDEO].used) {
        moat_log_warn("record", "%s: no codec the recorder can remux", recorder->name);
        return -1;
    }
    char *description = pipeline_description(recorder);
    GError *gerror = NULL;
    recorder->pipeline = gst_parse_launch(description, &gerror);
    g_free(description);
    if (!recorder->pipeline || gerror) {
        moat_log_warn("record", "%s: pipeline: %s", recorder->name, gerror ? gerror->message : "?");
        g_clear_error(&gerror);
        return -1;
    }
    GstElement *sink = gst_bin_get_by_name(GST_BIN(recorder->pipeline), "sink");
    g_object_set(sink, "location", recorder->path, NULL);
    gst_object_unref(sink);
    for (int i = 0; i < STREAM_COUNT; i++) {
        if (!recorder->streams[i].used)
            continue;
        char name[8];
        snprintf(name, sizeof name, "src%d", i);
        GstElement *src = gst_bin_get_by_name(GST_BIN(recorder->pipeline), name);
        GstCaps *caps = rtp_caps(&recorder->streams[i].codec);
        /* A stalled file (slow disk) must not grow memory: past 8 MiB the
         * newest buffers are dropped here too. */
        g_object_set(src, "caps", caps, "stream-type", GST_APP_STREAM_TYPE_STREAM, "max-bytes",
                     (guint64)(8 << 20), "leaky-type", GST_APP_LEAKY_TYPE_UPSTREAM, NULL);
        gst_caps_unref(caps);
        recorder->streams[i].src = src; /* reference owned */
    }
    /* Running time is the worker's monotonic arrival clock, from the first packet. */
    GstClock *clock = gst_system_clock_obtain();
    gst_pipeline_use_clock(GST_PIPELINE(recorder->pipeline), clock);
    gst_object_unref(clock);
    gst_element_set_start_time(recorder->pipeline, GST_CLOCK_TIME_NONE);
    return 0;
}

/* What one error message means: a full disk (filesink's ENOSPC), or any
 * other failure to write. */
static moat_record_failure failure_of(GstMessage *message, char *text, size_t text_size)
{
    GError *gerror = NULL;
    gst_message_parse_error(message, &gerror, NULL);
    bool no_space =
        gerror && g_error_matches(gerror, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NO_SPACE_LEFT);
    g_strlcpy(text, gerror ? gerror->message : "error", text_size);
    g_clear_error(&gerror);
    return no_space ? MOAT_RECORD_FAILURE_SPACE : MOAT_RECORD_FAILURE_WRITE;
}

/* The pipeline's errors so far: the first is logged; a full disk among them
 * makes the failure no_space (the elements upstream of the file report the
 * same failure as a data flow error after it). */
static void check_bus(moat_recorder *recorder)
{
    GstBus *bus = gst_element_get_bus(recorder->pipeline);
    moat_record_failure failure = MOAT_RECORD_FAILURE_NONE;
    GstMessage *message;
    while ((message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR))) {
        char text[256];
        moat_record_failure this_one = failure_of(message, text, sizeof text);
        gst_message_unref(message);
        if (failure == MOAT_RECORD_FAILURE_NONE)
            moat_log_warn("record", "%s: %s (%s); the recording ends", recorder->name, text,
                          moat_record_failure_name(this_one));
        if (failure != MOAT_RECORD_FAILURE_SPACE)
            failure = this_one;
    }
    gst_object_unref(bus);
    if (failure != MOAT_RECORD_FAILURE_NONE)
        recorder_failed(recorder, failure);
}

/* The file reached max_bytes: counted and logged once; the recorder's loop
 * finishes it and the tap stops queueing. */
static bool reached_size_limit(moat_recorder *recorder, size_t length)
{
    if (atomic_load_explicit(&recorder->finished, memory_order_relaxed))
        return true;
    if (!recorder->max_bytes || recorder->pushed + length <= recorder->max_bytes)
        return false;
    atomic_store_explicit(&recorder->finished, true, memory_order_relaxed);
    atomic_fetch_add(&files_at_size_limit, 1);
    moat_log_warn("record", "%s: %s reached [record] max_file_mib; finished", recorder->name,
                  recorder->path);
    return true;
}

static void push_packet(moat_recorder *recorder, const moat_record_slot *slot)
{
    int stream = moat_recorder_stream_of(recorder, slot->data[1] & 0x7f);
    if (stream < 0 || !recorder->pipeline || recorder->failed ||
        reached_size_limit(recorder, slot->length))
        return;
    recorder->pushed += slot->length;
    GstClockTime arrival = (GstClockTime)slot->arrival_us * GST_USECOND;
    if (!recorder->playing) {
        gst_element_set_base_time(recorder->pipeline, arrival);
        if (gst_element_set_state(recorder->pipeline, GST_STATE_PLAYING) ==
            GST_STATE_CHANGE_FAILURE) {
            moat_log_warn("record", "%s: cannot start writing %s", recorder->name, recorder->path);
            recorder_failed(recorder, MOAT_RECORD_FAILURE_WRITE);
            return;
        }
        recorder->playing = true;
        moat_log_info("record", "%s: recording to %s", recorder->name, recorder->path);
    }
    GstClockTime base = gst_element_get_base_time(recorder->pipeline);
    GstBuffer *buffer = gst_buffer_new_memdup(slot->data, slot->length);
    GST_BUFFER_DTS(buffer) = arrival > base ? arrival - base : 0;
    gst_app_src_push_buffer(GST_APP_SRC(recorder->streams[stream].src), buffer);
}

static bool is_empty(const char *path)
{
    GStatBuf st;
    return g_stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
}

static gboolean send_eos(GstElement *element, GstPad *pad, gpointer data)
{
    (void)element;
    (void)data;
    gst_pad_send_event(pad, gst_event_new_eos());
    return TRUE;
}

/* Up to `timeout` for the pipeline's EOS (the muxer finished the file); an
 * error first (the disk filled up with the last of it) fails the recording
 * as any failure does. */
static bool reached_eos(moat_recorder *recorder, GstClockTime timeout)
{
    GstBus *bus = gst_element_get_bus(recorder->pipeline);
    GstMessage *message = gst_bus_timed_pop_filtered(
        bus, timeout, recorder->failed ? GST_MESSAGE_EOS : GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    gst_object_unref(bus);
    bool eos = message && GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS;
    if (message && !eos) {
        char text[256];
        moat_record_failure failure = failure_of(message, text, sizeof text);
        moat_log_warn("record", "%s: %s (%s)", recorder->name, text,
                      moat_record_failure_name(failure));
        recorder_failed(recorder, failure);
    }
    if (message)
        gst_message_unref(message);
    return eos;
}

/* EOS, then a while for the muxer to finish the file (cues, the header's
 * duration). A working pipeline gets it at its sources, so what the jitter
 * buffers hold is written too. A failed one's streaming threads stopped at
 * the error, so it goes into the muxer's inputs directly, with less time:
 * the header is rewritten in place if the sink can still seek and write (a
 * full disk still takes the bytes it had). */
static void end_stream(moat_recorder *recorder)
{
    if (!recorder->failed) {
        for (int i = 0; i < STREAM_COUNT; i++) {
            if (recorder->streams[i].src)
                gst_app_src_end_of_stream(GST_APP_SRC(recorder->streams[i].src));
        }
        if (reached_eos(recorder, FINISH_TIMEOUT))
            return;
    }
    if (recorder->failed) {
        GstElement *mux = gst_bin_get_by_name(GST_BIN(recorder->pipeline), "mux");
        gst_element_foreach_sink_pad(mux, send_eos, NULL);
        gst_object_unref(mux);
        if (reached_eos(recorder, FAILED_FINISH_TIMEOUT))
            return;
    }
    moat_log_warn("record", "%s: %s may be incomplete", recorder->name, recorder->path);
}

static void close_pipeline(moat_recorder *recorder)
{
    /* A pipeline that failed before the muxer wrote anything is not asked
     * to write its header now. */
    if (recorder->playing && !(recorder->failed && is_empty(recorder->path)))
        end_stream(recorder);
    gst_element_set_state(recorder->pipeline, GST_STATE_NULL);
    for (int i = 0; i < STREAM_COUNT; i++) {
        if (recorder->streams[i].src)
            gst_object_unref(recorder->streams[i].src);
        recorder->streams[i].src = NULL;
    }
    gst_object_unref(recorder->pipeline);
    recorder->pipeline = NULL;
    /* The pipeline failed before the muxer wrote anything: no empty file
     * stays behind either. */
    if (recorder->failed && is_empty(recorder->path))
        g_unlink(recorder->path);
}

/* Closes the file, once: what was written is finished, the pipeline freed,
 * a file with nothing in it removed. */
static void finish_file(moat_recorder *recorder)
{
    if (!atomic_load(&recorder->open))
        return;
    /* Nothing was ever written: the empty file made at start goes. */
    if (!recorder->playing)
        g_unlink(recorder->path);
    if (recorder->pipeline)
        close_pipeline(recorder);
    atomic_store(&recorder->open, false);
}

static void recorder_free(moat_recorder *recorder)
{
    g_mutex_lock(&active_lock);
    active_recorders = g_list_remove(active_recorders, recorder);
    for (int i = 0; i < MOAT_RECORD_DROP_COUNT; i++)
        finished_dropped[i] += atomic_load_explicit(&recorder->dropped[i], memory_order_relaxed);
    g_mutex_unlock(&active_lock);
    moat_log_info("record", "%s: recording ended (%s)", recorder->name, recorder->path);
    moat_record_outcome_unref(recorder->outcome);
    moat_record_ring_free(recorder->ring);
    g_free(recorder->path);
    g_free(recorder->name);
    g_free(recorder);
}

static gpointer recorder_main(gpointer data)
{
    moat_recorder *recorder = data;
    while (!atomic_load_explicit(&recorder->attached, memory_order_acquire) &&
           !atomic_load_explicit(&recorder->detached, memory_order_acquire))
        g_usleep(IDLE_WAIT_US);
    if (atomic_load_explicit(&recorder->attached, memory_order_acquire) &&
        build_pipeline(recorder) != 0)
        recorder_failed(recorder, MOAT_RECORD_FAILURE_WRITE);
    for (;;) {
        /* Read `detached` before draining, so nothing queued before it is lost. */
        bool detached = atomic_load_explicit(&recorder->detached, memory_order_acquire);
        const moat_record_slot *slot;
        while ((slot = moat_record_ring_peek(recorder->ring))) {
            push_packet(recorder, slot);
            moat_record_ring_release(recorder->ring);
        }
        if (detached)
            break;
        if (recorder->pipeline && recorder->playing)
            check_bus(recorder);
        /* At its size limit or failed: the file is finished now, not at
         * the DELETE. */
        if (atomic_load_explicit(&recorder->finished, memory_order_relaxed))
            finish_file(recorder);
        g_usleep(IDLE_WAIT_US);
    }
    finish_file(recorder);
    recorder_free(recorder);
    return NULL;
}

/* ---- control thread ---- */

/* Creates <dir>/<name>-<UTC start>-<counter>.mkv with O_EXCL (an existing
 * file is never truncated: the next counter is tried) and returns its file
 * name, or NULL with errno set. */
static char *create_file(const char *dir, const char *name)
{
    char safe[64];
    size_t n = 0;
    for (const char *c = name; *c && n < sizeof safe - 1; c++)
        safe[n++] = isalnum((unsigned char)*c) || *c == '-' || *c == '_' ? *c : '_';
    safe[n] = '\0';
    GDateTime *now = g_date_time_new_now_utc();
    char *stamp = g_date_time_format(now, "%Y%m%dT%H%M%SZ");
    g_date_time_unref(now);
    char *file = NULL;
    for (int attempt = 0; attempt < 1000 && !file; attempt++) {
        unsigned counter = atomic_fetch_add(&file_counter, 1) + 1;
        char *candidate = g_strdup_printf("%s-%s-%u.mkv", safe, stamp, counter);
        char *path = g_build_filename(dir, candidate, NULL);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
        int e = errno;
        g_free(path);
        if (fd >= 0) {
            close(fd);
            file = candidate;
            break;
        }
        g_free(candidate);
        errno = e;
        if (e != EEXIST)
            break;
    }
    g_free(stamp);
    return file;
}

moat_recorder *moat_recorder_new(const char *dir, const char *name,
                                 const moat_recorder_limits *limits, char **file, char *error,
                                 size_t error_size, moat_record_failure *failure)
{
    *failure = MOAT_RECORD_FAILURE_NONE;
    if (!dir || !*dir) {
        snprintf(error, error_size, "recording is off: [record] dir is not set");
        return NULL;
    }
    if (!g_utf8_validate(dir, -1, NULL)) {
        snprintf(error, error_size, "[record] dir is not valid UTF-8");
        return NULL;
    }
    char *created = NULL;
    bool usable = g_mkdir_with_parents(dir, 0750) == 0 && g_access(dir, W_OK) == 0;
    if (usable && !moat_record_dir_enough_space(dir, limits->min_free_bytes, error, error_size)) {
        *failure = MOAT_RECORD_FAILURE_SPACE;
        atomic_fetch_add(&failures[MOAT_RECORD_FAILURE_SPACE], 1);
        moat_log_warn("record", "%s: not recorded: %s", name, error);
        return NULL;
    }
    if (!usable || !(created = create_file(dir, name))) {
        *failure = MOAT_RECORD_FAILURE_CREATE;
        atomic_fetch_add(&failures[MOAT_RECORD_FAILURE_CREATE], 1);
        /* The folder's path is the server's business, not the client's. */
        snprintf(error, error_size, "the recording folder cannot be written: %s",
                 g_strerror(errno));
        moat_log_warn("record", "%s: cannot create a file in %s: %s", name, dir, g_strerror(errno));
        return NULL;
    }
    init_gstreamer();
    moat_recorder *recorder = g_new0(moat_recorder, 1);
    recorder->name = g_strdup(name);
    recorder->path = g_build_filename(dir, created, NULL);
    recorder->ring = moat_record_ring_new(QUEUE_SLOTS);
    atomic_init(&recorder->attached, false);
    atomic_init(&recorder->detached, false);
    for (int i = 0; i < MOAT_RECORD_DROP_COUNT; i++)
        atomic_init(&recorder->dropped[i], 0);
    atomic_init(&recorder->finished, false);
    atomic_init(&recorder->open, true);
    recorder->outcome = g_atomic_rc_box_new0(moat_record_outcome);
    atomic_init(&recorder->outcome->failure, MOAT_RECORD_FAILURE_NONE);
    recorder->max_bytes = limits->max_file_bytes;
    *file = created;
    g_mutex_lock(&active_lock);
    active_recorders = g_list_prepend(active_recorders, recorder);
    g_mutex_unlock(&active_lock);
    recorder->thread = g_thread_new("moat-record", recorder_main, recorder);
    g_thread_unref(recorder->thread); /* it frees the recorder when done */
    return recorder;
}

uint64_t moat_recorder_failures(moat_record_failure failure)
{
    return (unsigned)failure < MOAT_RECORD_FAILURE_COUNT ? atomic_load(&failures[failure]) : 0;
}

uint64_t moat_recorder_files_at_size_limit(void)
{
    return atomic_load(&files_at_size_limit);
}

unsigned moat_recorder_active(void)
{
    unsigned n = 0;
    g_mutex_lock(&active_lock);
    for (GList *l = active_recorders; l; l = l->next) {
        moat_recorder *recorder = l->data;
        n += atomic_load(&recorder->open);
    }
    g_mutex_unlock(&active_lock);
    return n;
}

/* Recorders whose thread still runs, open file or not. */
static unsigned recorders_running(void)
{
    g_mutex_lock(&active_lock);
    unsigned n = g_list_length(active_recorders);
    g_mutex_unlock(&active_lock);
    return n;
}

uint64_t moat_recorder_dropped_total(moat_record_drop reason)
{
    if ((unsigned)reason >= MOAT_RECORD_DROP_COUNT)
        return 0;
    g_mutex_lock(&active_lock);
    uint64_t total = finished_dropped[reason];
    for (GList *l = active_recorders; l; l = l->next) {
        moat_recorder *recorder = l->data;
        total += atomic_load_explicit(&recorder->dropped[reason], memory_order_relaxed);
    }
    g_mutex_unlock(&active_lock);
    return total;
}

void moat_recorder_wait_idle(unsigned timeout_ms)
{
    for (unsigned waited = 0; waited < timeout_ms && recorders_running() > 0; waited += 10)
        g_usleep(10000);
}
