/* The room plugin's state. A room has publishers (WHIP) and subscribers
 * (WHEP); a publisher's packets fan out through the routing core's relay to
 * the subscribers watching it, wherever their workers are.
 *
 * Ownership and threads:
 *  - The registry (room_registry.c) owns rooms; registry_lock guards the
 *    table, each room's lock guards its publisher and subscriber lists. Lock
 *    order: registry, then room. Every peer holds a reference on its room.
 *  - A peer (room_peer) is allocated by attach (control thread) and freed by
 *    detach (its session's worker) after it left the room's lists, so
 *    anything reached under the room's lock is alive. Only the peer's own
 *    worker touches its non-atomic fields after attach; others read only
 *    the atomics and the fields fixed at attach (id, handle, kind map). */
#ifndef MOAT_ROOM_H
#define MOAT_ROOM_H

#include "plugin.h"
#include "room_bwe.h"
#include "room_layers.h"
#include "room_temporal.h"
#include "rtp/rtcp_feedback.h"
#include "rtp/video_descriptor.h"
#include "sctp/open_channels.h"

#include <glib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define ROOM_NAME_SIZE       64
#define ROOM_PEER_ID_SIZE    24
#define ROOM_MAX_PUBLISHERS  16
#define ROOM_MAX_SUBSCRIBERS 1024
#define ROOM_DEFAULT_SUBS    256
#define ROOM_MAX_ROOMS       10000 /* the most [room] max_rooms takes */
#define ROOM_DEFAULT_ROOMS   1000
#define ROOM_DEFAULT_TTL_S   300
#define ROOM_DEFAULT_FLOOR   100000  /* bits/s: [room] remb_floor_bps */
#define ROOM_CHECK_US        100000u /* subscribers look for a reason to leave */
#define ROOM_MAX_CODECS      16
#define ROOM_FANOUT_CHUNK    128 /* targets per relay call */
#define ROOM_MAX_ROOM_CODECS 8   /* POST /api/rooms {"codecs": [...]} */
/* REMB to publishers (room_feedback.c): at least this often, and
 * subscriber estimates older than ROOM_ESTIMATE_AGE_US are ignored. */
#define ROOM_REMB_INTERVAL_US 1000000u
#define ROOM_ESTIMATE_AGE_US  5000000u
#define ROOM_MAX_BITRATE      1000000000 /* the largest cap the API takes */
/* A subscriber's own keyframe requests (its peer's PLI and FIR, a
 * "configure" turning its video back on) reach its publisher at most once
 * per this interval (room_feedback_keyframe_allowed); the rest are
 * counted (keyframe_requests_dropped) and coalesced into one sent when the
 * interval ends (room_feedback_keyframe_owed). A keyframe costs every viewer
 * of the stream, or of the layer, several delta frames' bytes and a
 * quality dip, so one viewer asking every 20 ms would otherwise hold the
 * encoder at the core's one request per 300 ms per m-line for everyone.
 * One second is what an honest viewer needs: its first request goes at
 * once, the keyframe comes a round trip and an encode later (100-300 ms),
 * and a decoder still without one asks again (browsers repeat while they
 * wait). LiveKit throttles keyframe requests to a publisher per layer at
 * 0.5 s (lowest quality) to 1 s (rtc.pli_throttle); this bounds each
 * viewer instead, and the core's 300 ms (session_plugin_calls.c) bounds
 * the sum of them. */
#define ROOM_KEYFRAME_REQUEST_INTERVAL_US 1000000u
/* The active speaker: the loudest publisher whose smoothed level is above
 * -ROOM_SPEAKER_DBOV and was updated within ROOM_SPEAKER_AGE_US. */
#define ROOM_SPEAKER_DBOV   70
#define ROOM_SPEAKER_AGE_US 2000000u
#define ROOM_SPEAKER_MARGIN (3u << 8) /* 3 dB louder takes the floor */

typedef struct room room;

/* A codec a publisher sends: what a subscriber needs to map its payload
 * type. */
typedef struct {
    uint8_t payload_type;
    moat_media_kind kind;
    char name[32];
    uint32_t clock_rate;
    moat_video_codec video_codec; /* keyframe detection (room_simulcast.c) */
} room_codec;

/* One simulcast layer a publisher sends (room_simulcast.c). The rid is
 * fixed at attach; the atomics are written by the publisher's worker and
 * read by anyone; the window by the publisher's worker only. */
typedef struct {
    char rid[MOAT_PLUGIN_RID_SIZE];
    _Atomic uint32_t ssrc; /* 0 until its first packet */
    atomic_uint bitrate_bps;
    atomic_uint width, height; /* of its last keyframe, 0 unknown */
    uint64_t window_us, window_bytes;
    /* Its temporal layers (VP8/VP9 TID), measured with the layer: all
     * zero when it has none. */
    atomic_uint temporal_bps[ROOM_TEMPORAL_LAYERS];
    uint64_t temporal_bytes[ROOM_TEMPORAL_LAYERS];
    /* When its SSRC last changed (the publisher's worker only): the first
     * SSRC is taken at once, a new one at most once a second. */
    bool ssrc_changed;
    uint64_t ssrc_changed_us;
} room_layer;

/* A layer asked for through the API (room_peer.layer_request). */
#define ROOM_LAYER_REQUEST_NONE (-1)
#define ROOM_LAYER_REQUEST_AUTO ROOM_MAX_LAYERS

/* A publisher's loss recovery counters (room_recovery.c): written by its
 * worker, read by the API. */
typedef struct {
    atomic_uint_fast64_t nack_packets; /* NACKs sent */
    atomic_uint_fast64_t nacked;       /* sequence numbers asked for, each try */
    atomic_uint_fast64_t repaired;     /* missing packets that came after all */
    atomic_uint_fast64_t given_up;     /* missing packets given up on */
    atomic_uint_fast64_t keyframe_requests;
    atomic_uint_fast64_t duplicates;      /* dropped: received before, or too old */
    atomic_uint_fast64_t padding_dropped; /* padding-only packets not relayed */
    atomic_uint_fast64_t rtt_us;          /* as NACKs measure it */
} room_recovery_stats;
typedef struct room_recovery room_recovery;

/* One rewritten stream towards a subscriber (per kind). */
typedef struct {
    bool started;
    uint32_t source_ssrc;
    uint16_t sequence_delta;
    uint32_t timestamp_delta;
    uint16_t last_sequence;
    uint32_t last_timestamp;
    uint64_t last_us;
    moat_picture_map picture; /* VP8/VP9 picture ids (room_forward.c) */
    /* Closing up after temporal layer drops, per source (room_temporal.h). */
    room_gap_map sequence_gaps, picture_gaps;
} room_out_stream;

typedef struct room_peer {
    moat_plugin_session *handle;
    const moat_gateway_calls *gateway;
    room *room;
    bool publisher;
    bool cascade_leg; /* a cluster's cascade leg: outside max_subscribers */
    char id[ROOM_PEER_ID_SIZE];
    char session_id[40]; /* the gateway's session id, fixed at attach */
    int worker;
    size_t n_media;
    moat_media_info *media;       /* n_media entries, owned */
    atomic_uint_fast64_t packets; /* received (publisher) or forwarded (subscriber) */
    atomic_bool muted[2];         /* audio, video not forwarded (room_message.c) */
    atomic_int data_stream;       /* an open data channel's stream id + 1 (the first), 0 none */
    moat_open_channels channels;  /* its worker only: who takes data_stream's place */
    atomic_uint_fast64_t data_messages; /* publisher: data channel messages received */
    atomic_uint_fast64_t data_dropped;  /* publisher: deliveries to subscribers refused */
    /* REMB (room_feedback.c). Publisher: its own cap (bits/s, 0 none), the
     * last value sent, how many were sent or failed, when (own worker).
     * Subscriber: its last REMB estimate and when it came. */
    atomic_uint_fast64_t max_bitrate;
    atomic_uint_fast64_t remb_bps;
    atomic_uint_fast64_t remb_sent;
    atomic_uint_fast64_t remb_failed;
    uint64_t remb_last_us;
    atomic_uint_fast64_t estimate_bps;
    atomic_uint_fast64_t estimate_us;
    /* Subscriber: RTCP packets of its peer asking for a keyframe (PLI or
     * FIR), for the API: a viewer that asks after a layer switch could not
     * decode across it. Written by its worker. */
    atomic_uint_fast64_t keyframe_requests;
    /* Subscriber: of those, how many were not passed on at once (one owed
     * request per ROOM_KEYFRAME_REQUEST_INTERVAL_US goes at its end), for
     * the API; and when the last
     * one was passed on (its worker only, gateway clock, 0 never). */
    atomic_uint_fast64_t keyframe_requests_dropped;
    uint64_t keyframe_passed_us;
    bool keyframe_owed; /* one was refused since: sent when the window ends */

    /* publisher */
    room_codec codecs[ROOM_MAX_CODECS]; /* fixed at attach */
    size_t n_codecs;
    atomic_bool keyframe_wanted; /* a keyframe on every layer */
    atomic_uint keyframe_layers; /* bit per simulcast layer: a keyframe on that one */
    _Atomic uint32_t ssrcs[2];   /* first media SSRC per kind (audio, video), 0 unknown */
    /* Packets dropped because another publisher of the room had claimed
     * their SSRC first (room_ssrc.c); its worker writes, the API reads. */
    atomic_uint_fast64_t ssrc_refused;
    /* Packets dropped because their simulcast layer had moved to a new SSRC
     * less than a second before (room_simulcast.c); its worker writes. */
    atomic_uint_fast64_t ssrc_changes_refused;
    /* Packets of a plain (not simulcast) stream on an SSRC other than its
     * first: one stream per kind, the others are not relayed. */
    atomic_uint_fast64_t ssrc_extra;
    /* RFC 6464 audio level, smoothed: -dBov x 256 (0 loudest, 127 x 256
     * silence), and when it was last updated (µs, gateway clock). */
    uint32_t level_smoothed;
    atomic_uint level;
    _Atomic uint64_t level_us;
    room_layer layers[ROOM_MAX_LAYERS]; /* simulcast video, n_layers of them */
    size_t n_layers;
    /* A cascade leg publisher (relay): when its last plain video packet and
     * its last layer packet arrived (µs, packet clock; 0 never). The other
     * node's source may send plain video on a link that offers layers
     * (room_simulcast_layered). */
    _Atomic uint64_t relay_plain_us, relay_layer_us;
    /* Loss recovery and padding on the way in (room_recovery.h): the
     * worker's state (allocated on the first packet), counters for the API. */
    struct room_recovery *recovery;
    room_recovery_stats recovery_stats;
    moat_plugin_fanout *fanout; /* its subscribers (room_fanout.h), NULL: none */
    /* Simulcast fan-out's targets of one packet (room_fanout.c), its worker
     * only: grown under the room's lock to the subscriber count. */
    moat_plugin_session **layer_targets;
    size_t layer_targets_size;

    /* subscriber */
    char source_id[ROOM_PEER_ID_SIZE]; /* "" follows the room's current publisher */
    struct room_peer *source;          /* under the room's lock */
    atomic_bool leave;                 /* set by others: close on the own worker */
    room_codec source_codecs[ROOM_MAX_CODECS];
    size_t n_source_codecs;
    uint32_t codecs_for_ssrc[2];
    uint32_t source_codecs_version; /* bumped when source_codecs is refreshed */
    /* room_forward.c: the m-line and payload type of the last source codec
     * per kind, kept until that codec or the table changes (the
     * subscriber's m-lines never do). */
    struct {
        const room_codec *codec; /* NULL: nothing kept */
        uint32_t version;
        int line;
        uint8_t payload_type;
    } line_cache[2];
    room_out_stream out[2];
    /* A cascade leg (moat_session_info.cascade, gateway/cluster/): as a
     * subscriber it takes every simulcast layer of its source, layer l
     * rewritten into relay_out[l] and sent on its m-line's
     * local_layer_ssrcs[l] (no layer choice: the other node's subscribers
     * choose); as a publisher its plain (non-layer) video is forwarded too. */
    bool relay;
    room_out_stream relay_out[ROOM_MAX_LAYERS];
    bool timer_armed;
    bool video_flowing; /* a video packet reached the peer: it asked for a keyframe */
    bool hung_up;
    /* subscriber, simulcast: the worker's choice (room_layers.h), the
     * source's layer SSRCs as last seen, and what others read or ask. */
    room_layer_state layer;
    uint32_t layer_ssrcs[ROOM_MAX_LAYERS];
    size_t n_source_layers;
    const struct room_peer *layer_source; /* whose layers these are (compared only) */
    uint32_t plain_ssrc;                  /* a video SSRC known not to be simulcast */
    atomic_bool layer_pinned;
    atomic_uint_fast64_t layer_estimate_bps;
    atomic_uint layer_mask;                 /* layers to relay to us: read by the publisher */
    atomic_int layer_request;               /* ROOM_LAYER_REQUEST_*, or a layer: set by the API */
    atomic_int layer_current, layer_target; /* for the API, -1 none */
    /* subscriber: the temporal layers it receives (room_temporal.h): the
     * worker's state, and its layers for the API. */
    room_temporal_state temporal;
    atomic_int temporal_current, temporal_target;
    room_bwe bwe; /* transport-cc estimate and probes (room_bwe.h) */
} room_peer;

struct room {
    char name[ROOM_NAME_SIZE];
    int refs;             /* under registry_lock */
    atomic_bool closed;   /* deleted through the API: peers leave */
    bool implicit;        /* created by a publisher: removed when empty */
    pthread_mutex_t lock; /* pthread: visible to ThreadSanitizer */
    room_peer *publishers[ROOM_MAX_PUBLISHERS];
    size_t n_publishers;
    room_peer **subscribers; /* ROOM_MAX_SUBSCRIBERS slots */
    size_t n_subscribers;
    size_t n_cascade_legs; /* of n_subscribers: not counted against max_subscribers */
    int max_publishers, max_subscribers;
    int publisher_worker, subscriber_worker; /* forced placement, -1: none */
    uint64_t serial;                         /* peer ids */
    /* Names its publishers' streams apart from every other room's in the
     * gateway's shared retransmission sources (room_forward.c): rooms made
     * so far, fixed at creation. */
    uint32_t source_space;
    char speaker[ROOM_PEER_ID_SIZE]; /* last active speaker announced, "" none */
    const char
        *codecs[ROOM_MAX_ROOM_CODECS]; /* accepted codecs (static names), fixed at creation */
    size_t n_codecs;                   /* 0: any */
    int max_bitrate; /* REMB cap for its publishers, bits/s, 0: none; fixed at creation */
    /* Explicit rooms: since when nobody is in it (µs, gateway clock), 0
     * while occupied; under the room's lock. */
    uint64_t empty_since_us;
};

/* The gateway's [room] options (config/moat.conf), read once by init
 * (room.c) before any other call; read-only afterwards. */
typedef struct {
    int max_rooms;           /* rooms at once, explicit and implicit */
    uint64_t empty_ttl_us;   /* an explicit room empty this long goes */
    uint64_t remb_floor_bps; /* lowest REMB target sent to a publisher */
    bool nack_publishers;    /* NACK publishers' losses (room_recovery.c) */
    bool send_side_bwe;      /* transport-cc estimates drive layers (room_bwe.c) */
} room_settings;
extern room_settings room_config;
void room_settings_load(const moat_gateway_calls *gateway);

/* room_registry.c (control thread unless said) */
void room_registry_init(void);
void room_registry_destroy(void);
bool room_name_valid(const char *name, size_t length);
/* The room named `name`, created when `create`; a new reference. */
room *room_acquire(const char *name, bool create);
void room_release(room *r);
/* room_join under the registry lock, listing the room again if it was
 * forgotten (emptied) between acquiring and joining it. */
const char *room_join_listed(room *r, room_peer *peer, const char *source_id);
/* Drops an implicitly created room from the table once nobody is in it. */
void room_forget_if_empty(room *r);
/* Drops explicit rooms that have been empty for [room] empty_ttl_s; returns
 * how many went. Control thread (a timer, and each API request). */
size_t room_registry_expire(uint64_t now_us);
/* Any thread. */
int room_place(const char *endpoint, const char *resource, unsigned n_workers);
char *room_handle_api(const char *method, const char *path, const char *body, size_t length,
                      int *status);
int room_publisher_session(const char *name, char *id, size_t size, char *label, size_t label_size);

/* room_registry.c: JSON replies of the room API (g_malloc'd body). */
char *room_api_reply(int *status, int code, void *json);
char *room_api_error(int *status, int code, const char *error, const char *detail);
/* A 405 whose body names the methods the path takes ("allow": "POST"). */
char *room_api_not_allowed(int *status, const char *allow, const char *detail);

/* room.c: joins and leaves under the room's lock. */
const char *room_join(room *r, room_peer *peer, const char *source_id);
void room_leave(room_peer *peer);

/* room_codecs.c: the room's codec list (control thread). */
typedef struct json_t json_t;
/* Fills r's list from a JSON array of codec names; false when it is not
 * one (1 to ROOM_MAX_ROOM_CODECS known names). NULL leaves it empty. */
bool room_codecs_parse(json_t *value, room *r);
json_t *room_codecs_describe(const room *r);
/* moat_plugin.accept_codec */
bool room_accept_codec(const char *endpoint, const char *resource, size_t media_index,
                       moat_media_kind kind, const char *name, uint32_t clock_rate);

/* room_feedback.c: REMB to publishers (the peer's worker). */
void room_feedback_note_remb(room_peer *subscriber, const moat_rtcp_fb *fb, uint64_t now_us);
void room_feedback_tick(room_peer *publisher, uint64_t now_us);
/* The REMB target of `n` subscriber estimates (bits/s; sorts them):
 * outliers left out, never below floor_bps; 0 when n is 0. Pure. */
uint64_t room_feedback_aggregate(uint64_t *estimates, size_t n, uint64_t floor_bps);
/* A subscriber's own keyframe request (its worker): true when it goes to
 * the publisher, at most once per ROOM_KEYFRAME_REQUEST_INTERVAL_US (the
 * first at once); false when it is dropped (counted). A cascade leg
 * (relay) always passes: it carries the requests of the other node's
 * viewers, each bounded there. */
bool room_feedback_keyframe_allowed(room_peer *subscriber, uint64_t now_us);
/* Whether a request refused inside the window is now due (once, when the
 * window ends; the subscriber's timer asks): a viewer whose keyframe was
 * lost is not left frozen because it asked again too soon. Its worker. */
bool room_feedback_keyframe_owed(room_peer *subscriber, uint64_t now_us);

/* room_bwe.c: the subscriber's sender-side estimate (its worker): takes it
 * into s->layer and probes toward the next layer over `bitrates`. */
void room_bwe_update(room_peer *s, const uint32_t *bitrates, size_t n, uint64_t now_us);
/* Subscriber: its sender-side estimate as its estimate for the REMB its
 * publisher is told (room_feedback.c): a transport-cc peer sends no REMB. */
void room_bwe_note(room_peer *s, uint64_t now_us);
/* Its state for the API (any thread), NULL when it has none. */
json_t *room_bwe_describe(const room_peer *s);

/* room_data.c: data channel messages from a publisher to its subscribers
 * (moat_plugin.on_data and on_channel, the peer's worker). */
/* A publisher's worker: `ssrc` stored in `slot` (one of the publisher's
 * ssrcs[] or layers[].ssrc) unless another publisher of the room already
 * sends it; false (the packet is the caller's to drop, counted here) when
 * one does. Takes the room's lock. (room_ssrc.c) */
bool room_ssrc_claim(room_peer *publisher, _Atomic uint32_t *slot, uint32_t ssrc);

void room_data_on_data(void *state, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                       size_t length);
void room_data_on_channel(void *state, uint16_t stream_id, const char *label, bool open);

/* room_message.c: moat_plugin.handle_message (the peer's worker). */
char *room_handle_message(void *state, const char *json);

/* room_events.c: events for GET /api/rooms/<room>/events (topic
 * rooms/<room>). Any thread; names and ids need no JSON escaping. */
void room_event(const room *r, const char *type, const char *role, const char *id,
                const char *publisher);
/* The active speaker's id or NULL. Room lock held. */
const char *room_active_speaker(room *r, uint64_t now_us);
/* Announces an active_speaker event when the speaker changed since the last
 * one. Room lock held. */
void room_note_speaker(room *r, uint64_t now_us);
/* The gateway's calls, set by init (room.c). */
extern const moat_gateway_calls *room_gateway;

#endif
