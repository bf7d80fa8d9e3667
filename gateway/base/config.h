/* Configuration: built-in defaults, then the config file (GKeyFile), then
 * environment variables MOAT_<SECTION>_<KEY>, then command-line options. Every
 * option is described once, in config_options.c, and config/moat.conf
 * documents them all. */
#ifndef MOAT_CONFIG_H
#define MOAT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    MOAT_PREFILTER_OFF = 0,
    MOAT_PREFILTER_AUTO = 1,
    MOAT_PREFILTER_ALWAYS = 2,
} moat_prefilter_mode;

typedef struct {
    /* [general] */
    char *log_level;
    int workers; /* 0: one per core */
    char *plugin_dir;
    /* [http] */
    char *http_bind;
    int http_port;
    char *token;      /* bearer token for the API; empty: none (or generated, api_token.h) */
    char *token_file; /* where a generated token is written; empty: the default path */
    char *whip_token; /* bearer token for WHIP/WHEP offers; empty: open (RFC 9725) */
    char *web_root;
    char *http_tls_cert; /* PEM; empty: plain HTTP (http_tls.h) */
    char *http_tls_key;
    int max_body_bytes;  /* request bodies above this are refused before they are read */
    char *metrics_token; /* bearer token for /metrics; empty: open */
    char *api_origins;   /* comma-separated origins allowed on /api/ (CORS); empty: same origin */
    /* [http] connections (http_listener.h); 0: no limit */
    int request_timeout_s; /* from accept (or request start) to the end of the body */
    int max_connections;
    int max_connections_per_source;     /* from one IPv4 address or IPv6 /64 */
    int max_tls_handshakes;             /* TLS handshakes running at once (http_handshakes.h) */
    int max_tls_handshakes_per_source;  /* from one IPv4 address or IPv6 /64 */
    char *server_names;                 /* Host names /api/ answers to (http_host.h) */
    int max_event_listeners;            /* event WebSockets at once (events.h) */
    int max_event_listeners_per_source; /* from one IPv4 address or IPv6 /64 */
    int event_queue_bytes;              /* unsent bytes one listener may hold */
    /* [limits] */
    int max_sessions;         /* 0: unlimited */
    int max_pending_sessions; /* sessions not yet ICE-connected; 0: unlimited */
    int pending_timeout_s;    /* a session with no valid ICE check by then ends */
    int whip_rate_per_ip;     /* WHIP offers per second per source; 0: unlimited */
    int whip_burst_per_ip;
    int max_pending_per_source; /* pending sessions of one IPv4 address or IPv6 /56; 0: no cap */
    int ingest_per_source;      /* live ingests started from one source; 0: no cap */
    int ingest_idle_timeout_s;  /* an ingest without a valid packet this long ends */
    /* [media] */
    char *media_bind;
    int media_port; /* first UDP port; worker i uses media_port + i */
    char *announced_address;
    char *candidate_addresses; /* comma-separated; empty: enumerate interfaces */
    bool include_loopback;
    int consent_timeout_s;
    int lossy_playout_delay_max_ms; /* 0: never ask a viewer for a playout delay */
    int media_port_min;             /* call legs (ng): RTP/RTCP port pairs from this range */
    int media_port_max;
    /* [dtls] */
    char *certificate;
    char *private_key;
    /* [prefilter] */
    char *prefilter_mode;
    char *prefilter_kernel; /* auto | on | off */
    bool srtpplus;
    int detector_hold_ms;
    double detector_rate_factor;
    int detector_auth_failures_per_s;
    int budget_percent;
    int budget_min_pps;
    double legacy_budget_factor;
    /* [limits] data channels (core/data_limits.h) */
    int session_media_kbps;
    int datachannel_session_bytes;
    int datachannel_total_mib;
    /* [datachannel] */
    bool datachannel_plpmtud;   /* path MTU discovery (RFC 8899) on SCTP associations */
    int datachannel_max_packet; /* largest SCTP packet it probes, 1200..16384 */
    /* [turn] */
    char *turn_uris;   /* comma-separated; empty: no TURN server handed out */
    char *turn_secret; /* coturn REST API shared secret */
    int turn_ttl_s;
    /* [record] */
    char *record_dir; /* empty: recording off */
    bool record_all_sessions;
    int record_max_files_per_session; /* recordings one session starts in its life; 0: no limit */
    int record_max_file_mib;          /* a file is finished at this size; 0: no limit */
    int record_min_free_mib;          /* less free in the folder refuses a start; 0: no check */
    /* [room] the room plugin's (read through moat_gateway_calls.config_int) */
    int room_max_rooms;
    int room_empty_ttl_s;
    int room_create_rate_per_ip; /* POST /api/rooms per second per source; 0: unlimited */
    int room_create_burst_per_ip;
    int room_remb_floor_bps;
    bool room_nack_publishers;
    bool room_send_side_bwe;
    /* [ng] rtpengine-compatible control protocol (gateway/ng/) */
    char *ng_bind;
    int ng_port;           /* 0: off */
    int ng_delete_delay_s; /* a delete without delete-delay keeps relaying this long */
    int ng_max_calls;      /* calls at once; 0: no limit */
    int ng_max_load;       /* workers' CPU percent beyond which new calls are refused; 0: none */
    /* [call] call legs (gateway/call/call_learning.h, call_address.h) */
    char *call_learning;                   /* sdp | heuristic | off */
    bool call_allow_loopback_destinations; /* phones on this host (tests) */
    char *call_denied_networks;            /* comma-separated CIDRs legs never send to */
    int call_media_timeout_s;  /* a call whose legs receive nothing this long ends; 0: never */
    int call_silent_timeout_s; /* the same for calls not answered yet or held */
    int call_max_transcoders;  /* transcoding pipelines at once; 0: no transcoding */
    /* [cluster] (gateway/cluster/); cluster_redis empty: a single node */
    char *cluster_redis;    /* HOST:PORT or a unix socket path */
    char *cluster_password; /* Redis AUTH */
    char *cluster_node_id;  /* empty: host name:HTTP port */
    char *cluster_advertise_http;
    char *cluster_advertise_media;
    char *cluster_region;
    char *cluster_signalling; /* redirect | proxy */
    char *cluster_cascade;    /* ask | always: WHEP served by the node reached (cascades) */
    int cluster_lease_ms;     /* node record and room ownership lifetime */
    int cluster_timeout_ms;   /* Redis command and forwarded request timeout */
    int cluster_drain_timeout_s;
    bool cluster_keep_calls;          /* ng calls kept in Redis over a restart */
    int cluster_restored_call_idle_s; /* a restored call without media ends after this */
} moat_config;

/* Fills defaults. */
void moat_config_init(moat_config *config);
void moat_config_clear(moat_config *config);

/* Loads a config file on top of what is there. Returns 0 or -1 with a message
 * naming the file, the key and the problem. */
int moat_config_load_file(moat_config *config, const char *path, char *error, size_t error_size);
/* Applies MOAT_<SECTION>_<KEY> environment variables. A variable whose
 * <SECTION> is a section (in any case) but that names none of its options
 * (MOAT_HTTP_METRIC_TOKEN) is -1, as an unknown key of the file is; other
 * MOAT_ names (MOAT_CONFIG, MOAT_GATEWAY_BINARY, docker-compose.yml's
 * MOAT_TURN_PORT, ...) are not looked at. */
int moat_config_apply_environment(moat_config *config, char *error, size_t error_size);
/* Sets one option by its long command-line name (e.g. "http-port"). Returns 1
 * if the name is not a config option, 0 on success, -1 on a bad value. */
int moat_config_set_by_option(moat_config *config, const char *option, const char *value,
                              char *error, size_t error_size);
/* Cross-field checks after everything is applied, of what the start would
 * refuse for these values (the call legs' port pairs, the workers' ports on
 * this machine, the ng port outside them, ...). */
int moat_config_validate(const moat_config *config, char *error, size_t error_size);
/* Media workers the start runs: [general] workers, or one per processor of
 * this machine when it is 0. */
unsigned moat_config_worker_count(const moat_config *config);

/* An integer option (or a boolean one, as 0 or 1) by section and key into *value (plugins read
 * their section through moat_gateway_calls.config_int); false when there is none. */
bool moat_config_get_int(const moat_config *config, const char *section, const char *key,
                         int *value);

/* Whether --option (its long name without the dashes) is a config option;
 * whether it is a true/false one (then its value may be left out: "--flag"
 * alone means true). */
bool moat_config_option_known(const char *option);
bool moat_config_option_is_bool(const char *option);
/* [cluster] redis is set: this node joins a cluster (gateway/cluster/). */
bool moat_config_cluster_enabled(const moat_config *config);

/* For --help: one line per option. */
void moat_config_print_options(void);

moat_prefilter_mode moat_config_prefilter_mode(const moat_config *config);

#endif
