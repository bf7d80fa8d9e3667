/* The transcoders' counters on /metrics: live pipelines, packets in and
 * out, drops by reason, telephone-events passed on. */
#include "transcode/transcode_metrics.h"

#include "transcode/transcoder.h"

void moat_transcode_metrics(GString *out)
{
    moat_transcoder_stats t;
    unsigned live;
    moat_transcoder_totals(&t, &live);
    g_string_append_printf(
        out,
        "# HELP moat_transcoders Transcoding pipelines running (one per call direction)\n"
        "# TYPE moat_transcoders gauge\nmoat_transcoders %u\n"
        "# HELP moat_transcode_packets_total RTP packets into and out of transcoders\n"
        "# TYPE moat_transcode_packets_total counter\n"
        "moat_transcode_packets_total{direction=\"in\"} %" G_GUINT64_FORMAT "\n"
        "moat_transcode_packets_total{direction=\"out\"} %" G_GUINT64_FORMAT "\n"
        "# HELP moat_transcode_dtmf_events_total Telephone-event packets re-stamped\n"
        "# TYPE moat_transcode_dtmf_events_total counter\n"
        "moat_transcode_dtmf_events_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_transcode_dropped_packets_total Packets transcoders dropped, by reason\n"
        "# TYPE moat_transcode_dropped_packets_total counter\n"
        "moat_transcode_dropped_packets_total{reason=\"queue_full\"} %" G_GUINT64_FORMAT "\n"
        "moat_transcode_dropped_packets_total{reason=\"invalid\"} %" G_GUINT64_FORMAT "\n"
        "moat_transcode_dropped_packets_total{reason=\"late\"} %" G_GUINT64_FORMAT "\n"
        "moat_transcode_dropped_packets_total{reason=\"too_fast\"} %" G_GUINT64_FORMAT "\n"
        "moat_transcode_dropped_packets_total{reason=\"dtmf_unsupported\"} %" G_GUINT64_FORMAT "\n",
        live, t.packets_in, t.packets_out, t.dtmf_events, t.dropped_queue_full, t.dropped_invalid,
        t.dropped_late, t.dropped_too_fast, t.dropped_dtmf);
}
