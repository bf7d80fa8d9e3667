/* The plugin boundary. A plugin sees the gateway only through
 * moat_gateway_calls; the core never includes a plugin's header. Media
 * callbacks (on_rtp/on_media, on_rtcp, on_data, on_timer) and handle_message
 * run on the media worker that owns the session, so a plugin's per-session
 * state needs no lock as long as it is only touched from those callbacks.
 *
 * ABI versions. Version 2 (the media routing core) appends to both tables,
 * never reorders: the core demultiplexes BUNDLE itself and hands on_media one
 * parsed moat_rtp_packet (m-line index, stream, known header extensions, RTX
 * already unwrapped); moat_media_info describes each m-line's codecs and
 * extension ids; relay_rtp sends to any session from any worker through the
 * routing core's rings (core/relay.h) on reference-counted handles; timers
 * and a coalesced keyframe request run on the owning worker; relay_data
 * carries data channel messages across workers; plugins may shape the SDP
 * answer's codecs (accept_codec), hear of data channels (on_channel) and
 * answer JSON messages (handle_message, POST /api/sessions/<id>/message).
 * A version-1 plugin (on_rtp, raw packets) still loads. */
#ifndef MOAT_PLUGIN_H
#define MOAT_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_PLUGIN_API_VERSION      2
#define MOAT_PLUGIN_API_MIN_VERSION  1
#define MOAT_PLUGIN_MAX_MEDIA        16
#define MOAT_PLUGIN_MAX_CODECS       8
#define MOAT_PLUGIN_FMTP_SIZE        128
#define MOAT_PLUGIN_RID_SIZE         16
#define MOAT_PLUGIN_RELAY_DATA_QUEUE 256
#define MOAT_PLUGIN_RELAY_DATA_MAX   65536

typedef enum {
    MOAT_MEDIA_KIND_AUDIO = 0,
    MOAT_MEDIA_KIND_VIDEO = 1,
    MOAT_MEDIA_KIND_APPLICATION = 2,
} moat_media_kind;

/* One negotiated m-line as the plugin needs it. SSRCs are those of RTP
 * packets: remote_ssrc is what the peer declared in its SDP (0 when it did not
 * declare any, as with some WHIP clients: then the first authenticated SSRC on
 * this mid is the one); local_ssrc is what the gateway announced in its answer
 * and must use when it sends on this m-line. */
/* rtcp-fb the peer offered for a codec (bit set). */
enum {
    MOAT_RTCP_FB_NACK = 1u << 0,
    MOAT_RTCP_FB_PLI = 1u << 1,
    MOAT_RTCP_FB_FIR = 1u << 2,
    MOAT_RTCP_FB_REMB = 1u << 3,
    MOAT_RTCP_FB_TRANSPORT_CC = 1u << 4,
};

/* v2: one negotiated codec of an m-line. rtx_payload_type is the RTX payload
 * type whose apt= names this codec (0: no RTX). */
typedef struct {
    uint8_t payload_type;
    char name[32]; /* encoding name as in the SDP: opus, VP8, H264, ... */
    uint32_t clock_rate;
    uint8_t channels;
    char fmtp[MOAT_PLUGIN_FMTP_SIZE]; /* "" for codecs past the 4th */
    uint32_t rtcp_fb;                 /* MOAT_RTCP_FB_* */
    uint8_t rtx_payload_type;
} moat_codec_info;

/* v2: header extension ids negotiated on an m-line (0: not negotiated). */
typedef struct {
    uint8_t mid;
    uint8_t rid;
    uint8_t repaired_rid;
    uint8_t abs_send_time;
    uint8_t transport_wide_cc;
    uint8_t audio_level;
    uint8_t video_orientation;
    uint8_t playout_delay; /* written by the core toward a lossy viewer (session_playout.c) */
} moat_extension_ids;

typedef struct {
    moat_media_kind kind;
    char mid[32];
    bool peer_sends;    /* the peer sends on this m-line (its sendrecv/sendonly) */
    bool peer_receives; /* the peer receives on this m-line (its sendrecv/recvonly) */
    uint32_t remote_ssrc;
    uint32_t remote_rtx_ssrc;
    uint32_t local_ssrc;
    uint8_t payload_types[16]; /* negotiated payload types, in answer order */
    size_t n_payload_types;
    uint8_t mid_extension_id; /* urn:ietf:params:rtp-hdrext:sdes:mid, 0 if none */
    /* ---- v2 ---- */
    moat_codec_info codecs[MOAT_PLUGIN_MAX_CODECS]; /* answer order */
    size_t n_codecs;
    moat_extension_ids extensions;
    char rids[3][MOAT_PLUGIN_RID_SIZE]; /* simulcast layers the peer sends */
    size_t n_rids;
    /* Cascade legs only (moat_session_info.cascade): on a video m-line the
     * peer receives, the SSRCs the gateway sends each simulcast layer of
     * the source on (layer l of the source on local_layer_ssrcs[l]; a
     * source without layers goes on local_ssrc). n_local_layers 0
     * elsewhere. */
    uint32_t local_layer_ssrcs[3];
    size_t n_local_layers;
} moat_media_info;

/* v2: one authenticated, decrypted RTP packet as the core demultiplexed it
 * (rtp/rtp_demux.h). data may be modified in place (capacity bytes) and is
 * only valid during the call. A retransmission (RTX) arrives unwrapped: the
 * original SSRC, sequence number and payload type, repaired = true. */
typedef struct {
    uint8_t *data;
    size_t length;
    size_t capacity;
    int media_index; /* -1: no m-line matched (then kind is meaningless) */
    moat_media_kind kind;
    uint32_t ssrc;
    uint16_t sequence;
    uint64_t extended_sequence; /* rollovers counted per SSRC */
    uint32_t timestamp;
    bool marker;
    uint8_t payload_type;
    size_t payload_offset;
    size_t payload_length;
    bool repaired; /* unwrapped from RTX */
    /* On an RTX stream but not unwrapped: a padding probe, or no known
     * original stream or payload type. Left as received. */
    bool rtx;
    uint64_t arrival_us;
    /* Known header extensions; has_* false when absent. */
    char mid[MOAT_PLUGIN_RID_SIZE];
    /* rid: the simulcast layer, on every packet of a stream once one of
     * its packets named it (also on an unwrapped RTX packet). */
    char rid[MOAT_PLUGIN_RID_SIZE];
    char repaired_rid[MOAT_PLUGIN_RID_SIZE];
    bool has_abs_send_time;
    uint32_t abs_send_time; /* 24 bits, 6.18 fixed point seconds */
    bool has_transport_sequence;
    uint16_t transport_sequence;
    bool has_audio_level;
    bool voice_activity;
    uint8_t audio_level; /* -dBov, 0..127 */
    bool has_video_orientation;
    uint8_t video_orientation; /* C, F, R1 R0 bits of RFC 7742 / 3GPP CVO */
} moat_rtp_packet;

typedef struct {
    const char *session_id;
    const moat_media_info *media;
    size_t n_media;
    bool has_data_channel;
    /* ---- v2 ---- */
    /* How the session was created: "whip" (POST /whip/<plugin>/<resource>) or
     * "whep" (POST /whep/<plugin>/<resource>); resource is what follows the
     * plugin name ("" when nothing does). */
    const char *endpoint;
    const char *resource;
    int worker_index; /* the worker the session runs on */
    /* A cascade leg (another Moat node, gateway/cluster/): as a
     * subscriber it takes every simulcast layer of its source (each on
     * its own SSRC, media[].local_layer_ssrcs); as a publisher its video
     * comes either as simulcast layers (its rids) or, from a source
     * without layers, as one plain stream. */
    bool cascade;
} moat_session_info;

/* v2: attach errors starting with these prefixes map to HTTP 404 and 503;
 * any other refusal is a 503 "session_refused". */
#define MOAT_PLUGIN_ERROR_NOT_FOUND "not_found: "
#define MOAT_PLUGIN_ERROR_FULL      "full: "
/* v2: refusals mapped to HTTP 409 (the resource is taken, e.g. a tunnel's
 * two peers are there) and 400 (the offer cannot serve the plugin). */
#define MOAT_PLUGIN_ERROR_CONFLICT    "conflict: "
#define MOAT_PLUGIN_ERROR_BAD_REQUEST "bad_request: "

/* The sender-side bandwidth estimate toward a peer that negotiated
 * transport-cc (moat_gateway_calls.send_estimate). */
typedef struct {
    uint64_t bitrate_bps; /* what the path to the peer is estimated to carry */
    uint64_t acked_bps;   /* what the peer said it received lately */
    uint64_t feedbacks;   /* transport-cc feedback packets taken */
    uint64_t probes_confirmed, probes_failed;
    uint64_t padding_packets; /* sent by probes (never the publisher's) */
    double loss;              /* fraction lost, last judged */
    int usage;                /* 0 normal, 1 overusing, 2 underusing */
    bool probing;             /* a probe runs or waits for its feedback */
} moat_plugin_estimate;

/* What a forwarding plugin changes in a source packet (rtp/rtp_rewrite.h). */
struct moat_rtp_rewrite;

/* Opaque handle of a session, valid from attach until detach returns. */
typedef struct moat_plugin_session moat_plugin_session;
/* A fan-out list (moat_gateway_calls.fanout_*), owned by the plugin. */
typedef struct moat_plugin_fanout moat_plugin_fanout;

typedef struct {
    /* Send a plaintext RTP packet to the peer; the gateway protects it with
     * SRTP, keeps it for NACK retransmission and batches the send. */
    int (*send_rtp)(moat_plugin_session *session, const uint8_t *packet, size_t length);
    /* Send a plaintext RTCP compound packet to the peer. */
    int (*send_rtcp)(moat_plugin_session *session, const uint8_t *packet, size_t length);
    /* Send a data channel message on stream `stream_id` with PPID `ppid`. */
    int (*send_data)(moat_plugin_session *session, uint16_t stream_id, uint32_t ppid,
                     const uint8_t *data, size_t length);
    /* Queue a JSON event (a complete JSON object) for the session's listeners. */
    void (*push_event)(moat_plugin_session *session, const char *json);
    /* Ask the gateway to end the session (the plugin's detach follows). */
    void (*close_session)(moat_plugin_session *session);
    /* Monotonic clock, microseconds. */
    uint64_t (*now_us)(void);
    /* ---- v2 ---- */
    /* Reference counting of handles: a plugin that keeps a handle past
     * detach (e.g. a room's subscriber list read by other workers) takes a
     * reference. Calls on the handle of a session that ended fail cleanly
     * (return -1). Any thread. */
    void (*handle_ref)(moat_plugin_session *session);
    void (*handle_unref)(moat_plugin_session *session);
    /* Sends a plaintext RTP packet to `session` from any thread: on its own
     * worker it is sent at once, otherwise it is copied once into a pooled
     * buffer and carried to the owning worker's ring (never blocks; a full
     * ring drops and counts). 0 queued/sent, -1 dropped or session ended. */
    int (*relay_rtp)(moat_plugin_session *session, const uint8_t *packet, size_t length);
    /* Fan-out of one packet to n sessions (any workers) with one shared
     * copy; returns how many were sent or queued. Any thread. */
    size_t (*relay_rtp_many)(moat_plugin_session *const *sessions, size_t n, const uint8_t *packet,
                             size_t length);
    /* Arms the session's one timer: on_timer runs on its worker after
     * `delay_us` (0 disarms). Owning worker only, or from attach (before
     * the session runs: a plugin that must hear of it without any data or
     * media from its peer). */
    void (*set_timer)(moat_plugin_session *session, uint64_t delay_us);
    /* Asks the peer for a keyframe on m-line `media_index` (PLI, FIR when
     * PLI was not negotiated; on a simulcast m-line for each layer seen);
     * coalesced and rate-limited per m-line by the core. Owning worker
     * only. 0 sent, 1 coalesced, -1 nothing to ask. */
    int (*request_keyframe)(moat_plugin_session *session, int media_index);
    /* The index of the worker that owns the session. Any thread. */
    int (*session_worker)(moat_plugin_session *session);
    /* Publishes a JSON object to the WebSocket listeners of `topic`
     * (GET /api/events?topic=<topic>, core/events.h). Any thread. */
    void (*publish_event)(const char *topic, const char *json);
    /* Sends a data channel message to `session` from any thread: on its own
     * worker at once (as send_data), otherwise copied and posted to the
     * owning worker; messages of at most MOAT_PLUGIN_RELAY_DATA_MAX bytes.
     * Called from on_data, the copy counts against the session that
     * received the message until it is sent: that session stops reading
     * from SCTP while its copies wait (backpressure: bytes, and messages in
     * transit to other workers), so a slow target or a busy worker does not
     * make it drop what it acknowledged, also when several sessions relay
     * to one target (the target then holds up to each source's high-water
     * marks per source, past its own limits). Outside on_data at most
     * MOAT_PLUGIN_RELAY_DATA_QUEUE messages wait per target (more drop,
     * counted in moat_relay_dropped_data_messages_total{reason}).
     * send_data from on_data does the same. 0 sent or queued, -1 dropped
     * or session ended. */
    int (*relay_data)(moat_plugin_session *session, uint16_t stream_id, uint32_t ppid,
                      const uint8_t *data, size_t length);
    /* The integer option [section] key of the gateway's configuration
     * (config/moat.conf, MOAT_SECTION_KEY, --flags), or `fallback` when the
     * gateway has none by that name (an older gateway leaves this NULL).
     * Control thread (init, handle_api). */
    int (*config_int)(const char *section, const char *key, int fallback);
    /* Fan-out lists (an older gateway leaves these NULL): the sessions one
     * producer sends every packet to, kept by the gateway as an immutable
     * snapshot grouped by worker. fanout_set replaces the list (any thread;
     * it takes its own handle references) whenever membership changes;
     * fanout_send (one thread at a time: the producer's worker) copies the
     * packet once and takes one relay ring slot per other worker that has
     * targets, whose worker then delivers to each of them as relay_rtp
     * would (on_relay); targets on the producer's worker get it at once.
     * It returns how many were sent or queued. fanout_free by the owner
     * while no fanout_send runs. fanout_new(producer): NULL when the
     * producer's worker has no relay. */
    moat_plugin_fanout *(*fanout_new)(moat_plugin_session *producer);
    void (*fanout_set)(moat_plugin_fanout *fanout, moat_plugin_session *const *sessions, size_t n);
    size_t (*fanout_send)(moat_plugin_fanout *fanout, const uint8_t *packet, size_t length);
    void (*fanout_free)(moat_plugin_fanout *fanout);
    /* transport-cc toward the peer (an older gateway leaves these NULL).
     * Where the peer negotiated it, the gateway stamps a transport-wide
     * sequence number on every RTP packet it sends to the peer and runs a
     * sender-side estimator on the peer's feedback. send_estimate fills
     * `out`: 0, or -1 when there is no estimator or no feedback came yet.
     * probe sends padding on the m-line's RTX stream so that all RTP sent
     * reaches target_bps for duration_us; the estimate rises when the path
     * carried it (probes_confirmed grows) and not when loss or rising delay
     * said it could not (probes_failed grows). -1: no estimator, no RTX,
     * or a probe still running. Owning worker only. */
    int (*send_estimate)(moat_plugin_session *session, moat_plugin_estimate *out);
    int (*probe)(moat_plugin_session *session, uint64_t target_bps, uint64_t duration_us);
    /* Asks the peer for a keyframe on one stream of m-line `media_index`:
     * `ssrc` is one of its simulcast layers (or its media SSRC), so a
     * subscriber switching layers costs the publisher one keyframe on that
     * layer, not one on every layer (an older gateway leaves this NULL: use
     * request_keyframe). Coalesced and rate-limited per SSRC as
     * request_keyframe is per m-line. Owning worker only. 0 sent, 1
     * coalesced, -1 not a stream of that m-line. */
    int (*request_layer_keyframe)(moat_plugin_session *session, int media_index, uint32_t ssrc);
    /* Forwarding without a copy of every packet per subscriber for NACKs
     * (an older gateway leaves it NULL: apply the rewrite and send_rtp).
     * `packet` holds a source packet as received (plaintext, the source's
     * own sequence number), *length its length, in a buffer of at least
     * *length bytes the plugin owns. The gateway keeps the source packet
     * once per worker for every session forwarding the same source_key
     * (nonzero; one source has one key on every worker and two sources
     * never share one: the plugin's namespace, e.g. its room's serial and
     * the publisher's SSRC), rewrites the buffer in place with `rewrite`
     * (*length may shrink) and sends it as send_rtp would, remembering
     * only how it was made. A NACK of it is answered by rebuilding it from
     * the kept source with the same rewrite; when that source is gone (its
     * packets stopped coming more than the retransmission age ago, or were
     * overwritten, or the worker already kept its most sources when the
     * key was new) the NACK goes unanswered and is counted (nack_gone).
     * 0 sent, -1 not. Owning worker only. */
    int (*send_rtp_forward)(moat_plugin_session *session, uint8_t *packet, size_t *length,
                            uint64_t source_key, const struct moat_rtp_rewrite *rewrite);
    /* Whether the session is ending: true from the moment the gateway was
     * asked to end it (its WHIP DELETE, before the 200 is sent; a drain,
     * a transport failure, close_session, shutdown on its worker) and
     * after, though its detach may come much later (a drain waits for the
     * peer to take what was queued). Never false again. Any thread (an
     * older gateway leaves this NULL). */
    bool (*session_ending)(moat_plugin_session *session);
} moat_gateway_calls;

typedef struct {
    int api_version; /* MOAT_PLUGIN_API_VERSION */
    const char *name;
    const char *description;

    /* Called once after loading. Returns 0 on success. */
    int (*init)(const moat_gateway_calls *gateway);
    void (*destroy)(void);

    /* A session joins this plugin; returns the plugin's per-session state or
     * NULL with *error set to a static string. */
    void *(*attach)(moat_plugin_session *session, const moat_session_info *info,
                    const char **error);
    /* The session is gone; free the state. Nothing is called after this. */
    void (*detach)(void *state);
    /* A JSON control message (POST /api/sessions/<id>/message, a JSON
     * object); returns a newly allocated JSON object (g_malloc'd), a refusal
     * {"error": ..., "status": 4xx}, or NULL (204). The session's worker,
     * like the media callbacks (the session is alive throughout). */
    char *(*handle_message)(void *state, const char *json);

    /* Authenticated, decrypted RTP. `packet` may be modified in place (its
     * buffer has `capacity` bytes) and is only valid during the call. */
    void (*on_rtp)(void *state, uint8_t *packet, size_t length, size_t capacity);
    /* Authenticated RTCP compound, after the gateway handled NACK and reports. */
    void (*on_rtcp)(void *state, const uint8_t *packet, size_t length);
    /* One data channel message. */
    void (*on_data)(void *state, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                    size_t length);
    /* The peer hung up or the transport failed; detach follows. */
    void (*hangup)(void *state);

    /* ---- v2 (all optional) ---- */
    /* Demultiplexed RTP; when set, on_rtp is not called. */
    void (*on_media)(void *state, moat_rtp_packet *packet);
    /* A packet relayed to this session (relay_rtp) arrived on its worker:
     * the plugin rewrites this private copy for its peer (SSRC, sequence
     * numbers, timestamps) and sends it with send_rtp. Without on_relay the
     * core sends relayed packets unchanged. media_index is -1. */
    void (*on_relay)(void *state, moat_rtp_packet *packet);
    /* The timer armed with set_timer fired. */
    void (*on_timer)(void *state, uint64_t now_us);
    /* Placement: the worker a new session of this plugin lands on, from the
     * endpoint and resource it was created on (see moat_session_info) and
     * the number of workers; -1 leaves it to the gateway. Control thread. */
    int (*place)(const char *endpoint, const char *resource, unsigned n_workers);
    /* A JSON API under api_path (e.g. "/api/rooms"): the gateway routes
     * requests whose path starts with it here, after authentication.
     * Returns a g_malloc'd JSON body and sets *status; a 405's body names
     * the methods the path takes in "allow" ("GET, HEAD, POST"), which the
     * gateway sends as the Allow header. Control thread. */
    const char *api_path;
    char *(*handle_api)(const char *method, const char *path, const char *body, size_t length,
                        int *status);
    /* The session id of the current publisher of `resource` (a room) into
     * `id` (`size` bytes): what the gateway's POST/DELETE
     * <api_path>/<resource>/recording records, and a label for the file
     * name into `label` (`label_size` bytes). 0 found, -1 no such resource
     * or no publisher. Control thread. */
    int (*publisher_session)(const char *resource, char *id, size_t size, char *label,
                             size_t label_size);
    /* A data channel on `stream_id` opened (open) or closed; label is the
     * channel's (NUL-terminated). The session's worker. */
    void (*on_channel)(void *state, uint16_t stream_id, const char *label, bool open);
    /* Shapes the SDP answer of a new session on `endpoint`/`resource` (see
     * moat_session_info): whether codec `name` (canonical: opus, PCMU, PCMA,
     * VP8, VP9, H264) at `clock_rate` may be accepted on m-line
     * `media_index`. Asked for each codec the gateway would accept; an
     * m-line left without one is rejected (port 0), an offer left without
     * any m-line gets a 400. NULL accepts all. Control thread, before
     * attach. */
    bool (*accept_codec)(const char *endpoint, const char *resource, size_t media_index,
                         moat_media_kind kind, const char *name, uint32_t clock_rate);
    /* The plugin's own figures in the Prometheus text format (complete
     * HELP/TYPE/sample lines, names prefixed moat_<plugin>_), appended to
     * GET /metrics; a g_malloc'd string or NULL. NULL: none. Control
     * thread; the plugin synchronises with its workers itself. */
    char *(*metrics)(void);
    /* Offers to this plugin (POST /whip/<name>/...) need the API token or
     * the WHIP token whenever the gateway has one, even when WHIP offers
     * are otherwise open ([http] whip_token unset). */
    bool offers_need_token;
} moat_plugin;

/* Every plugin module exports this symbol. */
typedef const moat_plugin *(*moat_plugin_entry_fn)(void);
#define MOAT_PLUGIN_ENTRY_SYMBOL "moat_plugin_entry"

#endif
