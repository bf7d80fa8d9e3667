/* The transcoder's codec table and the construction of its GStreamer
 * pipeline. The pipeline runs on the media timeline the feeding thread
 * stamps on buffers (no clock, no jitter buffer): its output timestamps
 * follow the input's, which is what lets telephone-events be re-stamped
 * onto the same timeline. */
#include "transcode/transcode_pipeline.h"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <stdio.h>

#define PTIME_NS           (20 * GST_MSECOND)
#define APPSRC_MAX_BUFFERS 8

static const moat_transcode_codec known_codecs[] = {
    {"opus", "OPUS", "rtpopusdepay", "opusdec", "opusenc", "rtpopuspay", 48000, 48000,
     "audio-type=voice frame-size=20 bitrate=32000", 0},
    {"PCMU", "PCMU", "rtppcmudepay", "mulawdec", "mulawenc", "rtppcmupay", 8000, 8000, "", 8},
    {"PCMA", "PCMA", "rtppcmadepay", "alawdec", "alawenc", "rtppcmapay", 8000, 8000, "", 8},
    {"G722", "G722", "rtpg722depay", "avdec_g722", "avenc_g722", "rtpg722pay", 8000, 16000, "",
     8}, /* 64 kbit/s */
};
#define KNOWN_CODECS G_N_ELEMENTS(known_codecs)

/* Which of known_codecs have all their elements. Set once. */
static bool codec_available[KNOWN_CODECS];

static bool factory_exists(const char *name)
{
    GstElementFactory *factory = gst_element_factory_find(name);
    if (!factory)
        return false;
    gst_object_unref(factory);
    return true;
}

static bool common_elements_exist(void)
{
    static const char *const common[] = {"appsrc", "appsink", "audioconvert", "audioresample"};
    for (size_t i = 0; i < G_N_ELEMENTS(common); i++) {
        if (!factory_exists(common[i]))
            return false;
    }
    return true;
}

static void init_gstreamer(void)
{
    static gsize done = 0;
    if (!g_once_init_enter(&done))
        return;
    gst_init(NULL, NULL);
    bool common = common_elements_exist();
    for (size_t i = 0; i < KNOWN_CODECS; i++) {
        const moat_transcode_codec *codec = &known_codecs[i];
        codec_available[i] = common && factory_exists(codec->depayloader) &&
                             factory_exists(codec->decoder) && factory_exists(codec->encoder) &&
                             factory_exists(codec->payloader);
    }
    g_once_init_leave(&done, 1);
}

const moat_transcode_codec *moat_transcode_codec_find(const char *name)
{
    if (!name)
        return NULL;
    init_gstreamer();
    for (size_t i = 0; i < KNOWN_CODECS; i++) {
        if (g_ascii_strcasecmp(name, known_codecs[i].name) == 0)
            return codec_available[i] ? &known_codecs[i] : NULL;
    }
    return NULL;
}

static char *pipeline_description(const moat_transcode_pipeline_spec *spec)
{
    const moat_transcode_codec *in = spec->input, *out = spec->output;
    return g_strdup_printf(
        "appsrc name=src format=time is-live=false do-timestamp=false block=true"
        " ! %s ! %s ! audioconvert ! audioresample ! audio/x-raw,rate=%d,channels=1"
        " ! %s perfect-timestamp=true %s ! %s pt=%u ssrc=%u timestamp-offset=%u "
        "min-ptime=%" G_GINT64_FORMAT " max-ptime=%" G_GINT64_FORMAT
        " ! appsink name=sink sync=false async=false",
        in->depayloader, in->decoder, out->sample_rate, out->encoder, out->encoder_options,
        out->payloader, spec->output_payload_type, spec->output_ssrc, spec->output_timestamp_base,
        (gint64)PTIME_NS, (gint64)PTIME_NS);
}

static GstCaps *input_caps(const moat_transcode_pipeline_spec *spec)
{
    const moat_transcode_codec *in = spec->input;
    GstCaps *caps = gst_caps_new_simple("application/x-rtp", "media", G_TYPE_STRING, "audio",
                                        "clock-rate", G_TYPE_INT, (int)in->rtp_clock,
                                        "encoding-name", G_TYPE_STRING, in->rtp_name, "payload",
                                        G_TYPE_INT, (int)spec->input_payload_type, NULL);
    if (in->rtp_clock == 48000)
        gst_caps_set_simple(caps, "encoding-params", G_TYPE_STRING, "2", NULL);
    return caps;
}

GstElement *moat_transcode_pipeline_new(const moat_transcode_pipeline_spec *spec, GstElement **src,
                                        GstElement **sink, char *error, size_t error_size)
{
    char *description = pipeline_description(spec);
    GError *gerror = NULL;
    GstElement *pipeline = gst_parse_launch(description, &gerror);
    g_free(description);
    if (!pipeline || gerror) {
        snprintf(error, error_size, "transcoder pipeline: %s", gerror ? gerror->message : "?");
        g_clear_error(&gerror);
        if (pipeline)
            gst_object_unref(pipeline);
        return NULL;
    }
    *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
    *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
    GstCaps *caps = input_caps(spec);
    /* Bounded: the feeding thread waits here, so backlog builds in the
     * transcoder's own queue, where the media worker drops and counts. */
    g_object_set(*src, "caps", caps, "stream-type", GST_APP_STREAM_TYPE_STREAM, "max-buffers",
                 (guint64)APPSRC_MAX_BUFFERS, "max-bytes", (guint64)0, NULL);
    gst_caps_unref(caps);
    return pipeline;
}
