/* Transcoding cost per packet: Opus -> PCMU and PCMU -> Opus through
 * moat_transcoder (queue, feeding thread, re-stamping) against the same
 * GStreamer pipeline driven directly (appsrc pushed by the caller, appsink
 * counted) in the same run. Figures are packets per second of CPU time of
 * the whole process (all threads), i.e. per core. Last lines:
 *   transcode <direction> moat_pps=<n> gstreamer_pps=<n> ratio=<moat/gst>
 * No figure is judged, but a direction in which either side put out no
 * packet, or the Opus or PCMU elements missing (make deps installs them),
 * makes the bench exit 1, saying so. */
#include "transcode/transcode_pipeline.h"
#include "transcode/transcoder.h"
#include "bench_quick.h"

#include "tone.h"

#include <glib.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <opus.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define PACKETS 3000 /* 60 s of audio */
#define BATCH   32

typedef struct {
    GPtrArray *packets; /* GBytes, the input stream */
    const moat_transcoder_codec *in, *out;
    const char *label;
} workload;

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static GPtrArray *pcmu_stream(void)
{
    GPtrArray *packets = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    for (int n = 0; n < BENCH_SCALE(PACKETS, PACKETS / 10); n++) {
        int16_t pcm[160];
        uint8_t payload[160], packet[200];
        tone_fill(pcm, 160, 440.0, 8000, (uint64_t)n * 160);
        for (int i = 0; i < 160; i++)
            payload[i] = tone_ulaw_encode(pcm[i]);
        size_t length =
            tone_rtp(packet, 0, (uint16_t)n, (uint32_t)n * 160, 1, payload, sizeof payload);
        g_ptr_array_add(packets, g_bytes_new(packet, length));
    }
    return packets;
}

static GPtrArray *opus_stream(void)
{
    GPtrArray *packets = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    int error;
    OpusEncoder *encoder = opus_encoder_create(48000, 1, OPUS_APPLICATION_VOIP, &error);
    for (int n = 0; n < BENCH_SCALE(PACKETS, PACKETS / 10) && encoder; n++) {
        int16_t pcm[960];
        uint8_t payload[400], packet[500];
        tone_fill(pcm, 960, 440.0, 48000, (uint64_t)n * 960);
        int bytes = opus_encode(encoder, pcm, 960, payload, sizeof payload);
        if (bytes <= 0)
            break;
        size_t length =
            tone_rtp(packet, 111, (uint16_t)n, (uint32_t)n * 960, 1, payload, (size_t)bytes);
        g_ptr_array_add(packets, g_bytes_new(packet, length));
    }
    if (encoder)
        opus_encoder_destroy(encoder);
    return packets;
}

/* ---- Moat: push in batches, wait for the output to catch up ---- */

static atomic_uint_fast64_t moat_out;

static void count_output(void *context, const uint8_t *packet, size_t length)
{
    atomic_fetch_add(&moat_out, 1);
}

static void wait_output(uint64_t target)
{
    for (int i = 0; i < 10000 && atomic_load(&moat_out) < target; i++)
        g_usleep(1000);
}

static double run_moat(const workload *w)
{
    char error[256];
    atomic_store(&moat_out, 0);
    moat_transcoder *transcoder =
        moat_transcoder_new(w->in, w->out, 7, count_output, NULL, error, sizeof error);
    if (!transcoder) {
        fprintf(stderr, "bench/transcode: %s\n", error);
        return 0;
    }
    double start = cpu_seconds();
    for (guint n = 0; n < w->packets->len; n++) {
        size_t length;
        const uint8_t *packet = g_bytes_get_data(g_ptr_array_index(w->packets, n), &length);
        /* Arrival times of a real-time source: the meter passes it all. */
        moat_transcoder_push(transcoder, packet, length, (int64_t)n * 20000);
        if (n % BATCH == BATCH - 1)
            wait_output(n + 1 - BATCH / 2);
    }
    wait_output(w->packets->len - BATCH);
    double cpu = cpu_seconds() - start;
    moat_transcoder_stats stats;
    moat_transcoder_get_stats(transcoder, &stats);
    moat_transcoder_free(transcoder);
    if (stats.dropped_queue_full || stats.dropped_too_fast)
        fprintf(stderr, "bench/transcode: %s: %llu dropped\n", w->label,
                (unsigned long long)(stats.dropped_queue_full + stats.dropped_too_fast));
    return (double)stats.packets_out / cpu;
}

/* ---- the same pipeline, driven directly ---- */

static atomic_uint_fast64_t gst_out;

static GstFlowReturn count_sample(GstAppSink *sink, gpointer data)
{
    GstSample *sample = gst_app_sink_pull_sample(sink);
    if (sample)
        gst_sample_unref(sample);
    atomic_fetch_add(&gst_out, 1);
    return GST_FLOW_OK;
}

static double run_gstreamer(const workload *w)
{
    moat_transcode_pipeline_spec spec = {
        .input = moat_transcode_codec_find(w->in->name),
        .output = moat_transcode_codec_find(w->out->name),
        .input_payload_type = w->in->payload_type,
        .output_payload_type = w->out->payload_type,
        .output_ssrc = 7,
    };
    char error[256];
    GstElement *src, *sink;
    GstElement *pipeline = moat_transcode_pipeline_new(&spec, &src, &sink, error, sizeof error);
    if (!pipeline) {
        fprintf(stderr, "bench/transcode: %s\n", error);
        return 0;
    }
    GstAppSinkCallbacks callbacks = {.new_sample = count_sample};
    gst_app_sink_set_callbacks(GST_APP_SINK(sink), &callbacks, NULL, NULL);
    atomic_store(&gst_out, 0);
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    uint32_t clock = spec.input->rtp_clock;
    double start = cpu_seconds();
    for (guint n = 0; n < w->packets->len; n++) {
        GstBuffer *buffer =
            gst_buffer_new_memdup(g_bytes_get_data(g_ptr_array_index(w->packets, n), NULL),
                                  g_bytes_get_size(g_ptr_array_index(w->packets, n)));
        GST_BUFFER_PTS(buffer) = gst_util_uint64_scale(n, GST_SECOND * clock / 50, clock);
        GST_BUFFER_DTS(buffer) = GST_BUFFER_PTS(buffer);
        gst_app_src_push_buffer(GST_APP_SRC(src), buffer);
    }
    for (int i = 0; i < 10000 && atomic_load(&gst_out) < w->packets->len - BATCH; i++)
        g_usleep(1000);
    double cpu = cpu_seconds() - start;
    uint64_t out = atomic_load(&gst_out);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(src);
    gst_object_unref(sink);
    gst_object_unref(pipeline);
    return (double)out / cpu;
}

static const moat_transcoder_codec pcmu = {"PCMU", 8000, 1, 0, 0, 0};
static const moat_transcoder_codec opus = {"opus", 48000, 2, 111, 0, 0};

int main(void)
{
    if (!moat_transcoder_supports("opus") || !moat_transcoder_supports("PCMU")) {
        printf("transcode: Opus or PCMU elements missing (scripts/install-deps.sh installs "
               "them)\n");
        return 1;
    }
    int status = 0;
    workload workloads[] = {
        {opus_stream(), &opus, &pcmu, "opus_to_pcmu"},
        {pcmu_stream(), &pcmu, &opus, "pcmu_to_opus"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(workloads); i++) {
        run_gstreamer(&workloads[i]); /* warm-up: plugin loading, caches */
        double gst = run_gstreamer(&workloads[i]);
        double moat = run_moat(&workloads[i]);
        printf("transcode %s moat_pps=%.0f gstreamer_pps=%.0f ratio=%.2f\n", workloads[i].label,
               moat, gst, gst > 0 ? moat / gst : 0);
        if (moat <= 0 || gst <= 0) {
            fprintf(stderr, "transcode: no valid measurement: %s: %s put out no packet\n",
                    workloads[i].label, moat <= 0 ? "moat_transcoder" : "the GStreamer pipeline");
            status = 1;
        }
        g_ptr_array_unref(workloads[i].packets);
    }
    return status;
}
