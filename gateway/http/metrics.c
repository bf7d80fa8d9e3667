/* Renders /metrics in the Prometheus text format (metrics.h). */
#include "http/metrics.h"

#include "call/call_registry.h"
#include "ng/ng_server.h"
#include "prefilter/kernel_filter.h"
#include "record/record_api.h"

#include "engine/counters.h"
#include "session/events.h"
#include "http/http_router.h"
#include "http/http_server.h"
#include "engine/relay.h"
#include "session/plugin_registry.h"
#include "session/stats_snapshot.h"

#include <stddef.h>

typedef struct {
    const char *name;
    const char *help;
    size_t offset;
} counter_metric;

/* Each loaded plugin's own figures (moat_plugin.metrics). */
static void render_plugins(const moat_gateway *gateway, GString *out)
{
    if (!gateway->plugins)
        return;
    for (size_t i = 0; i < moat_plugin_registry_count(gateway->plugins); i++) {
        const moat_plugin *plugin = moat_plugin_registry_at(gateway->plugins, i);
        char *text = plugin->api_version >= 2 && plugin->metrics ? plugin->metrics() : NULL;
        if (text)
            g_string_append(out, text);
        g_free(text);
    }
}

static const counter_metric counter_metrics[] = {
    {"moat_rtp_packets_received_total", "Authenticated RTP packets received",
     offsetof(moat_counters, rtp_received)},
    {"moat_rtp_packets_sent_total", "RTP packets sent (including retransmissions)",
     offsetof(moat_counters, rtp_sent)},
    {"moat_rtcp_packets_received_total", "Authenticated RTCP compound packets received",
     offsetof(moat_counters, rtcp_received)},
    {"moat_rtcp_packets_sent_total", "RTCP compound packets sent",
     offsetof(moat_counters, rtcp_sent)},
    {"moat_datagrams_received_total", "UDP datagrams received on media ports",
     offsetof(moat_counters, datagrams_received)},
    {"moat_socket_dropped_datagrams_total",
     "Datagrams the kernel dropped at the media sockets: receive queue full (a worker fell "
     "behind) or refused by the kernel prefilter (also in moat_kernel_dropped_packets_total)",
     offsetof(moat_counters, socket_drops)},
    {"moat_bytes_received_total", "UDP payload bytes received on media ports",
     offsetof(moat_counters, bytes_received)},
    {"moat_bytes_sent_total", "UDP payload bytes sent from media ports",
     offsetof(moat_counters, bytes_sent)},
    {"moat_stun_requests_total", "STUN binding requests for known sessions",
     offsetof(moat_counters, stun_requests)},
    {"moat_nack_retransmissions_total", "RTP packets resent in answer to NACKs",
     offsetof(moat_counters, nacked_retransmissions)},
    {"moat_nack_retransmission_copies_total",
     "Second copies of retransmissions, sent to peers whose NACKs show 1-20 % loss",
     offsetof(moat_counters, nacked_retransmission_copies)},
    {"moat_feedback_repairs_total",
     "Retransmissions of packets transport-cc feedback reported lost that no NACK had repaired",
     offsetof(moat_counters, feedback_repairs)},
    {"moat_playout_delays_asked_total",
     "Times a viewer's video began to ask its jitter buffer for a playout delay (lossy path)",
     offsetof(moat_counters, playout_delays_asked)},
    {"moat_rtx_received_total", "RTX (RFC 4588) retransmissions received and unwrapped",
     offsetof(moat_counters, rtx_received)},
    {"moat_transport_cc_feedback_total",
     "transport-wide congestion control feedback packets sent (RTPFB FMT 15)",
     offsetof(moat_counters, transport_cc_feedback_sent)},
    {"moat_bwe_feedback_received_total",
     "transport-wide congestion control feedback packets taken into the sender-side estimator",
     offsetof(moat_counters, bwe_feedback_received)},
    {"moat_bwe_packets_reported_lost_total",
     "Packets sent to transport-cc peers that their feedback reported lost",
     offsetof(moat_counters, bwe_packets_reported_lost)},
    {"moat_bwe_overuse_events_total",
     "Times the delay-based detector judged a subscriber's path overused (rate cut)",
     offsetof(moat_counters, bwe_overuse_events)},
    {"moat_bwe_probes_started_total", "Bandwidth probes started (padding at a target rate)",
     offsetof(moat_counters, bwe_probes_started)},
    {"moat_bwe_probes_confirmed_total", "Probes whose path carried the target: estimate raised",
     offsetof(moat_counters, bwe_probes_confirmed)},
    {"moat_bwe_probes_failed_total", "Probes that met loss, rising delay or a short delivery",
     offsetof(moat_counters, bwe_probes_failed)},
    {"moat_bwe_padding_packets_total", "Padding-only RTX packets sent for probes",
     offsetof(moat_counters, bwe_padding_packets)},
    {"moat_bwe_padding_bytes_total", "Bytes of padding-only RTX packets sent for probes",
     offsetof(moat_counters, bwe_padding_bytes)},
    {"moat_srtp_streams_evicted_total",
     "SRTP streams a WebRTC or ingest session removed (least recently used) to make room for "
     "a new SSRC's: each direction keeps at most 64",
     offsetof(moat_counters, srtp_streams_evicted)},
    {"moat_heap_trims_total", "malloc_trim calls after handshake bursts (heap_trim.h)",
     offsetof(moat_counters, heap_trims)},
    {"moat_heap_trim_nanoseconds_total", "time the workers spent in malloc_trim",
     offsetof(moat_counters, heap_trim_ns)},
    {"moat_dtls_handshakes_total", "DTLS handshakes completed",
     offsetof(moat_counters, dtls_handshakes_completed)},
    {"moat_dtls_handshake_failures_total", "DTLS handshakes failed",
     offsetof(moat_counters, dtls_handshakes_failed)},
    {"moat_dtls_retired_total",
     "DTLS associations of media-only sessions that freed OpenSSL's state after the handshake "
     "and only listen for the peer's closing alert",
     offsetof(moat_counters, dtls_retired)},
    {"moat_datachannel_messages_received_total", "Data channel messages received",
     offsetof(moat_counters, data_messages_received)},
    {"moat_datachannel_messages_sent_total", "Data channel messages sent",
     offsetof(moat_counters, data_messages_sent)},
    {"moat_datachannel_bytes_received_total", "Data channel payload bytes received",
     offsetof(moat_counters, data_bytes_received)},
    {"moat_datachannel_bytes_sent_total", "Data channel payload bytes sent",
     offsetof(moat_counters, data_bytes_sent)},
    {"moat_datachannel_messages_abandoned_total",
     "Messages partially reliable channels gave up on (counted when the session ends)",
     offsetof(moat_counters, data_messages_abandoned)},
    {"moat_datachannel_receive_pauses_total",
     "Times a session stopped reading its data channels until what it made the gateway queue "
     "drained (backpressure)",
     offsetof(moat_counters, data_receive_pauses)},
    {"moat_datachannel_pmtu_probes_sent_total",
     "Path MTU discovery probes sent (counted when the session ends)",
     offsetof(moat_counters, data_pmtu_probes_sent)},
    {"moat_datachannel_pmtu_probes_acked_total",
     "Path MTU discovery probes the peer acknowledged (counted when the session ends)",
     offsetof(moat_counters, data_pmtu_probes_acked)},
    {"moat_datachannel_pmtu_raised_total",
     "Associations that ended with SCTP packets larger than 1200 bytes",
     offsetof(moat_counters, data_pmtu_raised)},
    {"moat_datachannel_pmtu_black_holes_total",
     "Paths that stopped carrying the packet size found: back to 1200 bytes",
     offsetof(moat_counters, data_pmtu_black_holes)},
    {"moat_detector_switches_on_total", "Transport detectors switched to enforcing",
     offsetof(moat_counters, detector_switches_on)},
    {"moat_detector_switches_off_total", "Transport detectors switched back off",
     offsetof(moat_counters, detector_switches_off)},
    {"moat_detector_worker_switches_on_total", "Worker socket detectors switched to enforcing",
     offsetof(moat_counters, worker_detector_switches_on)},
    {"moat_worker_overloaded_ticks_total",
     "Worker ticks (10 ms) that saw overload: fair admission of flooded streams engaged",
     offsetof(moat_counters, overloaded_ticks)},
    {"moat_consent_expired_total", "transports closed because ICE consent expired",
     offsetof(moat_counters, consent_expired)},
    {"moat_ice_moves_pending_total",
     "moves to another remote address held until media came from it (once per move)",
     offsetof(moat_counters, ice_moves_pending)},
    {"moat_ice_moves_confirmed_total",
     "sessions moved to another remote address once its media came",
     offsetof(moat_counters, ice_moves_confirmed)},
    {"moat_ice_pairs_taken_by_cascade_total",
     "sessions' pairs on a cascade link's address, dropped when a leg of the link started there",
     offsetof(moat_counters, ice_pairs_taken_by_cascade)},
    {"moat_ice_pairs_expired_total",
     "candidate pairs the peer had left (idle for the consent timeout, or before an ICE restart), "
     "removed and their addresses released",
     offsetof(moat_counters, ice_pairs_expired)},
    {"moat_cascade_legs_unrouted_total",
     "cascade legs ended at their start: their address or an SSRC was another leg's",
     offsetof(moat_counters, cascade_legs_unrouted)},
};

static uint64_t sum_field(moat_gateway *gateway, size_t offset)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < gateway->n_workers; i++) {
        const moat_counters *counters = moat_worker_counters(gateway->workers[i]);
        total += moat_counter_read((const uint64_t *)((const char *)counters + offset));
    }
    return total;
}

/* The eBPF socket filters: whether they are in use (and why not), and what
 * they dropped before user space saw it. */
static void render_kernel_filter(moat_gateway *gateway, GString *out)
{
    uint64_t totals[MOAT_KF_REASON_COUNT] = {0};
    bool active = gateway->n_workers > 0;
    for (unsigned i = 0; i < gateway->n_workers; i++) {
        const moat_kernel_filter *filter = moat_worker_kernel_filter(gateway->workers[i]);
        if (!filter) {
            active = false;
            continue;
        }
        uint64_t worker[MOAT_KF_REASON_COUNT];
        moat_kernel_filter_read_drops(filter, worker);
        for (int r = 0; r < MOAT_KF_REASON_COUNT; r++)
            totals[r] += worker[r];
    }
    g_string_append_printf(out,
                           "# HELP moat_kernel_filter_active 1 when every worker socket has the "
                           "eBPF filter, 0 when the user-space prefilter works alone\n"
                           "# TYPE moat_kernel_filter_active gauge\nmoat_kernel_filter_active %d\n",
                           active ? 1 : 0);
    if (!active) {
        GString *reason = g_string_new(NULL);
        for (const char *c = gateway->kernel_filter_note; *c; c++) {
            if (*c == '"' || *c == '\\')
                g_string_append_c(reason, '\\');
            g_string_append_c(reason, *c);
        }
        g_string_append_printf(out,
                               "# HELP moat_kernel_filter_fallback Why the kernel filter is not "
                               "in use\n# TYPE moat_kernel_filter_fallback gauge\n"
                               "moat_kernel_filter_fallback{reason=\"%s\"} 1\n",
                               reason->str);
        g_string_free(reason, TRUE);
    }
    g_string_append(out, "# HELP moat_kernel_dropped_packets_total Datagrams the eBPF socket "
                         "filter dropped before they were queued, by reason (also counted in "
                         "moat_dropped_packets_total)\n"
                         "# TYPE moat_kernel_dropped_packets_total counter\n");
    for (int r = 0; r < MOAT_KF_REASON_COUNT; r++)
        g_string_append_printf(
            out, "moat_kernel_dropped_packets_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
            moat_kernel_filter_reason_name(r), totals[r]);
}

/* The routing core's cross-worker relay (relay.h). */
static void render_relay(moat_gateway *gateway, GString *out)
{
    g_string_append(out, "# HELP moat_relay_dropped_packets_total Packets the routing core "
                         "could not carry to another worker, by reason\n"
                         "# TYPE moat_relay_dropped_packets_total counter\n");
    for (int r = 0; r < MOAT_RELAY_DROP_REASON_COUNT; r++)
        g_string_append_printf(
            out, "moat_relay_dropped_packets_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
            moat_relay_drop_reason_name(r),
            gateway->relay ? moat_relay_dropped(gateway->relay, r) : 0);
    g_string_append_printf(out,
                           "# HELP moat_relay_delivered_packets_total Packets the routing core "
                           "carried to another worker\n"
                           "# TYPE moat_relay_delivered_packets_total counter\n"
                           "moat_relay_delivered_packets_total %" G_GUINT64_FORMAT "\n",
                           gateway->relay ? moat_relay_delivered(gateway->relay) : 0);
    g_string_append(out, "# HELP moat_relay_dropped_data_messages_total Data channel messages "
                         "relayed to another worker's session and dropped, by reason\n"
                         "# TYPE moat_relay_dropped_data_messages_total counter\n");
    for (int r = 0; r < MOAT_RELAY_DATA_DROP_REASON_COUNT; r++)
        g_string_append_printf(
            out, "moat_relay_dropped_data_messages_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
            moat_relay_data_drop_reason_name(r),
            gateway->relay ? moat_relay_data_dropped(gateway->relay, r) : 0);
    g_string_append_printf(out,
                           "# HELP moat_relay_delivered_data_messages_total Data channel messages "
                           "relayed to another worker's session\n"
                           "# TYPE moat_relay_delivered_data_messages_total counter\n"
                           "moat_relay_delivered_data_messages_total %" G_GUINT64_FORMAT "\n",
                           gateway->relay ? moat_relay_data_delivered(gateway->relay) : 0);
}

char *moat_metrics_render(moat_gateway *gateway)
{
    GString *out = g_string_sized_new(4096);
    g_string_append_printf(out,
                           "# HELP moat_sessions Sessions in the registry\n"
                           "# TYPE moat_sessions gauge\nmoat_sessions %zu\n",
                           moat_session_registry_count(gateway->sessions));
    g_string_append_printf(out,
                           "# HELP moat_sessions_ending Sessions hung up and still draining "
                           "(they count against max_sessions)\n"
                           "# TYPE moat_sessions_ending gauge\nmoat_sessions_ending %zu\n",
                           moat_session_registry_count_ending(gateway->sessions));
    g_string_append_printf(
        out,
        "# HELP moat_pending_sessions Sessions not yet connected (ICE and DTLS)\n"
        "# TYPE moat_pending_sessions gauge\nmoat_pending_sessions %d\n",
        g_atomic_int_get(&gateway->pending_sessions));
    g_string_append_printf(out,
                           "# HELP moat_http_connections Open HTTP API connections (WebSocket "
                           "event subscriptions included)\n"
                           "# TYPE moat_http_connections gauge\nmoat_http_connections %zu\n",
                           moat_http_server_connections(gateway->http));
    g_string_append(out,
                    "# HELP moat_http_refused_total Requests (or connections) refused before any "
                    "work, by reason\n# TYPE moat_http_refused_total counter\n");
    for (int reason = 0; reason < MOAT_REFUSED_REASON_COUNT; reason++)
        g_string_append_printf(out,
                               "moat_http_refused_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
                               moat_refusal_reason_name(reason), gateway->refused[reason]);
    g_string_append(out, "# HELP moat_worker_sessions Sessions owned by each media worker\n"
                         "# TYPE moat_worker_sessions gauge\n");
    for (unsigned i = 0; i < gateway->n_workers; i++)
        g_string_append_printf(out, "moat_worker_sessions{worker=\"%u\"} %u\n", i,
                               moat_worker_session_count(gateway->workers[i]));
    g_string_append_printf(
        out,
        "# HELP moat_datachannel_memory_bytes Data-channel memory held by all "
        "sessions (SCTP buffers reserved and queued messages)\n"
        "# TYPE moat_datachannel_memory_bytes gauge\n"
        "moat_datachannel_memory_bytes %zu\n"
        "# HELP moat_datachannel_memory_limit_bytes [limits] datachannel_total_mib\n"
        "# TYPE moat_datachannel_memory_limit_bytes gauge\n"
        "moat_datachannel_memory_limit_bytes %zu\n",
        moat_data_limits_used(&gateway->data_limits), gateway->data_limits.total_bytes);
    for (size_t m = 0; m < G_N_ELEMENTS(counter_metrics); m++) {
        g_string_append_printf(out, "# HELP %s %s\n# TYPE %s counter\n%s %" G_GUINT64_FORMAT "\n",
                               counter_metrics[m].name, counter_metrics[m].help,
                               counter_metrics[m].name, counter_metrics[m].name,
                               sum_field(gateway, counter_metrics[m].offset));
    }
    g_string_append_printf(
        out,
        "# HELP moat_srtp_auth_failures_total srtp_unprotect authentication failures\n"
        "# TYPE moat_srtp_auth_failures_total counter\nmoat_srtp_auth_failures_total "
        "%" G_GUINT64_FORMAT "\n",
        sum_field(gateway, offsetof(moat_counters, dropped[MOAT_DROP_AUTH])));
    g_string_append(out, "# HELP moat_dropped_packets_total Datagrams dropped, by reason\n"
                         "# TYPE moat_dropped_packets_total counter\n");
    for (int reason = 0; reason < MOAT_DROP_REASON_COUNT; reason++) {
        g_string_append_printf(
            out, "moat_dropped_packets_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
            moat_drop_reason_name(reason),
            sum_field(gateway, offsetof(moat_counters, dropped) + sizeof(uint64_t) * reason));
    }
    render_kernel_filter(gateway, out);
    render_relay(gateway, out);
    moat_record_api_metrics(out);
    moat_events_metrics(out);
    if (gateway->calls)
        moat_call_registry_metrics(gateway->calls, out);
    moat_ng_server_metrics(gateway->ng, out);
    if (gateway->stats)
        moat_stats_snapshot_prometheus(gateway->stats, out);
    render_plugins(gateway, out);
    g_string_append(out,
                    "# HELP moat_up 1 while the gateway runs\n# TYPE moat_up gauge\nmoat_up 1\n");
    moat_http_metrics_hook_fn hook = (moat_http_metrics_hook_fn)gateway->metrics_hook;
    if (hook)
        hook(gateway->metrics_hook_user, out);
    return g_string_free(out, FALSE);
}
