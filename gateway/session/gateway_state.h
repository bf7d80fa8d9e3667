/* The daemon's control-thread state: configuration, workers, the DTLS
 * identity, loaded plugins, the session registry and the HTTP server. Only the
 * control thread (the GLib main loop) touches it after start-up. The app fills
 * it (app/gateway.h); sessions, features and HTTP read it. */
#ifndef MOAT_GATEWAY_H
#define MOAT_GATEWAY_H

#include "base/config.h"
#include "session/http_admission.h"
#include "base/log.h"
#include "engine/data_limits.h"
#include "prefilter/prefilter_settings.h"
#include "session/plugin_registry.h"
#include "session/session_registry.h"
#include "engine/worker.h"
#include "sdp/sdp.h"

#include <glib.h>

typedef struct moat_certificate moat_certificate;
typedef struct moat_dtls_context moat_dtls_context;
typedef struct moat_http_server moat_http_server;
typedef struct moat_ng_server moat_ng_server;
typedef struct moat_stats_snapshot moat_stats_snapshot;

#define MOAT_MAX_CANDIDATE_ADDRESSES 16

/* Routing core relay: slots per (producer, consumer) ring (16 bytes each;
 * one slot per target of a packet, so a video burst to a few hundred
 * subscribers on another worker fits between two drains) and pooled
 * buffers per producing worker (about 1.5 KiB each, one per packet). */
#define MOAT_GATEWAY_RELAY_RING_SLOTS   2048
#define MOAT_GATEWAY_RELAY_POOL_BUFFERS 1024

typedef struct moat_gateway {
    moat_config config;
    moat_prefilter_settings prefilter;
    moat_data_limits data_limits; /* shared by the workers, see data_limits.h */
    moat_certificate *certificate;
    moat_dtls_context *dtls_context;
    moat_worker **workers;
    unsigned n_workers;
    /* Moat's own UDP sockets (engine/own_sockets.h): the workers', ng's,
     * the call legs' and the ingests' ports, for the loop guard. */
    moat_own_sockets *own_sockets;
    struct moat_relay *relay; /* routing core's cross-worker rings (relay.h) */
    unsigned next_worker;
    moat_plugin_registry *plugins;
    moat_session_registry *sessions;
    moat_http_server *http;
    moat_ng_server *ng; /* ng control socket (gateway/app/ng_gateway.h); NULL: off */
    moat_stats_snapshot *stats;
    struct moat_call_registry *calls; /* calls relayed for a SIP proxy (call/call_registry.h) */
    struct moat_cluster *cluster;     /* [cluster] (cluster/cluster.h); NULL: a single node */
    /* /healthz's cached check of [record] dir (record/record_dir.h): made
     * by http/health.c at the first request, freed at the stop. */
    struct moat_record_dir_health *record_health;
    GMainLoop *loop;
    /* Host candidate addresses (text), shared by every worker's port. */
    char candidate_addresses[MOAT_MAX_CANDIDATE_ADDRESSES][64];
    size_t n_candidate_addresses;
    uint64_t started_us;
    /* Where a generated API token is written once every port is bound
     * (api_token.h); NULL: none generated. Start-up only. */
    char *token_path;
    /* Admission control (control thread) */
    moat_admission *admission;
    moat_admission *create_admission; /* POST to a plugin's api_path (room creation) */
    char **api_host_names;            /* Host headers /api/ answers (http_host.h) */
    gint pending_sessions; /* atomic: sessions not yet ICE-connected; workers decrement */
    moat_source_counts *pending_sources; /* the same per source (IPv4, IPv6 /56) */
    uint64_t session_serial;             /* the last session's public label (/metrics, /api) */
    uint64_t refused[MOAT_REFUSED_REASON_COUNT];
    moat_log_limiter http_log; /* per-request log lines */
    /* Why the kernel filter is not in use ("" when it is); for /metrics. */
    char kernel_filter_note[160];
    GArray *http_routes; /* routes features answer (moat_http_route_register) */
    /* Hooks a feature above the HTTP layer (cluster/) sets through
     * http_router.h; kept as generic function pointers so that this layer
     * names no HTTP type. NULL: none. */
    void (*http_offer_hook)(void);
    void *http_offer_hook_user;
    /* The cluster's forward token (moat_http_forward_token_set); "": none. */
    char http_forward_token[65];
    void (*http_resource_hook)(void);
    void *http_resource_hook_user;
    void (*http_api_hook)(void);
    void *http_api_hook_user;
    void (*metrics_hook)(void);
    void *metrics_hook_user;
    void (*health_hook)(void);
    void *health_hook_user;
} moat_gateway;

/* Picks the worker with the fewest sessions. */
moat_worker *moat_gateway_pick_worker(moat_gateway *gateway);
/* Our candidates for a worker: every candidate address on its port. */
size_t moat_gateway_candidates(const moat_gateway *gateway, const moat_worker *worker,
                               moat_sdp_candidate *out, size_t capacity);
/* The ICE priority of the candidate on the index-th candidate address:
 * earlier addresses first, loopback ones (127/8, ::1) below all others. */
uint32_t moat_gateway_candidate_priority(size_t index, const char *address);

#endif
