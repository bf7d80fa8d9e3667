/* Every option of the configuration, described once (config_options.h). */
#include "base/config_options.h"

#include "base/config_paths.h" /* generated: gateway/meson.build */

#define FIELD(name) offsetof(moat_config, name)

const option_spec moat_config_options[] = {
    {"general", "log_level", "log-level", OPTION_STRING, FIELD(log_level), "info", 0, 0,
     "error | warn | info | debug"},
    {"general", "workers", "workers", OPTION_INT, FIELD(workers), "0", 0, 256,
     "media worker threads; 0 = one per core (more than the cores add nothing and cost memory "
     "growing with their square: the start warns)"},
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
    {"http", "max_tls_handshakes", "max-tls-handshakes", OPTION_INT, FIELD(max_tls_handshakes), "8",
     0, 4096,
     "HTTPS: TLS handshakes running at once (each holds a thread while it waits on its client); "
     "more wait, holding none; 0 = no limit"},
    {"http", "max_tls_handshakes_per_source", "max-tls-handshakes-per-source", OPTION_INT,
     FIELD(max_tls_handshakes_per_source), "2", 0, 4096,
     "HTTPS: TLS handshakes running at once from one IPv4 address or IPv6 /64; more wait; 0 = no "
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
     "sessions not yet connected (ICE and DTLS) at once; more offers get 503; 0 = no limit"},
    {"limits", "pending_timeout_s", "pending-timeout", OPTION_INT, FIELD(pending_timeout_s), "10",
     1, 3600, "seconds a session may wait for its first valid ICE check"},
    {"limits", "whip_rate_per_ip", "whip-rate-per-ip", OPTION_INT, FIELD(whip_rate_per_ip), "10", 0,
     1000000,
     "WHIP offers per second from one IPv4 address or IPv6 /64 (429 beyond); 0 = no limit"},
    {"limits", "whip_burst_per_ip", "whip-burst-per-ip", OPTION_INT, FIELD(whip_burst_per_ip), "30",
     1, 1000000, "burst of WHIP offers one source may send at once"},
    {"limits", "max_pending_per_source", "max-pending-per-source", OPTION_INT,
     FIELD(max_pending_per_source), "5", 0, 1000000,
     "sessions not yet connected (ICE and DTLS) from one IPv4 address or IPv6 /56; more offers get "
     "429; 0 = "
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
     "comma-separated host candidate addresses (at most 16); empty = the addresses of the "
     "interfaces up with carrier"},
    {"media", "include_loopback", "include-loopback", OPTION_BOOL, FIELD(include_loopback), "true",
     0, 0, "announce loopback addresses as candidates (at the lowest priorities)"},
    {"media", "consent_timeout_s", "consent-timeout", OPTION_INT, FIELD(consent_timeout_s), "30", 5,
     3600,
     "seconds without a valid STUN check on a pair: nothing more is sent on the selected one; a "
     "transport none of whose pairs had one is closed"},
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
     "4.0", 0, 1000, "ingress rate above this multiple of the learned baseline is an anomaly"},
    {"prefilter", "auth_failures_per_s", "detector-auth-failures", OPTION_INT,
     FIELD(detector_auth_failures_per_s), "50", 1, 1000000,
     "srtp_unprotect failures per second that count as an anomaly"},
    {"prefilter", "budget_percent", "budget-percent", OPTION_INT, FIELD(budget_percent), "10", 1,
     1000, "unverifiable packets allowed to reach HMAC, in % of the learned rate"},
    {"prefilter", "budget_min_pps", "budget-min-pps", OPTION_INT, FIELD(budget_min_pps), "20", 1,
     1000000, "floor of that verification budget, packets per second"},
    {"prefilter", "legacy_budget_factor", "legacy-budget-factor", OPTION_DOUBLE,
     FIELD(legacy_budget_factor), "2.0", 0, 1000,
     "peers without SRTP+, worker overloaded: a flooded stream keeps at least this multiple of its "
     "learned rate, admitted with one chance for every packet"},
    {"limits", "session_media_kbps", "session-media-kbps", OPTION_INT, FIELD(session_media_kbps),
     "50000", 0, 10000000,
     "authenticated RTP one session may send in, kbit/s with a second's burst (0 = no cap); more "
     "is dropped as rate_limit before any room sees it"},
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
     "comma-separated TURN/STUN URIs handed to clients (turn:host:3478?transport=udp; turn:, "
     "turns:, stun: or stuns:); empty = none"},
    {"turn", "secret", "turn-secret", OPTION_STRING, FIELD(turn_secret), "", 0, 0,
     "TURN REST API shared secret (coturn static-auth-secret); needs [turn] uris"},
    {"turn", "ttl_s", "turn-ttl", OPTION_INT, FIELD(turn_ttl_s), "3600", 60, 604800,
     "lifetime of the TURN credentials handed out (one pair per session), seconds"},
    {"record", "dir", "record-dir", OPTION_STRING, FIELD(record_dir), "", 0, 0,
     "folder recordings are written to; empty = recording off"},
    {"record", "all_sessions", "record-all-sessions", OPTION_BOOL, FIELD(record_all_sessions),
     "false", 0, 0, "record every session from its start (needs [record] dir)"},
    {"record", "max_files_per_session", "record-max-files-per-session", OPTION_INT,
     FIELD(record_max_files_per_session), "8", 0, 1000000,
     "recordings one session may start over its life (each POST after a DELETE is another file); "
     "more get 409; 0 = no limit"},
    {"record", "max_file_mib", "record-max-file-mib", OPTION_INT, FIELD(record_max_file_mib),
     "2048", 0, 16777216,
     "a recording's file is finished once this many MiB of media went into it; 0 = no limit"},
    {"record", "min_free_mib", "record-min-free-mib", OPTION_INT, FIELD(record_min_free_mib), "256",
     0, 16777216,
     "a recording is refused (507) while the folder's file system has less free, MiB; 0 = no "
     "check"},
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
    {"call", "media_timeout_s", "call-media-timeout", OPTION_INT, FIELD(call_media_timeout_s), "60",
     0, 86400,
     "a call none of whose legs received an RTP or RTCP packet for this many seconds (since it "
     "was made, last offered or answered, or its last packet) ends as an ng delete with "
     "delete-delay 0 ends it (rtpengine's timeout); 0 = never"},
    {"call", "silent_timeout_s", "call-silent-timeout", OPTION_INT, FIELD(call_silent_timeout_s),
     "3600", 0, 86400,
     "the same for a call whose parties may rightly be silent: not answered yet, or an m-line "
     "held (c=0.0.0.0), sendonly, recvonly or inactive (rtpengine's silent-timeout and "
     "offer-timeout); 0 = never"},
    {"call", "max_transcoders", "call-max-transcoders", OPTION_INT, FIELD(call_max_transcoders),
     "64", 0, 4096,
     "transcoding pipelines at once (two per transcoded m-line, about two threads each); an "
     "answer that would start more relays that m-line as is, with a warning, counted in "
     "moat_call_transcode_refused_total{reason=\"limit\"}; 0 = no transcoding"},
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

const size_t moat_config_option_count = sizeof moat_config_options / sizeof moat_config_options[0];
