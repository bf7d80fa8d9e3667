/* Reads the configuration: defaults, file, environment, options (config.h). */
#include "base/config.h"

#include "base/config_paths.h" /* generated: gateway/meson.build */
#include "base/log.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { OPTION_STRING, OPTION_INT, OPTION_BOOL, OPTION_DOUBLE } option_type;

typedef struct {
    const char *section;
    const char *key;
    const char *cli_name;
    option_type type;
    size_t offset;
    const char *default_value;
    long min, max; /* for integers */
    const char *help;
} option_spec;

#define FIELD(name) offsetof(moat_config, name)

static const option_spec options[] = {
    {"general", "log_level", "log-level", OPTION_STRING, FIELD(log_level), "info", 0, 0,
     "error | warn | info | debug"},
    {"general", "workers", "workers", OPTION_INT, FIELD(workers), "0", 0, 256,
     "media worker threads; 0 = one per core"},
    {"general", "plugin_dir", "plugin-dir", OPTION_STRING, FIELD(plugin_dir),
     MOAT_DEFAULT_PLUGIN_DIR, 0, 0,
     "folder searched for plugin modules (an installed moat: <bindir>/" MOAT_INSTALLED_PLUGIN_DIR
     ")"},
    {"http", "bind", "http-bind", OPTION_STRING, FIELD(http_bind), "0.0.0.0", 0, 0,
     "address of the HTTP API"},
    {"http", "port", "http-port", OPTION_INT, FIELD(http_port), "8088", 1, 65535,
     "TCP port of the HTTP API (WHIP, JSON API, /metrics, demo pages)"},
    {"http", "token", "token", OPTION_STRING, FIELD(token), "", 0, 0,
     "bearer token required on the API (/api/); empty = none when the API binds loopback only, "
     "otherwise a random one is generated and written to [http] token_file"},
    {"http", "token_file", "token-file", OPTION_STRING, FIELD(token_file), "", 0, 0,
     "file (mode 0600) a generated API token is written to; empty = "
     "$XDG_RUNTIME_DIR/moat/token, or ./moat-token without XDG_RUNTIME_DIR"},
    {"http", "whip_token", "whip-token", OPTION_STRING, FIELD(whip_token), "", 0, 0,
     "bearer token required on WHIP/WHEP offers; empty = WHIP and WHEP are open (RFC 9725)"},
    {"http", "web_root", "web-root", OPTION_STRING, FIELD(web_root), MOAT_DEFAULT_WEB_ROOT, 0, 0,
     "folder of the demo pages and dashboard (an installed moat: <bindir>/" MOAT_INSTALLED_WEB_ROOT
     ")"},
    {"http", "tls_cert", "http-tls-cert", OPTION_STRING, FIELD(http_tls_cert), "", 0, 0,
     "PEM certificate (chain) the HTTP port serves HTTPS with (API, WHIP/WHEP, pages, event "
     "WebSockets); empty = plain HTTP"},
    {"http", "tls_key", "http-tls-key", OPTION_STRING, FIELD(http_tls_key), "", 0, 0,
     "PEM private key of [http] tls_cert"},
    {"http", "max_body_bytes", "max-body-bytes", OPTION_INT, FIELD(max_body_bytes), "65536", 1024,
     16 * 1024 * 1024, "request bodies over this many bytes are refused (413) before being read"},
    {"http", "request_timeout_s", "request-timeout", OPTION_INT, FIELD(request_timeout_s), "10", 0,
     3600,
     "seconds from a connection's accept (or its request's start) to the end of the request "
     "body; then it is closed (408); 0 = no limit"},
    {"http", "max_connections", "max-connections", OPTION_INT, FIELD(max_connections), "1024", 0,
     1000000, "open API connections at once; more are closed at accept; 0 = no limit"},
    {"http", "max_connections_per_source", "max-connections-per-source", OPTION_INT,
     FIELD(max_connections_per_source), "64", 0, 1000000,
     "open API connections from one IPv4 address or IPv6 /64; more are closed at accept; 0 = no "
     "limit"},
    {"http", "metrics_token", "metrics-token", OPTION_STRING, FIELD(metrics_token), "", 0, 0,
     "bearer token required on /metrics; empty = /metrics is open"},
    {"http", "api_origins", "api-origins", OPTION_STRING, FIELD(api_origins), "", 0, 0,
     "comma-separated origins allowed to call /api/ from a browser; empty = same origin only"},
    {"http", "server_names", "server-names", OPTION_STRING, FIELD(server_names), "", 0, 0,
     "comma-separated host names (or addresses) /api/ answers to, besides localhost, the bound "
     "address and the host's own addresses; other Host headers get 421 (DNS rebinding)"},
    {"http", "max_event_listeners", "max-event-listeners", OPTION_INT, FIELD(max_event_listeners),
     "256", 1, 1000000, "event WebSocket listeners at once (/api/events and plugins' events)"},
    {"http", "max_event_listeners_per_source", "max-event-listeners-per-source", OPTION_INT,
     FIELD(max_event_listeners_per_source), "16", 1, 1000000,
     "event WebSocket listeners from one IPv4 address or IPv6 /64"},
    {"http", "event_queue_bytes", "event-queue-bytes", OPTION_INT, FIELD(event_queue_bytes),
     "1048576", 4096, 1073741824,
     "unsent bytes an event listener may hold; a listener that does not read is closed beyond"},
    {"limits", "max_sessions", "max-sessions", OPTION_INT, FIELD(max_sessions), "1000", 0, 1000000,
     "sessions at once; more offers get 503; 0 = no limit"},
    {"limits", "max_pending_sessions", "max-pending-sessions", OPTION_INT,
     FIELD(max_pending_sessions), "100", 0, 1000000,
     "sessions not yet ICE-connected at once; more offers get 503; 0 = no limit"},
    {"limits", "pending_timeout_s", "pending-timeout", OPTION_INT, FIELD(pending_timeout_s), "10",
     1, 3600, "seconds a session may wait for its first valid ICE check"},
    {"limits", "whip_rate_per_ip", "whip-rate-per-ip", OPTION_INT, FIELD(whip_rate_per_ip), "10", 0,
     1000000,
     "WHIP offers per second from one IPv4 address or IPv6 /64 (429 beyond); 0 = no limit"},
    {"limits", "whip_burst_per_ip", "whip-burst-per-ip", OPTION_INT, FIELD(whip_burst_per_ip), "30",
     1, 1000000, "burst of WHIP offers one source may send at once"},
    {"limits", "max_pending_per_source", "max-pending-per-source", OPTION_INT,
     FIELD(max_pending_per_source), "5", 0, 1000000,
     "sessions not yet ICE-connected from one IPv4 address or IPv6 /56; more offers get 429; 0 = "
     "no limit"},
    {"limits", "ingest_per_source", "ingest-per-source", OPTION_INT, FIELD(ingest_per_source), "4",
     0, 1000000,
     "live RTP ingests started from one IPv4 address or IPv6 /56; more get 429; 0 = no limit"},
    {"limits", "ingest_idle_timeout_s", "ingest-idle-timeout", OPTION_INT,
     FIELD(ingest_idle_timeout_s), "30", 1, 86400,
     "seconds an RTP ingest may go without a valid packet before it ends and frees its port"},
    {"media", "bind", "media-bind", OPTION_STRING, FIELD(media_bind), "::", 0, 0,
     "address of the UDP media sockets (:: = every IPv4 and IPv6 address)"},
    {"media", "port", "media-port", OPTION_INT, FIELD(media_port), "20000", 1, 65535,
     "first UDP media port; worker i uses port + i"},
    {"media", "announced_address", "announced-address", OPTION_STRING, FIELD(announced_address), "",
     0, 0,
     "public address announced as a candidate (1:1 NAT) and in call SDPs; empty = calls name "
     "the first non-loopback IPv4 candidate"},
    {"media", "candidate_addresses", "candidate-addresses", OPTION_STRING,
     FIELD(candidate_addresses), "", 0, 0,
     "comma-separated host candidate addresses; empty = the interfaces' addresses"},
    {"media", "include_loopback", "include-loopback", OPTION_BOOL, FIELD(include_loopback), "true",
     0, 0, "announce loopback addresses as candidates"},
    {"media", "consent_timeout_s", "consent-timeout", OPTION_INT, FIELD(consent_timeout_s), "30", 5,
     3600, "seconds without a valid STUN check before a transport is closed"},
    {"media", "lossy_playout_delay_max_ms", "lossy-playout-delay-max", OPTION_INT,
     FIELD(lossy_playout_delay_max_ms), "400", 0, 10000,
     "toward a viewer whose NACKs cover 1 % or more of the video sent to it, ask its jitter "
     "buffer (playout-delay header extension) to hold video about 1.5 round trips, at most this "
     "many ms, so a retransmission arrives before its frame is due; 0 = never"},
    {"media", "port_min", "media-port-min", OPTION_INT, FIELD(media_port_min), "30000", 1024, 65535,
     "first UDP port of call legs (ng offers: RTP even, RTCP = RTP + 1) and RTP ingests"},
    {"media", "port_max", "media-port-max", OPTION_INT, FIELD(media_port_max), "39999", 1024, 65535,
     "last UDP port of call legs and RTP ingests; when all are in use offers get \"Ran out of "
     "ports\""},
    {"dtls", "certificate", "certificate", OPTION_STRING, FIELD(certificate), "", 0, 0,
     "PEM certificate; empty = a self-signed ECDSA P-256 one made at start"},
    {"dtls", "private_key", "private-key", OPTION_STRING, FIELD(private_key), "", 0, 0,
     "PEM private key of the certificate"},
    {"prefilter", "mode", "prefilter-mode", OPTION_STRING, FIELD(prefilter_mode), "auto", 0, 0,
     "off | auto | always: when the SRTP prefilter enforces"},
    {"prefilter", "kernel", "prefilter-kernel", OPTION_STRING, FIELD(prefilter_kernel), "auto", 0,
     0,
     "auto | on | off: eBPF socket filter dropping forgeries in the kernel (auto: if BPF works)"},
    {"prefilter", "srtpplus", "srtpplus", OPTION_BOOL, FIELD(srtpplus), "true", 0, 0,
     "offer/accept SRTP+ tags (a=srtpplus) in SDP"},
    {"prefilter", "hold_ms", "detector-hold-ms", OPTION_INT, FIELD(detector_hold_ms), "2000", 100,
     600000, "time without anomaly before the detector switches off"},
    {"prefilter", "rate_factor", "detector-rate-factor", OPTION_DOUBLE, FIELD(detector_rate_factor),
     "4.0", 0, 0, "ingress rate above this multiple of the learned baseline is an anomaly"},
    {"prefilter", "auth_failures_per_s", "detector-auth-failures", OPTION_INT,
     FIELD(detector_auth_failures_per_s), "50", 1, 1000000,
     "srtp_unprotect failures per second that count as an anomaly"},
    {"prefilter", "budget_percent", "budget-percent", OPTION_INT, FIELD(budget_percent), "10", 1,
     1000, "unverifiable packets allowed to reach HMAC, in % of the learned rate"},
    {"prefilter", "budget_min_pps", "budget-min-pps", OPTION_INT, FIELD(budget_min_pps), "20", 1,
     1000000, "floor of that verification budget, packets per second"},
    {"prefilter", "legacy_budget_factor", "legacy-budget-factor", OPTION_DOUBLE,
     FIELD(legacy_budget_factor), "2.0", 0, 0,
     "peers without SRTP+, worker overloaded: a flooded stream keeps at least this multiple of its "
     "learned rate, admitted with one chance for every packet"},
    {"limits", "datachannel_session_bytes", "datachannel-session-bytes", OPTION_INT,
     FIELD(datachannel_session_bytes), "16777216", 4194304, 1073741824,
     "data-channel memory of one session (SCTP buffers and queued messages); more is refused"},
    {"limits", "datachannel_total_mib", "datachannel-total-mib", OPTION_INT,
     FIELD(datachannel_total_mib), "1024", 4, 1048576,
     "data-channel memory of all sessions together, MiB; beyond it channels are refused"},
    {"datachannel", "plpmtud", "plpmtud", OPTION_BOOL, FIELD(datachannel_plpmtud), "true", 0, 0,
     "packetization-layer path MTU discovery (RFC 8899): SCTP packets grow from 1200 bytes to "
     "what the path carries"},
    {"datachannel", "max_packet", "datachannel-max-packet", OPTION_INT,
     FIELD(datachannel_max_packet), "1500", 1200, 16384,
     "largest SCTP packet path MTU discovery probes, bytes (16384 = a DTLS record, for loopback, "
     "gateway-to-gateway links and native peers)"},
    {"turn", "uris", "turn-uris", OPTION_STRING, FIELD(turn_uris), "", 0, 0,
     "comma-separated TURN URIs handed to clients (turn:host:3478?transport=udp); empty = none"},
    {"turn", "secret", "turn-secret", OPTION_STRING, FIELD(turn_secret), "", 0, 0,
     "TURN REST API shared secret (coturn static-auth-secret)"},
    {"turn", "ttl_s", "turn-ttl", OPTION_INT, FIELD(turn_ttl_s), "3600", 60, 604800,
     "lifetime of the TURN credentials handed out (one pair per session), seconds"},
    {"record", "dir", "record-dir", OPTION_STRING, FIELD(record_dir), "", 0, 0,
     "folder recordings are written to; empty = recording off"},
    {"record", "all_sessions", "record-all-sessions", OPTION_BOOL, FIELD(record_all_sessions),
     "false", 0, 0, "record every session from its start (needs [record] dir)"},
    {"room", "max_rooms", "room-max-rooms", OPTION_INT, FIELD(room_max_rooms), "1000", 1, 10000,
     "rooms at once (explicit and implicit); more creations get 503"},
    {"room", "empty_ttl_s", "room-empty-ttl", OPTION_INT, FIELD(room_empty_ttl_s), "300", 1, 604800,
     "seconds a room made with POST /api/rooms stays once nobody is in it"},
    {"room", "create_rate_per_ip", "room-create-rate-per-ip", OPTION_INT,
     FIELD(room_create_rate_per_ip), "2", 0, 1000000,
     "POST /api/rooms per second from one IPv4 address or IPv6 /64 (429 beyond); 0 = no limit"},
    {"room", "create_burst_per_ip", "room-create-burst-per-ip", OPTION_INT,
     FIELD(room_create_burst_per_ip), "20", 1, 1000000,
     "burst of room creations one source may send at once"},
    {"room", "remb_floor_bps", "room-remb-floor", OPTION_INT, FIELD(room_remb_floor_bps), "100000",
     0, 1000000000,
     "lowest REMB target a room sends its publishers, bits/s (subscribers' estimates below it "
     "are raised to it)"},
    {"room", "nack_publishers", "room-nack-publishers", OPTION_BOOL, FIELD(room_nack_publishers),
     "true", 0, 0,
     "NACK publishers for packets lost on their way in (and PLI when a loss cannot be "
     "repaired)"},
    {"room", "send_side_bwe", "room-send-side-bwe", OPTION_BOOL, FIELD(room_send_side_bwe), "true",
     0, 0,
     "subscribers that negotiate transport-cc get their simulcast layer from Moat's sender-side "
     "estimate of their path, with probes before moving up (false: receiver reports and REMB)"},
    {"ng", "bind", "ng-bind", OPTION_STRING, FIELD(ng_bind), "127.0.0.1", 0, 0,
     "address of the ng control socket (rtpengine protocol, for Kamailio's rtpengine module)"},
    {"ng", "port", "ng-port", OPTION_INT, FIELD(ng_port), "2223", 0, 65535,
     "UDP port of the ng control socket; 0 = off"},
    {"ng", "delete_delay_s", "ng-delete-delay", OPTION_INT, FIELD(ng_delete_delay_s), "30", 0, 3600,
     "seconds a deleted call keeps relaying unless delete says delete-delay; 0 = stop now"},
    {"ng", "max_calls", "ng-max-calls", OPTION_INT, FIELD(ng_max_calls), "0", 0, 1000000,
     "calls at once; a new call beyond gets \"load limit\" when the request supports it, "
     "else the error \"Parallel session limit reached\"; 0 = no limit"},
    {"ng", "max_load", "ng-max-load", OPTION_INT, FIELD(ng_max_load), "0", 0, 100,
     "the workers' CPU load (percent of a core, averaged over the workers, sampled at new "
     "offers over at least 0.5 s) beyond which a new call gets \"load limit\" like at "
     "max_calls; 0 = no limit"},
    {"call", "learning", "call-learning", OPTION_STRING, FIELD(call_learning), "sdp", 0, 0,
     "sdp | heuristic | off: where a plain call leg accepts packets from (sdp: only the IP its "
     "party's SDP names, any port; heuristic: the first sender; off: exactly the SDP address)"},
    {"call", "allow_loopback_destinations", "call-allow-loopback-destinations", OPTION_BOOL,
     FIELD(call_allow_loopback_destinations), "false", 0, 0,
     "let SDPs name loopback media addresses (phones on this host); Moat's own sockets stay "
     "refused"},
    {"call", "denied_networks", "call-denied-networks", OPTION_STRING, FIELD(call_denied_networks),
     "", 0, 0,
     "comma-separated CIDRs (IPv4, IPv6) call legs never send to; an SDP naming one "
     "gets an ng error"},
    {"cluster", "redis", "cluster-redis", OPTION_STRING, FIELD(cluster_redis), "", 0, 0,
     "Redis of the cluster: HOST:PORT or a unix socket path; empty = no cluster (one node)"},
    {"cluster", "password", "cluster-password", OPTION_STRING, FIELD(cluster_password), "", 0, 0,
     "Redis password (AUTH; required with [cluster] redis); prefer MOAT_CLUSTER_PASSWORD"},
    {"cluster", "node_id", "cluster-node-id", OPTION_STRING, FIELD(cluster_node_id), "", 0, 0,
     "this node's name in the cluster; empty = host name:HTTP port"},
    {"cluster", "advertise_http", "cluster-advertise-http", OPTION_STRING,
     FIELD(cluster_advertise_http), "", 0, 0,
     "base URL other nodes and redirected clients use (http://10.0.0.5:8088); empty = "
     "http://<http bind>:<http port>"},
    {"cluster", "advertise_media", "cluster-advertise-media", OPTION_STRING,
     FIELD(cluster_advertise_media), "", 0, 0,
     "media address other nodes use (published in the node record); empty = the first candidate "
     "address"},
    {"cluster", "region", "cluster-region", OPTION_STRING, FIELD(cluster_region), "", 0, 0,
     "this node's region; placement prefers nodes of the offer's region"},
    {"cluster", "signalling", "cluster-signalling", OPTION_STRING, FIELD(cluster_signalling),
     "redirect", 0, 0,
     "redirect | proxy: a WHIP/WHEP offer for a room another node owns gets 307 to it, or is "
     "forwarded to it and its answer returned"},
    {"cluster", "cascade", "cluster-cascade", OPTION_STRING, FIELD(cluster_cascade), "region", 0, 0,
     "ask | region | always: a WHEP subscriber of a room another node owns is served by the node "
     "it reaches, through a cascade link from the owner, when it asks (?edge=), when the owner "
     "or the room is full (any value), when that node's region differs from the owner's "
     "(region, always), or always"},
    {"cluster", "lease_ms", "cluster-lease-ms", OPTION_INT, FIELD(cluster_lease_ms), "5000", 1000,
     600000,
     "lifetime of a node's record and of a room's ownership unless renewed (renewed every "
     "lease/4); a dead node's rooms are placed again after this"},
    {"cluster", "timeout_ms", "cluster-timeout-ms", OPTION_INT, FIELD(cluster_timeout_ms), "1000",
     50, 60000, "a Redis command or a forwarded (proxied) request not answered within this fails"},
    {"cluster", "drain_timeout_s", "cluster-drain-timeout", OPTION_INT,
     FIELD(cluster_drain_timeout_s), "10", 0, 86400,
     "on SIGTERM a cluster node drains: it leaves placement and exits once its sessions end, or "
     "after this many seconds (a second SIGTERM exits at once)"},
    {"cluster", "keep_calls", "cluster-keep-calls", OPTION_BOOL, FIELD(cluster_keep_calls), "true",
     0, 0,
     "ng calls without a WebRTC leg are written to Redis (moat:calls:<node_id>) and restored on "
     "their ports and keys when this node starts again with the same node_id"},
    {"cluster", "restored_call_idle_s", "cluster-restored-call-idle", OPTION_INT,
     FIELD(cluster_restored_call_idle_s), "60", 0, 86400,
     "a restored call on which no party sends a packet within this many seconds ends (its "
     "parties hung up while the node was down); 0 = never"},
};

#define OPTION_COUNT (sizeof options / sizeof options[0])

static int set_value(moat_config *config, const option_spec *spec, const char *value,
                     const char *origin, char *error, size_t error_size)
{
    void *field = (char *)config + spec->offset;
    switch (spec->type) {
    case OPTION_STRING: {
        char **slot = field;
        g_free(*slot);
        *slot = g_strdup(value);
        return 0;
    }
    case OPTION_INT: {
        char *end = NULL;
        errno = 0;
        long parsed = strtol(value, &end, 10);
        if (errno || end == value || *end != '\0' || parsed < spec->min || parsed > spec->max) {
            snprintf(error, error_size, "%s: [%s] %s = \"%s\": expected an integer from %ld to %ld",
                     origin, spec->section, spec->key, value, spec->min, spec->max);
            return -1;
        }
        *(int *)field = (int)parsed;
        return 0;
    }
    case OPTION_DOUBLE: {
        char *end = NULL;
        double parsed = g_ascii_strtod(value, &end);
        if (end == value || *end != '\0' || !(parsed > 0)) {
            snprintf(error, error_size, "%s: [%s] %s = \"%s\": expected a positive number", origin,
                     spec->section, spec->key, value);
            return -1;
        }
        *(double *)field = parsed;
        return 0;
    }
    case OPTION_BOOL:
        if (g_ascii_strcasecmp(value, "true") == 0 || strcmp(value, "1") == 0 ||
            g_ascii_strcasecmp(value, "yes") == 0) {
            *(bool *)field = true;
        } else if (g_ascii_strcasecmp(value, "false") == 0 || strcmp(value, "0") == 0 ||
                   g_ascii_strcasecmp(value, "no") == 0) {
            *(bool *)field = false;
        } else {
            snprintf(error, error_size, "%s: [%s] %s = \"%s\": expected true or false", origin,
                     spec->section, spec->key, value);
            return -1;
        }
        return 0;
    }
    return -1;
}

/* `relative` from the folder of the running binary, when that folder
 * exists; NULL otherwise. */
static char *next_to_binary(const char *relative)
{
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (!exe)
        return NULL;
    char *bindir = g_path_get_dirname(exe);
    char *path = g_canonicalize_filename(relative, bindir);
    g_free(bindir);
    g_free(exe);
    if (!g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_free(path);
        return NULL;
    }
    return path;
}

/* An installed binary (bin/moat beside lib/.../moat/plugins) uses its
 * install's plugins and pages, wherever the install was moved; otherwise
 * the build tree's defaults stay. */
static void use_installed_layout(moat_config *config)
{
    char *plugins = next_to_binary(MOAT_INSTALLED_PLUGIN_DIR);
    if (plugins) {
        g_free(config->plugin_dir);
        config->plugin_dir = plugins;
    }
    char *web = next_to_binary(MOAT_INSTALLED_WEB_ROOT);
    if (web) {
        g_free(config->web_root);
        config->web_root = web;
    }
}

void moat_config_init(moat_config *config)
{
    memset(config, 0, sizeof *config);
    char ignored[512];
    for (size_t i = 0; i < OPTION_COUNT; i++)
        set_value(config, &options[i], options[i].default_value, "default", ignored,
                  sizeof ignored);
    use_installed_layout(config);
}

void moat_config_clear(moat_config *config)
{
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        if (options[i].type == OPTION_STRING) {
            char **slot = (char **)((char *)config + options[i].offset);
            g_free(*slot);
            *slot = NULL;
        }
    }
}

int moat_config_load_file(moat_config *config, const char *path, char *error, size_t error_size)
{
    GKeyFile *file = g_key_file_new();
    GError *gerror = NULL;
    if (!g_key_file_load_from_file(file, path, G_KEY_FILE_NONE, &gerror)) {
        snprintf(error, error_size, "cannot read config file %s: %s", path, gerror->message);
        g_error_free(gerror);
        g_key_file_free(file);
        return -1;
    }
    int status = 0;
    gsize n_groups = 0;
    char **groups = g_key_file_get_groups(file, &n_groups);
    for (gsize g = 0; g < n_groups && status == 0; g++) {
        gsize n_keys = 0;
        char **keys = g_key_file_get_keys(file, groups[g], &n_keys, NULL);
        for (gsize k = 0; k < n_keys && status == 0; k++) {
            const option_spec *spec = NULL;
            for (size_t i = 0; i < OPTION_COUNT; i++) {
                if (strcmp(options[i].section, groups[g]) == 0 &&
                    strcmp(options[i].key, keys[k]) == 0)
                    spec = &options[i];
            }
            if (!spec) {
                snprintf(error, error_size, "%s: unknown option [%s] %s", path, groups[g], keys[k]);
                status = -1;
                break;
            }
            char *value = g_key_file_get_string(file, groups[g], keys[k], NULL);
            status =
                set_value(config, spec, value ? g_strstrip(value) : "", path, error, error_size);
            g_free(value);
        }
        g_strfreev(keys);
    }
    g_strfreev(groups);
    g_key_file_free(file);
    return status;
}

int moat_config_apply_environment(moat_config *config, char *error, size_t error_size)
{
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        char *name = g_strdup_printf("MOAT_%s_%s", options[i].section, options[i].key);
        char *upper = g_ascii_strup(name, -1);
        const char *value = getenv(upper);
        int status = value ? set_value(config, &options[i], value, upper, error, error_size) : 0;
        g_free(name);
        g_free(upper);
        if (status)
            return status;
    }
    return 0;
}

static const option_spec *find_option(const char *cli_name)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (strcmp(options[i].cli_name, cli_name) == 0)
            return &options[i];
    return NULL;
}

int moat_config_set_by_option(moat_config *config, const char *option, const char *value,
                              char *error, size_t error_size)
{
    const option_spec *spec = find_option(option);
    if (spec == NULL)
        return 1;
    char origin[80];
    snprintf(origin, sizeof origin, "--%s", option);
    return set_value(config, spec, value, origin, error, error_size);
}

int moat_config_validate(const moat_config *config, char *error, size_t error_size)
{
    if (moat_log_level_parse(config->log_level) < 0) {
        snprintf(error, error_size,
                 "[general] log_level = \"%s\": expected error, warn, info or debug",
                 config->log_level);
        return -1;
    }
    const char *mode = config->prefilter_mode;
    if (strcmp(mode, "off") && strcmp(mode, "auto") && strcmp(mode, "always")) {
        snprintf(error, error_size, "[prefilter] mode = \"%s\": expected off, auto or always",
                 mode);
        return -1;
    }
    const char *kernel = config->prefilter_kernel;
    if (strcmp(kernel, "off") && strcmp(kernel, "auto") && strcmp(kernel, "on")) {
        snprintf(error, error_size, "[prefilter] kernel = \"%s\": expected auto, on or off",
                 kernel);
        return -1;
    }
    const char *learning = config->call_learning;
    if (strcmp(learning, "sdp") && strcmp(learning, "heuristic") && strcmp(learning, "off")) {
        snprintf(error, error_size, "[call] learning = \"%s\": expected sdp, heuristic or off",
                 learning);
        return -1;
    }
    bool has_cert = config->certificate && *config->certificate;
    bool has_key = config->private_key && *config->private_key;
    if (has_cert != has_key) {
        snprintf(error, error_size,
                 "[dtls] certificate and private_key must be given together (or neither)");
        return -1;
    }
    bool has_tls_cert = config->http_tls_cert && *config->http_tls_cert;
    bool has_tls_key = config->http_tls_key && *config->http_tls_key;
    if (has_tls_cert != has_tls_key) {
        snprintf(error, error_size,
                 "[http] tls_cert and tls_key must be given together (or neither)");
        return -1;
    }
    bool has_turn = config->turn_uris && *config->turn_uris;
    if (has_turn && !(config->turn_secret && *config->turn_secret)) {
        snprintf(error, error_size,
                 "[turn] uris needs [turn] secret (coturn's static-auth-secret)");
        return -1;
    }
    if (config->record_all_sessions && !(config->record_dir && *config->record_dir)) {
        snprintf(error, error_size, "[record] all_sessions needs [record] dir");
        return -1;
    }
    if (config->media_port_min + 1 > config->media_port_max) {
        snprintf(error, error_size, "[media] port_min %d must be below port_max %d",
                 config->media_port_min, config->media_port_max);
        return -1;
    }
    if (moat_config_cluster_enabled(config)) {
        if (!config->cluster_password || !*config->cluster_password) {
            snprintf(error, error_size,
                     "[cluster] redis needs [cluster] password (MOAT_CLUSTER_PASSWORD): Redis "
                     "must require one");
            return -1;
        }
        const char *signalling = config->cluster_signalling;
        if (strcmp(signalling, "redirect") && strcmp(signalling, "proxy")) {
            snprintf(error, error_size, "[cluster] signalling = \"%s\": expected redirect or proxy",
                     signalling);
            return -1;
        }
        const char *cascade = config->cluster_cascade;
        if (strcmp(cascade, "ask") && strcmp(cascade, "region") && strcmp(cascade, "always")) {
            snprintf(error, error_size,
                     "[cluster] cascade = \"%s\": expected ask, region or always", cascade);
            return -1;
        }
        const char *advertise = config->cluster_advertise_http;
        if (*advertise && !g_str_has_prefix(advertise, "http://") &&
            !g_str_has_prefix(advertise, "https://")) {
            snprintf(error, error_size,
                     "[cluster] advertise_http = \"%s\": expected an http:// or https:// URL",
                     advertise);
            return -1;
        }
    }
    if (config->workers > 0 && config->media_port + config->workers - 1 > 65535) {
        snprintf(error, error_size, "[media] port %d + %d workers runs past port 65535",
                 config->media_port, config->workers);
        return -1;
    }
    return 0;
}

bool moat_config_cluster_enabled(const moat_config *config)
{
    return config->cluster_redis && *config->cluster_redis;
}

bool moat_config_option_known(const char *option)
{
    return find_option(option) != NULL;
}

bool moat_config_option_is_bool(const char *option)
{
    return find_option(option) && find_option(option)->type == OPTION_BOOL;
}

void moat_config_print_options(void)
{
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s=%s", options[i].cli_name,
                 options[i].type == OPTION_STRING ? "STR"
                 : options[i].type == OPTION_BOOL ? "BOOL"
                 : options[i].type == OPTION_INT  ? "N"
                                                  : "X");
        printf("  %-30s %s [%s] %s (default \"%s\")\n", left, options[i].help, options[i].section,
               options[i].key, options[i].default_value);
    }
}

moat_prefilter_mode moat_config_prefilter_mode(const moat_config *config)
{
    if (strcmp(config->prefilter_mode, "off") == 0)
        return MOAT_PREFILTER_OFF;
    if (strcmp(config->prefilter_mode, "always") == 0)
        return MOAT_PREFILTER_ALWAYS;
    return MOAT_PREFILTER_AUTO;
}

bool moat_config_get_int(const moat_config *config, const char *section, const char *key,
                         int *value)
{
    for (size_t i = 0; config && section && key && i < OPTION_COUNT; i++) {
        if (strcmp(options[i].section, section) != 0 || strcmp(options[i].key, key) != 0)
            continue;
        const char *field = (const char *)config + options[i].offset;
        if (options[i].type == OPTION_INT) {
            *value = *(const int *)field;
            return true;
        }
        if (options[i].type == OPTION_BOOL) {
            *value = *(const bool *)field ? 1 : 0;
            return true;
        }
    }
    return false;
}
