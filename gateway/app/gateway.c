/* The daemon's composition (gateway.h): start-up and shut-down of every module
 * in order, on the control thread. */
#include "app/gateway.h"
#include "record/record_dir.h"

#include "engine/relay.h"
#include "session/session_handle.h"
#include "session/gateway_state.h"

#include "call/call_registry.h"

#include "http/api_token.h"
#include "http/http_server.h"
#include "base/log.h"
#include "session/stats_snapshot.h"
#include "session/session_internal.h"
#include "session/whip_session.h"
#include "dtls/certificate.h"
#include "dtls/dtls_context.h"
#include "ice/ice_candidates.h"
#include "app/http_routes.h"
#include "cluster/cluster.h"
#include "app/ng_gateway.h"
#include "record/record_api.h"
#include "sctp/sctp_stack.h"
#include "srtp/srtp_session.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static int load_certificate(moat_gateway *gateway, char *error, size_t error_size)
{
    const moat_config *config = &gateway->config;
    if (config->certificate && *config->certificate)
        gateway->certificate =
            moat_certificate_load(config->certificate, config->private_key, error, error_size);
    else
        gateway->certificate = moat_certificate_generate(error, error_size);
    if (!gateway->certificate)
        return -1;
    gateway->dtls_context = moat_dtls_context_new(gateway->certificate, error, error_size);
    return gateway->dtls_context ? 0 : -1;
}

typedef enum { CANDIDATE_ADDED, CANDIDATE_LISTED, CANDIDATE_FULL } candidate_added;

static candidate_added add_candidate_address(moat_gateway *gateway, const char *text)
{
    for (size_t i = 0; i < gateway->n_candidate_addresses; i++) {
        if (strcmp(gateway->candidate_addresses[i], text) == 0)
            return CANDIDATE_LISTED;
    }
    if (gateway->n_candidate_addresses == MOAT_MAX_CANDIDATE_ADDRESSES)
        return CANDIDATE_FULL;
    g_strlcpy(gateway->candidate_addresses[gateway->n_candidate_addresses++], text, 64);
    return CANDIDATE_ADDED;
}

/* Host addresses beyond the candidates' room: named in one warning at
 * start (the first few of them), not left out silently. */
typedef struct {
    GString *names;
    size_t count;
} left_out_addresses;

#define LEFT_OUT_NAMED 8

static void note_left_out(left_out_addresses *left_out, const char *text)
{
    if (left_out->count++ < LEFT_OUT_NAMED)
        g_string_append_printf(left_out->names, "%s%s", left_out->names->len ? ", " : "", text);
}

static void warn_left_out(left_out_addresses *left_out, bool configured)
{
    if (left_out->count > LEFT_OUT_NAMED)
        g_string_append_printf(left_out->names, " and %zu more", left_out->count - LEFT_OUT_NAMED);
    if (left_out->count && configured)
        moat_log_warn("gateway",
                      "[media] candidate_addresses lists more than the %d ICE candidates a "
                      "session offers (announced_address, when set, takes the first): %zu left "
                      "out (%s)",
                      MOAT_MAX_CANDIDATE_ADDRESSES, left_out->count, left_out->names->str);
    else if (left_out->count)
        moat_log_warn("gateway",
                      "%zu host addresses left out of the %d ICE candidates a session offers "
                      "(%s); set [media] candidate_addresses to the addresses clients reach",
                      left_out->count, MOAT_MAX_CANDIDATE_ADDRESSES, left_out->names->str);
    g_string_free(left_out->names, TRUE);
}

/* More than any host has: only the count of those beyond is kept. */
#define HOST_ADDRESSES_MAX 256

/* The interfaces' addresses in the room the announced one left, as
 * moat_ice_host_addresses orders them: non-loopback first, each family's
 * first address kept. */
static void gather_host_addresses(moat_gateway *gateway, left_out_addresses *left_out)
{
    moat_ice_gather_options options = {
        .keep = MOAT_MAX_CANDIDATE_ADDRESSES - gateway->n_candidate_addresses,
        .include_loopback = gateway->config.include_loopback,
        .include_ipv6 = true,
    };
    moat_ice_address *addresses = g_new0(moat_ice_address, HOST_ADDRESSES_MAX);
    int n = moat_ice_host_addresses(addresses, HOST_ADDRESSES_MAX, &options);
    if (n < 0) {
        /* Said, not counted as addresses left out: the start goes on with
         * the announced address, if any. */
        moat_log_warn("gateway", "cannot list the interfaces' addresses: %s", g_strerror(errno));
        g_free(addresses);
        return;
    }
    size_t written = n > HOST_ADDRESSES_MAX ? HOST_ADDRESSES_MAX : n > 0 ? (size_t)n : 0;
    for (size_t i = 0; i < written; i++) {
        if (add_candidate_address(gateway, addresses[i].text) == CANDIDATE_FULL)
            note_left_out(left_out, addresses[i].text);
    }
    left_out->count += (size_t)n > written ? (size_t)n - written : 0;
    g_free(addresses);
}

/* [media] candidate_addresses, in its order. */
static int add_configured_addresses(moat_gateway *gateway, left_out_addresses *left_out,
                                    char *error, size_t error_size)
{
    char **parts = g_strsplit(gateway->config.candidate_addresses, ",", -1);
    for (char **part = parts; *part; part++) {
        char *text = g_strstrip(*part);
        unsigned char probe[16];
        if (inet_pton(AF_INET, text, probe) != 1 && inet_pton(AF_INET6, text, probe) != 1) {
            snprintf(error, error_size, "[media] candidate_addresses: \"%s\" is not an IP address",
                     text);
            g_strfreev(parts);
            return -1;
        }
        if (add_candidate_address(gateway, text) == CANDIDATE_FULL)
            note_left_out(left_out, text);
    }
    g_strfreev(parts);
    return 0;
}

static int gather_candidate_addresses(moat_gateway *gateway, char *error, size_t error_size)
{
    const moat_config *config = &gateway->config;
    left_out_addresses left_out = {g_string_new(NULL), 0};
    bool configured = config->candidate_addresses && *config->candidate_addresses;
    if (config->announced_address && *config->announced_address)
        add_candidate_address(gateway, config->announced_address);
    if (configured) {
        if (add_configured_addresses(gateway, &left_out, error, error_size) != 0) {
            g_string_free(left_out.names, TRUE);
            return -1;
        }
    } else {
        gather_host_addresses(gateway, &left_out);
    }
    warn_left_out(&left_out, configured);
    if (gateway->n_candidate_addresses == 0) {
        snprintf(error, error_size, "no address to announce as an ICE candidate");
        return -1;
    }
    return 0;
}

/* What moat_gateway_candidates announces, as the worker compares it with a
 * datagram's destination: pair priorities need our candidate's priority. */
static void set_worker_candidates(const moat_gateway *gateway, moat_worker *worker)
{
    struct in6_addr addresses[MOAT_WORKER_MAX_CANDIDATES];
    uint32_t priorities[MOAT_WORKER_MAX_CANDIDATES];
    size_t n = 0;
    for (size_t i = 0; i < gateway->n_candidate_addresses && n < MOAT_WORKER_MAX_CANDIDATES; i++) {
        struct in_addr v4;
        memset(&addresses[n], 0, sizeof addresses[n]);
        if (inet_pton(AF_INET, gateway->candidate_addresses[i], &v4) == 1) {
            addresses[n].s6_addr[10] = 0xff;
            addresses[n].s6_addr[11] = 0xff;
            memcpy(&addresses[n].s6_addr[12], &v4, 4);
        } else if (inet_pton(AF_INET6, gateway->candidate_addresses[i], &addresses[n]) != 1) {
            continue;
        }
        priorities[n++] = moat_gateway_candidate_priority(i, gateway->candidate_addresses[i]);
    }
    moat_worker_set_candidates(worker, addresses, priorities, n);
}

static void prefilter_settings_from_config(moat_gateway *gateway)
{
    const moat_config *config = &gateway->config;
    moat_prefilter_settings *settings = &gateway->prefilter;
    settings->mode = (moat_detector_mode)moat_config_prefilter_mode(config);
    settings->hold_ms = (uint32_t)config->detector_hold_ms;
    settings->rate_factor = config->detector_rate_factor;
    settings->min_excess_pps = 200;
    settings->auth_failures_per_s = (uint32_t)config->detector_auth_failures_per_s;
    settings->budget_percent = (uint32_t)config->budget_percent;
    settings->budget_min_pps = (uint32_t)config->budget_min_pps;
    settings->legacy_budget_factor = config->legacy_budget_factor;
    /* SRTPPLUS.md section 5 defaults. */
    settings->window_behind = 1024;
    settings->window_ahead = 4096;
    /* A worker socket sees every transport's traffic: its thresholds are
     * those of ten transports. */
    settings->worker_failures_per_s = 10u * settings->auth_failures_per_s;
    settings->worker_min_excess_pps = 5000;
    settings->session_media_bytes_per_s = (uint64_t)config->session_media_kbps * 1000u / 8u;
}

/* [prefilter] kernel: every worker socket gets the eBPF filter, or (auto)
 * none does and the user-space prefilter works alone. */
static int attach_kernel_filters(moat_gateway *gateway, char *error, size_t error_size)
{
    const char *mode = gateway->config.prefilter_kernel;
    if (strcmp(mode, "off") == 0) {
        g_strlcpy(gateway->kernel_filter_note, "off by configuration",
                  sizeof gateway->kernel_filter_note);
        return 0;
    }
    char reason[256] = "";
    for (unsigned i = 0; i < gateway->n_workers; i++) {
        if (moat_worker_attach_kernel_filter(gateway->workers[i], reason, sizeof reason) == 0)
            continue;
        if (strcmp(mode, "on") == 0) {
            snprintf(error, error_size, "[prefilter] kernel = on: %s", reason);
            return -1;
        }
        /* All or none: one worker without the filter would defend differently. */
        for (unsigned j = 0; j < gateway->n_workers; j++)
            moat_worker_detach_kernel_filter(gateway->workers[j]);
        g_strlcpy(gateway->kernel_filter_note, reason, sizeof gateway->kernel_filter_note);
        moat_log_warn("prefilter",
                      "kernel filter unavailable (%s): the user-space prefilter works alone",
                      reason);
        return 0;
    }
    gateway->kernel_filter_note[0] = '\0';
    moat_log_info("prefilter", "kernel filter: eBPF socket filter on %u worker sockets",
                  gateway->n_workers);
    return 0;
}

/* The call layer's "own endpoints" query (call/call_address.h): the ports
 * Moat has bound outside the call legs: HTTP (TCP), and every UDP socket
 * the record of its own sockets holds now (ng, workers, ingests). */
static bool gateway_own_port(void *user, uint16_t port)
{
    const moat_gateway *gateway = user;
    const moat_config *config = &gateway->config;
    if (port == config->http_port || (config->ng_port && port == config->ng_port))
        return true;
    return moat_own_sockets_holds(gateway->own_sockets, port);
}

/* Rank of a candidate address for call SDPs: IPv4 before IPv6 (phones and
 * proxies mostly speak IPv4), an interface's address before loopback (a
 * phone on another host cannot reach 127.0.0.1 or ::1). Lower is better. */
static int call_address_rank(const char *address)
{
    bool v6 = strchr(address, ':') != NULL;
    bool loopback = v6 ? strcmp(address, "::1") == 0 : strncmp(address, "127.", 4) == 0;
    return (loopback ? 2 : 0) + (v6 ? 1 : 0);
}

/* The address call SDPs announce: [media] announced_address, else the
 * best-ranked candidate address (the first of equal rank), else loopback. */
static const char *call_address(const moat_gateway *gateway)
{
    const char *address = gateway->config.announced_address;
    if (address && *address)
        return address;
    address = NULL;
    for (size_t i = 0; i < gateway->n_candidate_addresses; i++) {
        const char *candidate = gateway->candidate_addresses[i];
        if (!address || call_address_rank(candidate) < call_address_rank(address))
            address = candidate;
    }
    return address ? address : "127.0.0.1";
}

/* Says which address call SDPs name; a loopback one (a host with no other
 * address, or one set so) is a warning: phones elsewhere cannot reach it. */
static void log_call_address(const moat_gateway *gateway)
{
    if (!gateway->config.ng_port)
        return;
    const char *address = call_address(gateway);
    if (call_address_rank(address) >= 2)
        moat_log_warn("gateway",
                      "call SDPs announce %s, a loopback address: phones on other hosts cannot "
                      "reach it; set [media] announced_address",
                      address);
    else
        moat_log_info("gateway", "call SDPs announce %s ([media] announced_address sets it)",
                      address);
}

/* The call layer: its legs' ports and the address its SDPs announce. */
static int start_calls(moat_gateway *gateway, char *error, size_t error_size)
{
    const char *address = call_address(gateway);
    moat_call_settings settings = {
        .workers = gateway->workers,
        .n_workers = gateway->n_workers,
        .bind_address = gateway->config.media_bind,
        .port_min = gateway->config.media_port_min,
        .port_max = gateway->config.media_port_max,
        .address = address,
        .delete_delay_s = gateway->config.ng_delete_delay_s,
        .max_calls = gateway->config.ng_max_calls,
        .max_load = gateway->config.ng_max_load,
        .media_timeout_s = gateway->config.call_media_timeout_s,
        .silent_timeout_s = gateway->config.call_silent_timeout_s,
        .max_transcoders = gateway->config.call_max_transcoders,
        .webrtc = {gateway, &moat_session_gateway_calls},
        .allow_loopback_destinations = gateway->config.call_allow_loopback_destinations,
        .denied_networks = gateway->config.call_denied_networks,
        .own = {gateway_own_port, gateway},
        .own_sockets = gateway->own_sockets,
    };
    if (moat_call_learning_parse(gateway->config.call_learning, &settings.learning) != 0) {
        snprintf(error, error_size, "[call] learning = \"%s\": expected sdp, heuristic or off",
                 gateway->config.call_learning);
        return -1;
    }
    gateway->calls = moat_call_registry_new(&settings, error, error_size);
    return gateway->calls ? 0 : -1;
}

/* An API listening beyond loopback never runs open (api_token.h): the
 * token is generated before the HTTP server starts (it checks it), and
 * written to its file by write_api_token once every port is bound. */
static int generate_api_token(moat_gateway *gateway, char *error, size_t error_size)
{
    return moat_api_token_generate(&gateway->config, &gateway->token_path, error, error_size);
}

/* The token itself is never printed: only where it is. */
static int write_api_token(moat_gateway *gateway, char *error, size_t error_size)
{
    if (!gateway->token_path)
        return 0;
    if (moat_api_token_write(gateway->token_path, gateway->config.token, error, error_size) != 0)
        return -1;
    char *absolute = g_canonicalize_filename(gateway->token_path, NULL);
    moat_log_warn("http",
                  "no [http] token is configured and the API listens on %s: generated one "
                  "and wrote it to %s (mode 0600); send it as Authorization: Bearer <token>",
                  gateway->config.http_bind, absolute);
    g_free(absolute);
    return 0;
}

/* A recording folder the process cannot write to fails every recording:
 * said loudly at start, and /healthz answers 503 while it lasts (health.h). */
static void warn_unwritable_record_dir(moat_gateway *gateway)
{
    const char *dir = gateway->config.record_dir;
    char why[160] = "";
    if (dir && *dir && !moat_record_dir_writable(dir, why, sizeof why))
        moat_log_error("record",
                       "[record] dir %s is not writable: %s; every recording will fail and "
                       "/healthz answers 503 until it is fixed",
                       dir, why);
}

/* More workers than processors add no throughput, and each costs memory
 * growing with the square of their number (the relay's (n + 1) x n rings of
 * MOAT_GATEWAY_RELAY_RING_SLOTS, sized against loss: 128 workers took 2 GB
 * idle, 256 took 5.3 GB) and start-up time (256: 17 s). Said once, before
 * the wait. */
static void warn_workers_beyond_processors(unsigned n_workers)
{
    unsigned processors = g_get_num_processors();
    if (n_workers <= processors)
        return;
    size_t mib = moat_relay_memory_bytes(n_workers, MOAT_GATEWAY_RELAY_RING_SLOTS,
                                         MOAT_GATEWAY_RELAY_POOL_BUFFERS) >>
                 20;
    char fields[128];
    snprintf(fields, sizeof fields, "workers=%u processors=%u relay_mib=%zu", n_workers, processors,
             mib);
    moat_log_write(MOAT_LOG_WARN, "gateway", fields,
                   "[general] workers = %u is more than the %u processors: the workers beyond "
                   "them add no throughput, the relay between workers takes %zu MiB (it grows "
                   "with the square of the workers) and the start takes longer; 0 = one worker "
                   "per processor",
                   n_workers, processors, mib);
}

int moat_gateway_start(moat_gateway *gateway, char *error, size_t error_size)
{
    prefilter_settings_from_config(gateway);
    moat_data_limits_init(&gateway->data_limits, (size_t)gateway->config.datachannel_session_bytes,
                          (size_t)gateway->config.datachannel_total_mib * 1024u * 1024u);
    gateway->data_limits.plpmtud_max_packet =
        gateway->config.datachannel_plpmtud ? (size_t)gateway->config.datachannel_max_packet : 0;
    moat_log_set_level((moat_log_level)moat_log_level_parse(gateway->config.log_level));
    gateway->started_us = (uint64_t)g_get_monotonic_time();
    if (moat_srtp_library_init() != 0) {
        snprintf(error, error_size, "cannot initialise libsrtp");
        return -1;
    }
    if (moat_sctp_stack_init() != 0) {
        snprintf(error, error_size, "cannot initialise the SCTP stack");
        return -1;
    }
    if (load_certificate(gateway, error, error_size) != 0)
        return -1;
    if (gather_candidate_addresses(gateway, error, error_size) != 0)
        return -1;
    unsigned n = moat_config_worker_count(&gateway->config);
    if ((unsigned)gateway->config.media_port + n - 1 > 65535) {
        snprintf(error, error_size, "[media] port %d + %u workers runs past port 65535",
                 gateway->config.media_port, n);
        return -1;
    }
    const char *binds[] = {gateway->config.media_bind, gateway->config.ng_bind};
    gateway->own_sockets = moat_own_sockets_new_for_binds(binds, G_N_ELEMENTS(binds));
    warn_workers_beyond_processors(n);
    gateway->workers = g_new0(moat_worker *, n);
    for (unsigned i = 0; i < n; i++) {
        gateway->workers[i] =
            moat_worker_new(i, gateway->config.media_bind,
                            (uint16_t)(gateway->config.media_port + (int)i), error, error_size);
        if (!gateway->workers[i])
            return -1;
        set_worker_candidates(gateway, gateway->workers[i]);
        moat_worker_set_prefilter(gateway->workers[i], &gateway->prefilter);
        moat_worker_set_data_limits(gateway->workers[i], &gateway->data_limits);
        moat_worker_set_own_sockets(gateway->workers[i], gateway->own_sockets);
        gateway->n_workers = i + 1;
    }
    moat_relay_ops relay_ops = moat_session_relay_ops;
    relay_ops.user = gateway->workers;
    gateway->relay = moat_relay_new(gateway->n_workers, MOAT_GATEWAY_RELAY_RING_SLOTS,
                                    MOAT_GATEWAY_RELAY_POOL_BUFFERS, &relay_ops);
    for (unsigned i = 0; i < gateway->n_workers; i++)
        moat_worker_set_relay(gateway->workers[i], gateway->relay);
    if (attach_kernel_filters(gateway, error, error_size) != 0)
        return -1;
    moat_session_plugin_calls_set_config(&gateway->config);
    gateway->plugins = moat_plugin_registry_load(gateway->config.plugin_dir,
                                                 &moat_session_gateway_calls, error, error_size);
    if (!gateway->plugins)
        return -1;
    gateway->sessions = moat_session_registry_new();
    if (start_calls(gateway, error, error_size) != 0)
        return -1;
    moat_whip_bind_gateway(gateway);
    if (generate_api_token(gateway, error, error_size) != 0)
        return -1;
    gateway->http = moat_http_server_start(gateway, error, error_size);
    if (!gateway->http)
        return -1;
    /* Before the main loop serves the first request. */
    moat_app_register_http_routes(gateway);
    if (moat_config_cluster_enabled(&gateway->config)) {
        gateway->cluster = moat_cluster_start(gateway, error, error_size);
        if (!gateway->cluster)
            return -1;
    }
    if (moat_gateway_ng_start(gateway, error, error_size) != 0)
        return -1;
    for (unsigned i = 0; i < gateway->n_workers; i++) {
        if (moat_worker_start(gateway->workers[i], error, error_size) != 0)
            return -1;
    }
    /* Last: a start that failed on a port in use (a Moat already running)
     * has not replaced that Moat's token file. */
    if (write_api_token(gateway, error, error_size) != 0)
        return -1;
    gateway->stats = moat_stats_snapshot_start(gateway);
    moat_log_info("gateway", "moat %s up: %s %s:%d, %u media workers on udp %d-%d, fingerprint %s",
                  MOAT_VERSION, *gateway->config.http_tls_cert ? "https" : "http",
                  gateway->config.http_bind, gateway->config.http_port, gateway->n_workers,
                  gateway->config.media_port,
                  gateway->config.media_port + (int)gateway->n_workers - 1,
                  moat_certificate_fingerprint(gateway->certificate));
    for (size_t i = 0; i < gateway->n_candidate_addresses; i++)
        moat_log_info("gateway", "candidate address %s", gateway->candidate_addresses[i]);
    log_call_address(gateway);
    warn_unwritable_record_dir(gateway);
    return 0;
}

/* Set by a second stop signal: the drain wait ends at once. */
static volatile sig_atomic_t hurry;

void moat_gateway_hurry(void)
{
    hurry = 1;
}

static void on_stop_signal(int signal_number)
{
    (void)signal_number;
    hurry = 1;
}

void moat_gateway_catch_stop_signals(void)
{
    struct sigaction action = {.sa_handler = on_stop_signal};
    sigemptyset(&action.sa_mask);
    int signals[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < G_N_ELEMENTS(signals); i++)
        sigaction(signals[i], &action, NULL);
}

static unsigned sessions_left(moat_gateway *gateway)
{
    unsigned left = 0;
    for (unsigned i = 0; i < gateway->n_workers; i++)
        left += moat_worker_session_count(gateway->workers[i]);
    return left;
}

/* On SIGTERM sessions end as on a hang-up: data channels drain (SCTP
 * shutdown, then close_notify) so no message already sent is lost. Those
 * still draining after 6 s, or when a second signal came, are cut when
 * their worker stops (moat_worker_stop: SCTP ABORT to the peer). */
static void drain_sessions(moat_gateway *gateway)
{
    for (unsigned i = 0; i < gateway->n_workers; i++)
        moat_worker_end_sessions(gateway->workers[i]);
    for (int waited_ms = 0; waited_ms < 6000; waited_ms += 10) {
        if (sessions_left(gateway) == 0)
            return;
        if (hurry) {
            moat_log_warn("gateway", "shutdown: second signal: %u sessions still draining are cut",
                          sessions_left(gateway));
            return;
        }
        g_usleep(10000);
    }
    moat_log_warn("gateway", "shutdown: %u sessions still draining after 6 s are cut",
                  sessions_left(gateway));
}

void moat_gateway_stop(moat_gateway *gateway)
{
    moat_cluster_free(gateway->cluster);
    gateway->cluster = NULL;
    moat_gateway_ng_stop(gateway);
    moat_http_server_stop(gateway->http);
    gateway->http = NULL;
    /* Sessions hung up before the stop may still be draining: every
     * worker's sessions count, listed or not. */
    if (gateway->sessions)
        drain_sessions(gateway);
    moat_stats_snapshot_stop(gateway->stats);
    gateway->stats = NULL;
    /* Calls after the workers stopped (their legs close at once), before
     * the workers are freed. */
    for (unsigned i = 0; i < gateway->n_workers; i++)
        moat_worker_stop(gateway->workers[i]);
    moat_call_registry_free(gateway->calls);
    gateway->calls = NULL;
    for (unsigned i = 0; i < gateway->n_workers; i++)
        moat_worker_free(gateway->workers[i]);
    /* After the workers: entries still queued release their handles. */
    moat_relay_free(gateway->relay);
    gateway->relay = NULL;
    g_free(gateway->workers);
    gateway->workers = NULL;
    gateway->n_workers = 0;
    moat_own_sockets_free(gateway->own_sockets); /* after every socket it records */
    gateway->own_sockets = NULL;
    moat_record_api_stop(); /* sessions are gone: let their recordings finish */
    moat_record_dir_health_free(gateway->record_health);
    gateway->record_health = NULL;
    moat_whip_bind_gateway(NULL);
    /* After the workers: no session holds a source's pending count now. */
    moat_source_counts_free(gateway->pending_sources);
    gateway->pending_sources = NULL;
    moat_session_registry_free(gateway->sessions);
    gateway->sessions = NULL;
    moat_plugin_registry_free(gateway->plugins);
    gateway->plugins = NULL;
    moat_dtls_context_free(gateway->dtls_context);
    moat_certificate_free(gateway->certificate);
    gateway->dtls_context = NULL;
    gateway->certificate = NULL;
    g_free(gateway->token_path);
    gateway->token_path = NULL;
}
