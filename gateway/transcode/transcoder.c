/* The transcoder of one call direction: its input queue (filled by the
 * media worker, never blocking), its feeding thread (GStreamer input and
 * telephone-event re-stamping; it sleeps until the worker pushes or the
 * pipeline posts a message) and its output stage (appsink samples and
 * events renumbered into one sequence, SSRC set). */
#include "transcode/transcoder.h"

#include "record/record_ring.h"
#include "rtp/rtp_bytes.h"
#include "rtp/rtp_packet.h"
#include "transcode/transcode_meter.h"
#include "transcode/transcode_pipeline.h"
#include "transcode/transcode_task_pool.h"
#include "transcode/transcode_timeline.h"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* 1.3 s of 20 ms packets: a backlog builds only while the pipeline runs
 * slower than real time, and beyond this it is better dropped than late. */
#define QUEUE_SLOTS 64

typedef struct {
    uint8_t payload_type, dtmf_payload_type;
    uint32_t dtmf_clock;
    unsigned bytes_per_ms; /* the audio's, for the meter */
} side;

struct moat_transcoder {
    side in, out;
    moat_transcoder_output_fn output_fn;
    void *context;
    moat_record_ring *ring;
    /* Counters: each written by one thread, read by any. */
    atomic_uint_fast64_t packets_in, dropped_queue_full, dropped_invalid; /* pusher */
    atomic_uint_fast64_t dropped_too_fast;                                /* pusher */
    atomic_uint_fast64_t dropped_late, dtmf_events, dropped_dtmf;         /* feeder */
    atomic_uint_fast64_t packets_out;                                     /* under output_lock */
    atomic_bool failed, stop;
    /* The feeder's wake-up. A pusher counts each packet in `pushed` and
     * then looks at `asleep`; the feeder sets `asleep` and then compares
     * `pushed` with what it counted before it drained the queue. Both
     * sequentially consistent, so either the pusher sees the feeder asleep
     * and writes the eventfd, or the feeder sees the new packet and does
     * not sleep. free writes the eventfd unconditionally. */
    atomic_uint_fast64_t pushed;
    atomic_bool asleep;
    int wake_fd;
    /* Pushing thread only. */
    moat_transcode_meter meter;
    /* Feeding thread only. */
    GThread *feeder;
    moat_transcode_timeline timeline;
    /* Output stage: the streaming thread and the feeder, under output_lock. */
    GMutex output_lock;
    uint32_t output_ssrc;
    uint16_t next_sequence;
    /* Control thread (new/free). */
    GstElement *pipeline, *src, *sink;
    GstTaskPool *task_pool; /* the appsrc task's thread, made up front */
};

/* Live transcoders and what freed ones counted, for /metrics. Touched by
 * the control thread only (new, free, totals), never on the packet path. */
static GMutex totals_lock;
static GList *live_transcoders;
static moat_transcoder_stats freed_totals;

/* ---- output stage: streaming thread and feeder ---- */

static void emit(moat_transcoder *transcoder, uint8_t *packet, size_t length)
{
    g_mutex_lock(&transcoder->output_lock);
    moat_rtp_set_sequence(packet, transcoder->next_sequence++);
    moat_rtp_set_ssrc(packet, transcoder->output_ssrc);
    transcoder->output_fn(transcoder->context, packet, length);
    atomic_fetch_add_explicit(&transcoder->packets_out, 1, memory_order_relaxed);
    g_mutex_unlock(&transcoder->output_lock);
}

static GstFlowReturn on_sample(GstAppSink *sink, gpointer data)
{
    moat_transcoder *transcoder = data;
    GstSample *sample = gst_app_sink_pull_sample(sink);
    if (!sample)
        return GST_FLOW_FLUSHING;
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    uint8_t packet[MOAT_RECORD_RING_PACKET_MAX];
    size_t length = buffer ? gst_buffer_get_size(buffer) : 0;
    if (length >= MOAT_RTP_FIXED_HEADER_SIZE && length <= sizeof packet) {
        gst_buffer_extract(buffer, 0, packet, length);
        /* out_base and out_clock are fixed before the pipeline starts. */
        uint32_t timestamp = moat_transcode_frame_timestamp(
            transcoder->timeline.out_base, transcoder->timeline.out_clock, moat_rd32(packet + 4));
        moat_rtp_set_timestamp(packet, timestamp);
        emit(transcoder, packet, length);
    }
    gst_sample_unref(sample);
    return GST_FLOW_OK;
}

/* ---- feeding thread ---- */

static void feed_event(moat_transcoder *transcoder, const uint8_t *packet,
                       const moat_rtp_header *header)
{
    if (!transcoder->out.dtmf_payload_type) {
        atomic_fetch_add_explicit(&transcoder->dropped_dtmf, 1, memory_order_relaxed);
        return;
    }
    uint8_t event[MOAT_TRANSCODE_EVENT_PACKET];
    uint32_t timestamp = moat_transcode_timeline_event(&transcoder->timeline, header->timestamp);
    size_t length = moat_transcode_event_packet(
        packet + header->payload_offset, header->payload_length, header->marker,
        transcoder->out.dtmf_payload_type, 0, timestamp, transcoder->output_ssrc,
        transcoder->in.dtmf_clock, transcoder->out.dtmf_clock, event);
    if (!length) {
        atomic_fetch_add_explicit(&transcoder->dropped_dtmf, 1, memory_order_relaxed);
        return;
    }
    emit(transcoder, event, length);
    atomic_fetch_add_explicit(&transcoder->dtmf_events, 1, memory_order_relaxed);
}

static void feed_audio(moat_transcoder *transcoder, const uint8_t *packet, size_t length,
                       const moat_rtp_header *header)
{
    uint64_t time_ns;
    if (!moat_transcode_timeline_audio(&transcoder->timeline, header->timestamp, &time_ns)) {
        atomic_fetch_add_explicit(&transcoder->dropped_late, 1, memory_order_relaxed);
        return;
    }
    GstBuffer *buffer = gst_buffer_new_memdup(packet, length);
    GST_BUFFER_PTS(buffer) = time_ns;
    GST_BUFFER_DTS(buffer) = time_ns;
    /* Waits while the pipeline is behind; returns at once once it stops. */
    gst_app_src_push_buffer(GST_APP_SRC(transcoder->src), buffer);
}

static void feed(moat_transcoder *transcoder, const moat_record_slot *slot)
{
    moat_rtp_header header;
    if (moat_rtp_parse(slot->data, slot->length, &header) != MOAT_RTP_OK)
        return; /* push checked it */
    if (header.payload_type == transcoder->in.payload_type)
        feed_audio(transcoder, slot->data, slot->length, &header);
    else
        feed_event(transcoder, slot->data, &header);
}

static void check_bus(moat_transcoder *transcoder, GstBus *bus)
{
    GstMessage *message;
    while ((message = gst_bus_pop(bus))) {
        if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR)
            atomic_store_explicit(&transcoder->failed, true, memory_order_relaxed);
        gst_message_unref(message);
    }
}

static bool stopping(moat_transcoder *transcoder)
{
    return atomic_load_explicit(&transcoder->stop, memory_order_acquire);
}

/* Until a packet is pushed after the `seen`th, the pipeline posts a message
 * or free stops it. */
static void feeder_wait(moat_transcoder *transcoder, const GPollFD *bus_fd, uint64_t seen)
{
    atomic_store(&transcoder->asleep, true);
    if (atomic_load(&transcoder->pushed) == seen && !stopping(transcoder)) {
        struct pollfd fds[2] = {{.fd = transcoder->wake_fd, .events = POLLIN},
                                {.fd = bus_fd->fd, .events = POLLIN}};
        if (poll(fds, 2, -1) > 0 && (fds[0].revents & POLLIN)) {
            uint64_t count;
            (void)!read(transcoder->wake_fd, &count, sizeof count);
        }
    }
    atomic_store(&transcoder->asleep, false);
}

static gpointer feeder_main(gpointer data)
{
    moat_transcoder *transcoder = data;
    GstBus *bus = gst_element_get_bus(transcoder->pipeline);
    GPollFD bus_fd;
    gst_bus_get_pollfd(bus, &bus_fd);
    while (!stopping(transcoder)) {
        uint64_t seen = atomic_load(&transcoder->pushed);
        const moat_record_slot *slot;
        while ((slot = moat_record_ring_peek(transcoder->ring)) && !stopping(transcoder)) {
            if (!atomic_load_explicit(&transcoder->failed, memory_order_relaxed))
                feed(transcoder, slot);
            moat_record_ring_release(transcoder->ring);
        }
        check_bus(transcoder, bus);
        feeder_wait(transcoder, &bus_fd, seen);
    }
    gst_object_unref(bus);
    return NULL;
}

static void write_wake(moat_transcoder *transcoder)
{
    uint64_t one = 1;
    (void)!write(transcoder->wake_fd, &one, sizeof one);
}

/* The pushing thread, after a packet went into the queue. */
static void wake_feeder(moat_transcoder *transcoder)
{
    atomic_fetch_add(&transcoder->pushed, 1);
    if (atomic_load(&transcoder->asleep) && atomic_exchange(&transcoder->asleep, false))
        write_wake(transcoder);
}

/* ---- the media worker ---- */

void moat_transcoder_push(moat_transcoder *transcoder, const uint8_t *packet, size_t length,
                          int64_t arrival_us)
{
    moat_rtp_header header;
    if (moat_rtp_parse(packet, length, &header) != MOAT_RTP_OK || header.payload_length == 0 ||
        (header.payload_type != transcoder->in.payload_type &&
         (!transcoder->in.dtmf_payload_type ||
          header.payload_type != transcoder->in.dtmf_payload_type))) {
        atomic_fetch_add_explicit(&transcoder->dropped_invalid, 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&transcoder->packets_in, 1, memory_order_relaxed);
    if (header.payload_type == transcoder->in.payload_type &&
        !moat_transcode_meter_admit(&transcoder->meter, arrival_us,
                                    moat_transcode_payload_us(transcoder->in.bytes_per_ms,
                                                              packet + header.payload_offset,
                                                              header.payload_length))) {
        atomic_fetch_add_explicit(&transcoder->dropped_too_fast, 1, memory_order_relaxed);
        return;
    }
    if (!moat_record_ring_push(transcoder->ring, packet, length, 0)) {
        atomic_fetch_add_explicit(&transcoder->dropped_queue_full, 1, memory_order_relaxed);
        return;
    }
    wake_feeder(transcoder);
}

/* ---- any thread ---- */

bool moat_transcoder_supports(const char *name)
{
    return moat_transcode_codec_find(name) != NULL;
}

void moat_transcoder_get_stats(const moat_transcoder *transcoder, moat_transcoder_stats *stats)
{
    moat_transcoder *t = (moat_transcoder *)transcoder;
    *stats = (moat_transcoder_stats){
        .packets_in = atomic_load_explicit(&t->packets_in, memory_order_relaxed),
        .packets_out = atomic_load_explicit(&t->packets_out, memory_order_relaxed),
        .dropped_queue_full = atomic_load_explicit(&t->dropped_queue_full, memory_order_relaxed),
        .dropped_invalid = atomic_load_explicit(&t->dropped_invalid, memory_order_relaxed),
        .dropped_too_fast = atomic_load_explicit(&t->dropped_too_fast, memory_order_relaxed),
        .dtmf_events = atomic_load_explicit(&t->dtmf_events, memory_order_relaxed),
        .dropped_late = atomic_load_explicit(&t->dropped_late, memory_order_relaxed),
        .dropped_dtmf = atomic_load_explicit(&t->dropped_dtmf, memory_order_relaxed),
        .failed = atomic_load_explicit(&t->failed, memory_order_relaxed),
    };
}

/* ---- control thread ---- */

static void add_stats(moat_transcoder_stats *sum, const moat_transcoder_stats *stats)
{
    sum->packets_in += stats->packets_in;
    sum->packets_out += stats->packets_out;
    sum->dropped_queue_full += stats->dropped_queue_full;
    sum->dropped_invalid += stats->dropped_invalid;
    sum->dropped_too_fast += stats->dropped_too_fast;
    sum->dtmf_events += stats->dtmf_events;
    sum->dropped_late += stats->dropped_late;
    sum->dropped_dtmf += stats->dropped_dtmf;
}

unsigned moat_transcoder_live(void)
{
    g_mutex_lock(&totals_lock);
    unsigned live = g_list_length(live_transcoders);
    g_mutex_unlock(&totals_lock);
    return live;
}

void moat_transcoder_totals(moat_transcoder_stats *totals, unsigned *live)
{
    g_mutex_lock(&totals_lock);
    *totals = freed_totals;
    *live = 0;
    for (GList *l = live_transcoders; l; l = l->next) {
        moat_transcoder_stats stats;
        moat_transcoder_get_stats(l->data, &stats);
        add_stats(totals, &stats);
        totals->failed = totals->failed || stats.failed;
        (*live)++;
    }
    g_mutex_unlock(&totals_lock);
}

static side side_of(const moat_transcoder_codec *codec, const moat_transcode_codec *known)
{
    return (side){
        .payload_type = codec->payload_type & 0x7f,
        .dtmf_payload_type = codec->dtmf_payload_type & 0x7f,
        .dtmf_clock = codec->dtmf_clock_rate ? codec->dtmf_clock_rate : known->rtp_clock,
        .bytes_per_ms = known->bytes_per_ms,
    };
}

static bool check_codecs(const moat_transcoder_codec *input, const moat_transcoder_codec *output,
                         const moat_transcode_codec **in, const moat_transcode_codec **out,
                         char *error, size_t error_size)
{
    if (!input || !output) {
        snprintf(error, error_size, "transcoder: missing codec");
        return false;
    }
    *in = moat_transcode_codec_find(input->name);
    *out = moat_transcode_codec_find(output->name);
    if (!*in || !*out) {
        snprintf(error, error_size, "transcoder: cannot transcode %s to %s",
                 input->name ? input->name : "(none)", output->name ? output->name : "(none)");
        return false;
    }
    return true;
}

static moat_transcoder *transcoder_alloc(const moat_transcoder_codec *input,
                                         const moat_transcoder_codec *output,
                                         const moat_transcode_codec *in,
                                         const moat_transcode_codec *out, uint32_t output_ssrc)
{
    moat_transcoder *transcoder = g_new0(moat_transcoder, 1);
    transcoder->in = side_of(input, in);
    transcoder->out = side_of(output, out);
    transcoder->output_ssrc = output_ssrc;
    transcoder->next_sequence = (uint16_t)g_random_int();
    transcoder->ring = moat_record_ring_new(QUEUE_SLOTS);
    transcoder->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    g_mutex_init(&transcoder->output_lock);
    moat_transcode_meter_init(&transcoder->meter);
    moat_transcode_timeline_init(&transcoder->timeline, in->rtp_clock, out->rtp_clock,
                                 g_random_int());
    return transcoder;
}

static void transcoder_release(moat_transcoder *transcoder)
{
    if (transcoder->pipeline) {
        GstBus *bus = gst_element_get_bus(transcoder->pipeline);
        gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
        gst_object_unref(bus);
    }
    if (transcoder->src)
        gst_object_unref(transcoder->src);
    if (transcoder->sink)
        gst_object_unref(transcoder->sink);
    if (transcoder->pipeline)
        gst_object_unref(transcoder->pipeline);
    if (transcoder->task_pool)
        gst_object_unref(transcoder->task_pool); /* after the pipeline: joins its thread */
    moat_record_ring_free(transcoder->ring);
    if (transcoder->wake_fd >= 0)
        close(transcoder->wake_fd);
    g_mutex_clear(&transcoder->output_lock);
    g_free(transcoder);
}

/* Bus sync handler (the thread that posts): the appsrc task, when the
 * pipeline creates it, goes onto the transcoder's own pool. */
static GstBusSyncReply on_bus_sync(GstBus *bus, GstMessage *message, gpointer data)
{
    (void)bus;
    moat_transcoder *transcoder = data;
    moat_transcode_task_pool_adopt(transcoder->task_pool, message, transcoder->src);
    return GST_BUS_PASS;
}

/* The streaming thread, before the pipeline starts (transcode_task_pool.h:
 * GStreamer hangs when it cannot make one itself). */
static bool make_streaming_thread(moat_transcoder *transcoder, char *error, size_t error_size)
{
    transcoder->task_pool = moat_transcode_task_pool_new(error, error_size);
    if (!transcoder->task_pool)
        return false;
    GstBus *bus = gst_element_get_bus(transcoder->pipeline);
    gst_bus_set_sync_handler(bus, on_bus_sync, transcoder, NULL);
    gst_object_unref(bus);
    return true;
}

/* The feeding thread; false with a message when none can be made (the
 * process or its user is at its thread limit: g_thread_new would abort). */
static bool start_feeder(moat_transcoder *transcoder, char *error, size_t error_size)
{
    GError *thread_error = NULL;
    transcoder->feeder = g_thread_try_new("moat-transcode", feeder_main, transcoder, &thread_error);
    if (transcoder->feeder)
        return true;
    snprintf(error, error_size, "transcoder: no thread: %s", thread_error->message);
    g_error_free(thread_error);
    return false;
}

moat_transcoder *moat_transcoder_new(const moat_transcoder_codec *input,
                                     const moat_transcoder_codec *output, uint32_t output_ssrc,
                                     moat_transcoder_output_fn output_fn, void *context,
                                     char *error, size_t error_size)
{
    const moat_transcode_codec *in, *out;
    if (!check_codecs(input, output, &in, &out, error, error_size))
        return NULL;
    moat_transcoder *transcoder = transcoder_alloc(input, output, in, out, output_ssrc);
    if (transcoder->wake_fd < 0) {
        snprintf(error, error_size, "transcoder: eventfd: %s", g_strerror(errno));
        transcoder_release(transcoder);
        return NULL;
    }
    transcoder->output_fn = output_fn;
    transcoder->context = context;
    moat_transcode_pipeline_spec spec = {
        .input = in,
        .output = out,
        .input_payload_type = transcoder->in.payload_type,
        .output_payload_type = transcoder->out.payload_type,
        .output_ssrc = output_ssrc,
        .output_timestamp_base = transcoder->timeline.out_base,
    };
    transcoder->pipeline =
        moat_transcode_pipeline_new(&spec, &transcoder->src, &transcoder->sink, error, error_size);
    if (!transcoder->pipeline || !make_streaming_thread(transcoder, error, error_size)) {
        transcoder_release(transcoder);
        return NULL;
    }
    GstAppSinkCallbacks callbacks = {.new_sample = on_sample};
    gst_app_sink_set_callbacks(GST_APP_SINK(transcoder->sink), &callbacks, transcoder, NULL);
    if (gst_element_set_state(transcoder->pipeline, GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE) {
        snprintf(error, error_size, "transcoder: the pipeline does not start");
        gst_element_set_state(transcoder->pipeline, GST_STATE_NULL);
        transcoder_release(transcoder);
        return NULL;
    }
    if (!start_feeder(transcoder, error, error_size)) {
        gst_element_set_state(transcoder->pipeline, GST_STATE_NULL);
        transcoder_release(transcoder);
        return NULL;
    }
    g_mutex_lock(&totals_lock);
    live_transcoders = g_list_prepend(live_transcoders, transcoder);
    g_mutex_unlock(&totals_lock);
    return transcoder;
}

void moat_transcoder_free(moat_transcoder *transcoder)
{
    if (!transcoder)
        return;
    atomic_store_explicit(&transcoder->stop, true, memory_order_release);
    write_wake(transcoder);
    /* Stopping unblocks a feeder waiting in appsrc and joins the streaming
     * thread; after the feeder is joined no callback can run. */
    gst_element_set_state(transcoder->pipeline, GST_STATE_NULL);
    g_thread_join(transcoder->feeder);
    moat_transcoder_stats stats;
    moat_transcoder_get_stats(transcoder, &stats);
    g_mutex_lock(&totals_lock);
    live_transcoders = g_list_remove(live_transcoders, transcoder);
    add_stats(&freed_totals, &stats);
    g_mutex_unlock(&totals_lock);
    transcoder_release(transcoder);
}
