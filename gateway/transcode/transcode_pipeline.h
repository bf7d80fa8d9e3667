/* The codecs the transcoder knows and the GStreamer pipeline of one
 * direction (appsrc ! depayloader ! decoder ! audioconvert ! audioresample
 * ! encoder ! payloader ! appsink). Control thread only. */
#ifndef MOAT_TRANSCODE_PIPELINE_H
#define MOAT_TRANSCODE_PIPELINE_H

#include <gst/gst.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *name;     /* SDP encoding name */
    const char *rtp_name; /* caps encoding-name */
    const char *depayloader, *decoder, *encoder, *payloader;
    uint32_t rtp_clock; /* RTP clock rate (8000 for G.722, RFC 3551 section 4.5.2) */
    int sample_rate;    /* the encoder's input rate */
    const char *encoder_options;
    unsigned bytes_per_ms; /* payload bytes a millisecond; 0: Opus (its TOC says) */
} moat_transcode_codec;

/* The known codec named `name` (case-insensitive) whose elements are all
 * installed, or NULL. Initialises GStreamer on first use. */
const moat_transcode_codec *moat_transcode_codec_find(const char *name);

typedef struct {
    const moat_transcode_codec *input, *output;
    uint8_t input_payload_type, output_payload_type;
    uint32_t output_ssrc, output_timestamp_base;
} moat_transcode_pipeline_spec;

/* A stopped pipeline whose appsrc and appsink are returned (references
 * owned by the caller), or NULL with a message. */
GstElement *moat_transcode_pipeline_new(const moat_transcode_pipeline_spec *spec, GstElement **src,
                                        GstElement **sink, char *error, size_t error_size);

#endif
