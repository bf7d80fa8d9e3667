/* The calls' figures on /metrics: calls, legs, free ports, calls ended by
 * the media timeout, relayed and dropped packets summed over the workers'
 * counters. Control thread. */
#include "call/call_registry.h"
#include "call/call_registry_private.h"

#include "engine/counters.h"
#include "transcode/transcode_metrics.h"

#include <stddef.h>

static uint64_t sum_counter(moat_call_registry *registry, size_t offset)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < registry->n_contexts; i++) {
        const char *base = (const char *)moat_call_worker_counters_of(registry->contexts[i]);
        total += moat_counter_read((const uint64_t *)(base + offset));
    }
    return total;
}

void moat_call_registry_metrics(moat_call_registry *registry, GString *out)
{
    size_t streams = 0, webrtc = 0;
    for (unsigned i = 0; i < registry->n_contexts; i++)
        streams += moat_call_worker_streams(registry->contexts[i]);
    GHashTableIter iter;
    void *value;
    g_hash_table_iter_init(&iter, registry->calls);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        const moat_call *call = value;
        webrtc += (call->webrtc[0] != NULL) + (call->webrtc[1] != NULL);
    }
    g_string_append_printf(out,
                           "# HELP moat_call_webrtc_legs Call parties on a WebRTC leg (a core "
                           "session: ICE-lite, DTLS-SRTP)\n# TYPE moat_call_webrtc_legs gauge\n"
                           "moat_call_webrtc_legs %zu\n",
                           webrtc);
    g_string_append_printf(out,
                           "# HELP moat_calls_refused_load_limit_total New calls refused at [ng] "
                           "max_calls, max_load or while draining\n"
                           "# TYPE moat_calls_refused_load_limit_total counter\n"
                           "moat_calls_refused_load_limit_total %" G_GUINT64_FORMAT "\n"
                           "# HELP moat_calls_refused_worker_load_total New calls refused because "
                           "the workers' CPU load was over [ng] max_load\n"
                           "# TYPE moat_calls_refused_worker_load_total counter\n"
                           "moat_calls_refused_worker_load_total %" G_GUINT64_FORMAT "\n"
                           "# HELP moat_ng_worker_load_percent The workers' CPU load at the last "
                           "sample (a new call's offer with [ng] max_load set)\n"
                           "# TYPE moat_ng_worker_load_percent gauge\n"
                           "moat_ng_worker_load_percent %u\n",
                           registry->refused_load_limit, registry->refused_worker_load,
                           registry->load.percent);
    static const char *const outcomes[MOAT_CALL_RESTORE_OUTCOMES] = {"restored", "failed",
                                                                     "skipped", "idle"};
    g_string_append(out, "# HELP moat_calls_restored_total Call records read back after a "
                         "restart, by outcome (idle: restored, then ended without media)\n"
                         "# TYPE moat_calls_restored_total counter\n");
    for (int o = 0; o < MOAT_CALL_RESTORE_OUTCOMES; o++)
        g_string_append_printf(out,
                               "moat_calls_restored_total{outcome=\"%s\"} %" G_GUINT64_FORMAT "\n",
                               outcomes[o], registry->restored[o]);
    g_string_append_printf(out,
                           "# HELP moat_calls_timed_out_total Calls ended because their legs "
                           "received no packet for [call] media_timeout_s (media) or, not "
                           "answered or held, silent_timeout_s (silent)\n"
                           "# TYPE moat_calls_timed_out_total counter\n"
                           "moat_calls_timed_out_total{timeout=\"media\"} %" G_GUINT64_FORMAT "\n"
                           "moat_calls_timed_out_total{timeout=\"silent\"} %" G_GUINT64_FORMAT "\n",
                           registry->timed_out[MOAT_CALL_TIMEOUT_MEDIA],
                           registry->timed_out[MOAT_CALL_TIMEOUT_SILENT]);
    g_string_append_printf(out,
                           "# HELP moat_calls Calls relayed for a SIP proxy (ng protocol)\n"
                           "# TYPE moat_calls gauge\nmoat_calls %u\n"
                           "# HELP moat_call_legs Call legs (one port pair each)\n"
                           "# TYPE moat_call_legs gauge\nmoat_call_legs %zu\n"
                           "# HELP moat_call_ports_free Call port pairs left in [media] "
                           "port_min..port_max\n# TYPE moat_call_ports_free gauge\n"
                           "moat_call_ports_free %zu\n",
                           g_hash_table_size(registry->calls), 2 * streams,
                           moat_call_ports_capacity(registry->ports) -
                               moat_call_ports_in_use(registry->ports));
    g_string_append_printf(
        out,
        "# HELP moat_call_relayed_packets_total Packets relayed between call legs\n"
        "# TYPE moat_call_relayed_packets_total counter\n"
        "moat_call_relayed_packets_total{kind=\"rtp\"} %" G_GUINT64_FORMAT "\n"
        "moat_call_relayed_packets_total{kind=\"rtcp\"} %" G_GUINT64_FORMAT "\n"
        "# HELP moat_call_relayed_bytes_total Bytes relayed between call legs\n"
        "# TYPE moat_call_relayed_bytes_total counter\n"
        "moat_call_relayed_bytes_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_call_legs_moved_to_sdp_address_total Latched flows (RTP or RTCP) that "
        "their exact SDP address took over from another port of its IP\n"
        "# TYPE moat_call_legs_moved_to_sdp_address_total counter\n"
        "moat_call_legs_moved_to_sdp_address_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_call_srtp_streams_evicted_total SDES legs' SRTP streams removed (least "
        "recently used) to make room for a new SSRC's: each direction keeps at most 64\n"
        "# TYPE moat_call_srtp_streams_evicted_total counter\n"
        "moat_call_srtp_streams_evicted_total %" G_GUINT64_FORMAT "\n",
        sum_counter(registry, offsetof(moat_call_worker_counters, rtp_relayed)),
        sum_counter(registry, offsetof(moat_call_worker_counters, rtcp_relayed)),
        sum_counter(registry, offsetof(moat_call_worker_counters, bytes_relayed)),
        sum_counter(registry, offsetof(moat_call_worker_counters, moved_to_sdp_address)),
        sum_counter(registry, offsetof(moat_call_worker_counters, srtp_streams_evicted)));
    g_string_append(out, "# HELP moat_call_dropped_packets_total Datagrams call legs dropped, "
                         "by reason\n# TYPE moat_call_dropped_packets_total counter\n");
    for (int r = 0; r < MOAT_CALL_DROP_REASON_COUNT; r++)
        g_string_append_printf(
            out, "moat_call_dropped_packets_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
            moat_call_drop_reason_name(r),
            sum_counter(registry,
                        offsetof(moat_call_worker_counters, dropped) + sizeof(uint64_t) * r));
    g_string_append(out, "# HELP moat_call_transcode_refused_total M-lines an answer would "
                         "have transcoded, relayed as is instead (with a warning), by reason "
                         "(limit: [call] max_transcoders)\n"
                         "# TYPE moat_call_transcode_refused_total counter\n");
    for (int r = 0; r < MOAT_CALL_TRANSCODE_REFUSALS; r++)
        g_string_append_printf(
            out, "moat_call_transcode_refused_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
            moat_call_transcode_refusal_name(r), registry->transcode_refused[r]);
    moat_transcode_metrics(out);
}
