/* The session's state, shared by the files that implement its parts
 * (session.c: lifecycle, ICE and DTLS; session_media.c: SRTP, RTP and RTCP;
 * session_data.c: data channels). Nothing outside gateway/core includes it. */
#ifndef MOAT_SESSION_INTERNAL_H
#define MOAT_SESSION_INTERNAL_H

/* Peer SSRCs a cascade leg routes by (session_cascade.h). */
#define MOAT_SESSION_CASCADE_SSRCS 12
/* Streams whose keyframe requests are coalesced one by one (a simulcast
 * m-line's layers). */
#define MOAT_SESSION_LAYER_KEYFRAMES 4

#include "base/config.h"
#include "engine/counters.h"
#include "base/log.h"
#include "base/token_bucket.h"
#include "session/media_tap.h"
#include "session/session.h"
#include "session/session_handle.h"
#include "dtls/dtls_transport.h"
#include "ice/ice_pairs.h"
#include "ice/stun_integrity.h"
#include "prefilter/detector.h"
#include "prefilter/prefilter_settings.h"
#include "prefilter/stream_guard.h"
#include "rtp/retransmit_budget.h"
#include "rtp/retransmit_cache.h"
#include "rtp/retransmit_map.h"
#include "rtp/rtp_rewrite.h"
#include "rtp/rtp_demux.h"
#include "rtp/rtp_receive_stats.h"
#include "rtp/send_side_bwe.h"
#include "rtp/transport_cc.h"
#include "sdp/sdp.h"
#include "srtp/srtp_session.h"

#include <glib.h>

#define MOAT_SESSION_MAX_STREAMS 16

typedef struct {
    uint32_t ssrc;
    int media_index;
    uint32_t clock_rate;
    moat_rtp_receive_stats stats;
    uint64_t packets;
} moat_incoming_stream;

typedef struct {
    uint32_t ssrc;
    int media_index;
    uint32_t clock_rate;
    moat_media_kind kind;
    /* The answer took NACK for one of the m-line's codecs: only then is
     * a retransmission cache kept (a peer that cannot NACK never asks). */
    bool nack;
    moat_retransmit_cache *cache; /* allocated when the stream first sends, if nack */
    uint64_t cache_shrunk_us;     /* its last shrink, 0 never */
    /* Packets the plugin forwarded (send_rtp_forward) are not copied into
     * cache: the worker keeps their source packet once for every session
     * forwarding that source (session_rtx_share.c) and this map says how
     * each packet sent was made from one, for NACKs. Allocated at the first
     * forwarded packet if nack; owned; worker thread. */
    moat_retransmit_map *map;
    moat_retransmit_budget budget;
    uint32_t packets_sent;
    uint32_t octets_sent;
    uint32_t last_rtp_timestamp;
    uint64_t last_sent_us;
    bool has_sent;
    /* RTX (RFC 4588) when the answer took it: NACKs are answered on this
     * SSRC with its own sequence numbers (session_media.c), 0 none. */
    uint32_t rtx_ssrc;
    uint16_t rtx_sequence;
    /* The share of what this stream sent that the peer NACKed, per mille,
     * judged over at least MOAT_NACK_LOSS_WINDOW packets (session_retransmit.c):
     * on a path that loses 1-20 %, each retransmission goes out twice. */
    uint32_t nack_window_base; /* packets_sent when the window began */
    uint32_t nack_window_nacked;
    uint16_t nack_loss_permille;
    /* session_playout.c: video toward a viewer that took the playout-delay
     * extension; asking now (a lossy path), asked ever (then every packet
     * says the delay, 0 once the loss stopped). */
    bool playout_on, playout_asked;
} moat_outgoing_stream;

/* What a session keeps of the SDP negotiation once it exists: the
 * transport's parameters. The per-m-line result (about 1.2 KB a line for
 * MOAT_SDP_MAX_MEDIA lines) becomes session->media at creation and is not
 * kept (moat_session_media_init). */
typedef struct {
    char remote_fingerprint_alg[16];
    char remote_fingerprint[160];
    moat_sdp_setup local_setup; /* ACTIVE -> the gateway is the DTLS client */
    bool has_data_channel;
    uint16_t remote_sctp_port;
    uint32_t remote_max_message_size;
    bool srtpplus;
    moat_sdp_srtpplus srtpplus_scheme;
} moat_session_negotiation;

typedef struct moat_sctp_association moat_sctp_association;
struct srtpplus_receiver;
struct srtpplus_sender;

/* One stream's keyframe requests (request_layer_keyframe). */
typedef struct {
    uint32_t ssrc; /* 0: free */
    int8_t media_index;
    bool pending; /* a coalesced request still to send */
    uint64_t requested_us;
} moat_layer_keyframe;

struct moat_session {
    char *id;       /* the WHIP resource id: a capability, never logged */
    char label[24]; /* the public label (sequence number): what log lines name */
    moat_worker *worker;
    moat_session_ended_fn on_ended;
    /* Set by moat_session_start on its worker: before, the plugin's attach
     * may still be running (its state not set), so nothing is relayed. */
    bool started;
    bool ending;
    const char *end_reason;

    /* ICE */
    char local_ufrag[64], local_pwd[64];
    char remote_ufrag[257], remote_pwd[257];
    /* Credentials before an ICE restart, valid until the new ones are used. */
    char previous_local_ufrag[64], previous_local_pwd[64], previous_remote_ufrag[257];
    moat_ice_pairs pairs; /* its remotes are this session's entries in the tuple table */
    moat_path selected;
    bool has_selected;
    uint64_t created_us;
    uint64_t last_consent_us;    /* the selected pair's (cascade legs: their media's) */
    uint64_t pending_consent_us; /* the pending pair's last new check (pairs.pending) */
    uint64_t consent_timeout_us;
    /* The selected pair's consent lapsed while a pending pair's is fresh: the
     * session lives on, but nothing is sent to the selected pair (RFC 7675
     * §5.1) until a check on it or the pending pair's media (a move). */
    bool consent_withheld;
    /* A cascade leg (session_cascade.c): no ICE, authenticated media is consent. */
    bool cascade_leg;
    /* Made as one (moat_session_params.cascade): the plugin was told. */
    bool cascade_created;
    size_t relay_layers; /* moat_session_params.relay_layers, for media init */
    /* Its peer's SSRCs, when the leg shares its 5-tuple with the other legs
     * between the same two worker sockets (moat_worker_bind_route); none:
     * it owns the tuple alone. */
    uint32_t cascade_ssrcs[MOAT_SESSION_CASCADE_SSRCS];
    size_t n_cascade_ssrcs;
    uint64_t pending_timeout_us; /* 0: none */
    int *pending_counter;        /* non-NULL while counted as pending */
    int *source_pending_counter; /* the source's pending count; the same lifetime */
    /* MESSAGE-INTEGRITY keys of local_pwd and previous_local_pwd, made
     * again when the password changes (session_ice.c): every check is
     * authenticated by one HMAC before it spends anything. */
    moat_stun_integrity *stun_integrity;
    moat_stun_integrity *stun_integrity_previous;
    /* Authenticated checks a session takes: from pairs already checked,
     * and from new sources. Checks that fail MESSAGE-INTEGRITY take none,
     * so a flood of forged checks on the ufrag (sent in clear), from any
     * address, the peer's own included, cannot starve its consent checks,
     * a move or an ICE restart. */
    moat_token_bucket stun_known;
    moat_token_bucket stun_new;
    /* [limits] session_media_kbps: authenticated RTP bytes this session may
     * deliver (session_media.c); rate 0: no cap. Worker thread. */
    moat_token_bucket media_rate;

    /* DTLS and SRTP */
    moat_dtls_context *dtls_context;
    moat_dtls_transport *dtls;
    moat_dtls_role dtls_role;
    bool dtls_started;
    bool dtls_connected;
    uint64_t dtls_trim_us; /* the next moat_dtls_transport_trim */
    uint64_t dtls_seen;    /* DTLS datagrams both ways at the last trim */
    moat_srtp_session *srtp;

    /* RTP ingest (session_plain.c): no ICE or DTLS, plain RTP or SRTP with
     * keys from the API; its own UDP socket, latched to the first source.
     * plain_fd < 0: a WebRTC session. */
    int plain_fd;
    uint16_t plain_port;     /* plain_fd's, marked Moat's own while it is open (own_sockets.h) */
    bool plain_source_fixed; /* plain_source given by the API: only its address is accepted */
    bool plain_latched;
    struct sockaddr_in6 plain_source;
    uint64_t plain_idle_timeout_us; /* no valid packet this long: the ingest ends; 0: never */
    uint64_t plain_last_rx_us;      /* the last valid packet (or the start) */
    uint32_t plain_queue_drops;     /* its socket's SO_RXQ_OVFL count already counted */
    /* SRTP ingest: the sender's keys until the worker installs them at
     * start (then session->srtp authenticates, and only an authentic
     * packet latches the sender); owned, wiped when freed. */
    moat_srtp_keying *plain_keys;

    /* Media */
    moat_session_negotiation negotiation;
    moat_media_info *media; /* n_media entries, owned (session_media.c) */
    size_t n_media;
    /* Streams, at most MOAT_SESSION_MAX_STREAMS each way, allocated as they
     * come (an audio-only session has one or two): the incoming ones at an
     * SSRC's first authenticated packet, growing 2, 4, 8, 16 (a pointer to
     * one is valid until the next new SSRC); the outgoing ones at creation,
     * one per m-line the peer receives on. Owned; worker thread. */
    moat_incoming_stream *incoming;
    size_t n_incoming, incoming_capacity;
    moat_outgoing_stream *outgoing;
    size_t n_outgoing;
    uint32_t rtcp_ssrc; /* sender SSRC of reports when we send no media */
    uint64_t rtt_us;    /* from the peer's reports on what we send; 0 unknown */
    uint64_t next_report_us;
    /* Transport-wide feedback to the peer (session_media.c), when the
     * answer took its header extension (that id); NULL otherwise. */
    moat_twcc_recorder *twcc;
    uint8_t twcc_id;
    /* The playout-delay extension's id toward the peer (BUNDLE: one), 0
     * none, and the most delay asked (session_playout.c); 0: never asked. */
    uint8_t playout_id;
    uint16_t playout_max_ms;
    /* Transport-wide sequence numbers on what we send and the sender-side
     * estimator on the peer's feedback (session_bwe.c), when an m-line the
     * peer receives on took the extension; NULL otherwise. */
    moat_ssbwe *bwe;
    /* What each recent transport-wide sequence number carried, for repairs
     * of what the feedback reports lost (session_retransmit.c); with bwe. */
    struct moat_twcc_sent_s *twcc_sent;
    struct {
        bool active;
        uint64_t target_bps, start_us, end_us, bytes_sent;
    } probe;
    uint64_t padding_packets;
    moat_counters counters; /* this transport's share of the worker's counters */
    moat_log_limiter log_limiter;

    /* Data channels */
    moat_sctp_association *sctp;
    bool sctp_up;
    GQueue data_queue;        /* messages waiting for room in the SCTP send buffer */
    size_t data_queued_bytes; /* messages and their headers, charged to data limits */
    size_t data_reserved;     /* the association's share, charged to data limits */
    /* Backpressure: reading from SCTP stopped until what this session's
     * messages made the gateway queue drains (session_data_flow.c). */
    bool data_receive_paused;
    /* When the queue's head started waiting or the association last took
     * from it; a peer that takes nothing for MOAT_DATA_STALL_US is stalled
     * and copies relayed from other sessions are dropped (counted) instead
     * of holding their sources back. */
    uint64_t data_progress_us;
    bool data_stalled;
    /* Application data decrypted during the current moat_session_handle_dtls. */
    bool dtls_application_seen;
    /* A graceful end waits for SCTP to drain before close_notify. */
    bool draining;
    uint64_t drain_deadline_us; /* moved on whenever the peer acknowledges more */
    uint64_t drain_started_us;
    size_t drain_pending_bytes; /* still to deliver at the last tick */
    char *drain_reason;

    /* Flood defence */
    const moat_prefilter_settings *prefilter;
    moat_detector detector;
    moat_stream_guard guard;
    struct srtpplus_receiver *srtpplus_rx;
    struct srtpplus_sender *srtpplus_tx;
    uint64_t first_bad_us; /* first failed packet since the last calm period */
    uint64_t first_anomaly_us;
    uint64_t enforcing_since_us;
    uint64_t last_detection_delay_us; /* first bad packet -> enforcing, last switch */

    /* Plugin, and a second consumer of the media (media_tap.h) */
    moat_plugin_session *handle; /* session_handle.h: holds one reference */
    const moat_plugin *plugin;
    void *plugin_state;
    /* Routing core (plugin API v2): BUNDLE demux over media[], the plugin's
     * timer (0: disarmed) and the last keyframe request per m-line. */
    moat_rtp_demux demux;
    uint64_t plugin_timer_us;
    uint64_t keyframe_requested_us[MOAT_PLUGIN_MAX_MEDIA];
    uint32_t keyframe_pending; /* bit per m-line: a coalesced request still to send */
    /* Keyframe requests for single streams (request_layer_keyframe): the
     * last few SSRCs asked for, each with its own interval. */
    moat_layer_keyframe layer_keyframes[MOAT_SESSION_LAYER_KEYFRAMES];
    uint8_t fir_sequence;
    moat_media_tap tap;
};

/* session_media.c */
/* session->media and the outgoing streams from the negotiation's m-lines. */
void moat_session_media_init(moat_session *session, const moat_sdp_negotiation *negotiation);
void moat_session_media_clear(moat_session *session);
int moat_session_media_keys(moat_session *session, const moat_srtp_keying *keys);
void moat_session_media_tick(moat_session *session, uint64_t now_us);
/* session_media.c: the stream state of an SSRC we send (NULL when unknown),
 * and SRTP/SRTCP protection then the send batch (0 or -1). */
moat_outgoing_stream *moat_session_outgoing_stream(moat_session *session, uint32_t ssrc);
int moat_session_send_protected(moat_session *session, const uint8_t *packet, size_t length,
                                bool rtcp);
/* The same, queueing the protected datagram `copies` times (the receiver's
 * SRTP drops a copy as a replay once one got through). */
int moat_session_send_protected_copies(moat_session *session, const uint8_t *packet, size_t length,
                                       bool rtcp, unsigned copies);
/* session_retransmit.c: answers one NACK (within the stream's budget and
 * the RTCP packet's count, *answered), and repairs the packets that
 * transport-cc feedback reported lost (moat_session_bwe_feedback calls it
 * with the estimator's lost sequence numbers). */
void moat_session_answer_nack(moat_session *session, const moat_rtcp_fb *feedback,
                              unsigned *answered);
/* What a transport-wide sequence number carried: a media packet of
 * outgoing[stream] (sequence: its own), an RTX packet repairing one
 * (sequence: the repaired one), or nothing to repair (probe padding, or a
 * stream the session does not know). */
#define MOAT_TWCC_SENT_HISTORY 1024u
enum { MOAT_TWCC_SENT_NONE = 0, MOAT_TWCC_SENT_MEDIA, MOAT_TWCC_SENT_RTX };
typedef struct moat_twcc_sent_s {
    uint16_t transport_sequence;
    uint16_t sequence;
    uint8_t stream;
    uint8_t kind;
} moat_twcc_sent;
/* Notes what `packet` (plaintext RTP, stamped) carried. */
void moat_session_note_sent(moat_session *session, const uint8_t *packet, size_t length,
                            uint16_t transport_sequence);
/* Resends what the last feedback newly reported lost and no NACK has
 * repaired since it left, within the streams' budgets. */
void moat_session_repair_lost(moat_session *session);
/* Source packets older than this are not resent. */
#define MOAT_SESSION_RETRANSMIT_MAX_AGE_US 2000000ull
/* session_plugin_calls.c: sizes (creates, grows, shrinks) a retransmission
 * cache to the rates `budget` measured over the horizon rtt_us gives (0:
 * the longest). */
void moat_session_size_cache(moat_retransmit_cache **cache, uint64_t *shrunk_us,
                             const moat_retransmit_budget *budget, bool video, uint64_t rtt_us,
                             uint64_t now_us);
/* session_rtx_share.c: send_rtp_forward (plugin.h), and a NACK of a
 * forwarded stream's packet rebuilt from the worker's shared source copy
 * into out (capacity MOAT_RETRANSMIT_MAX_PACKET): the map's results
 * (retransmit_map.h; nothing marked resent: the caller marks it with
 * moat_retransmit_map_mark_resent once it was sent). Session's worker. */
int moat_session_send_rtp_forward(moat_plugin_session *handle, uint8_t *packet, size_t *length,
                                  uint64_t source_key, const moat_rtp_rewrite *rewrite);
int moat_session_rebuild_forwarded(moat_session *session, moat_outgoing_stream *stream,
                                   uint16_t sequence, uint64_t now_us, uint8_t *out,
                                   size_t *length);
/* session_rtx_share.c: frees the worker's sources idle past the age (at
 * most once a second; also done when forwarding). Session's worker. */
void moat_session_rtx_share_sweep(moat_worker *worker, uint64_t now_us);
/* session_rtx_share.c: the most shared sources a worker holds; past it a new
 * key gets none (forwarded, not kept; its NACKs counted as nack_gone).
 * A source is one publisher stream (the room's space and an SSRC) forwarded
 * to at least one session of the worker: a publisher sends at most audio
 * and 3 simulcast layers, and a layer that moved to a new SSRC (at most once
 * a second, room_simulcast.c) or that a subscriber left keeps its source for
 * the 2 s age plus the 1 s sweep. At the default [limits] max_sessions
 * (1000, all workers together) 500 publishers each watched from this one
 * worker make at most 500 x (audio, a layer, the layer just left) = 1500
 * sources, or 500 x 4 = 2000 through cascade legs (every layer): 2048 is not
 * reached by legitimate rooms, and bounds what a stream of new SSRCs holds:
 * each source starts with a cache of about 52 KB (128 slots, a 48 KB
 * arena), about 106 MB per worker. */
#define MOAT_SESSION_RTX_SHARE_MAX_SOURCES 2048u
/* session_rtx_share.c: the shared sources of the calling worker (tests and
 * /metrics-style accounting): how many, and their caches' bytes. */
size_t moat_session_rtx_share_sources(moat_worker *worker, size_t *bytes);
/* session_plugin_calls.c: what send_rtp does after the cache: budget,
 * counters, protection and the send batch. */
int moat_session_send_rtp_accounted(moat_session *session, moat_outgoing_stream *stream,
                                    const uint8_t *packet, size_t length, size_t payload_length);
/* session_plugin_calls.c: keyframe requests whose coalescing interval is over. */
void moat_session_send_pending_keyframes(moat_session *session, uint64_t now_us);
extern const moat_gateway_calls moat_session_gateway_calls;

/* session_bwe.c: transport-cc toward the peer. */
void moat_session_bwe_init(moat_session *session);
void moat_session_bwe_free(moat_session *session);
/* Stamps the transport-wide sequence number on an outgoing RTP packet in
 * `buffer` (growing it by up to 8 bytes) and remembers it. */
/* The window over which a stream's NACKed share is judged, in packets sent. */
#define MOAT_NACK_LOSS_WINDOW 200u

/* Writes the playout delay the stream of this RTP packet (or its RTX)
 * asks of the peer's jitter buffer, if any (session_playout.c); the
 * packet grows by up to 8 bytes within `capacity`. Worker thread. */
void moat_session_playout_stamp(moat_session *session, uint8_t *buffer, size_t *length,
                                size_t capacity);
/* The playout-delay extension's id from the negotiated m-lines. */
void moat_session_playout_init(moat_session *session);

void moat_session_bwe_stamp(moat_session *session, uint8_t *buffer, size_t *length,
                            size_t capacity);
/* The peer's transport-cc feedback. */
void moat_session_bwe_feedback(moat_session *session, const moat_rtcp_fb *feedback);
/* Probe padding that is due. */
void moat_session_bwe_tick(moat_session *session, uint64_t now_us);
int moat_session_bwe_estimate(moat_plugin_session *handle, moat_plugin_estimate *out);
int moat_session_bwe_probe(moat_plugin_session *handle, uint64_t target_bps, uint64_t duration_us);
/* The estimator's figures for /api/stats and /metrics ({"estimate_bps",
 * "acked_bps", "loss", "usage", "probing"}); JSON null without transport-cc
 * feedback yet. Worker thread. */
struct json_t *moat_session_bwe_describe(const moat_session *session);
/* Control thread, before plugins load: the configuration config_int reads. */
void moat_session_plugin_calls_set_config(const moat_config *config);

/* session_relay.c: the plugin calls any thread may make. */
/* The session whose received RTP the calling thread is handing to its
 * plugin (what relay_rtp and relay_rtp_many send meanwhile counts against
 * its relay source), NULL outside. enter returns the previous one for
 * leave. */
moat_plugin_session *moat_session_rtp_source_enter(moat_plugin_session *source);
void moat_session_rtp_source_leave(moat_plugin_session *previous);
int moat_session_relay_rtp(moat_plugin_session *handle, const uint8_t *packet, size_t length);
size_t moat_session_relay_rtp_many(moat_plugin_session *const *handles, size_t n,
                                   const uint8_t *packet, size_t length);
/* session_fanout.c: fan-out lists (plugin.h fanout_*). */
moat_plugin_fanout *moat_session_fanout_new(moat_plugin_session *producer);
void moat_session_fanout_set(moat_plugin_fanout *fanout, moat_plugin_session *const *sessions,
                             size_t n);
size_t moat_session_fanout_send(moat_plugin_fanout *fanout, const uint8_t *packet, size_t length);
void moat_session_fanout_free(moat_plugin_fanout *fanout);
/* session_relay_data.c: relay_data (any thread). */
int moat_session_relay_data(moat_plugin_session *handle, uint16_t stream_id, uint32_t ppid,
                            const uint8_t *data, size_t length);

/* session_tap.c: hands a received packet to the tap (set), and sends the
 * PLI it asks for. */
void moat_session_tap_rtp(moat_session *session, const uint8_t *packet, size_t length,
                          uint32_t ssrc, uint64_t now_us);

/* session_plain.c, from moat_session_set_plain (control thread): marks the
 * ingest socket's port as Moat's own (the worker's own_sockets.h) until
 * moat_session_plain_stop unmarks it before the close. */
void moat_session_plain_mark_own(moat_session *session);
/* session_prefilter.c */
void moat_session_prefilter_init(moat_session *session, const moat_prefilter_settings *settings);
int moat_session_prefilter_keys(moat_session *session, const moat_srtp_keying *keys);
void moat_session_prefilter_clear(moat_session *session);
/* Feed the detector: every datagram, and every failed or dropped one. */
void moat_session_prefilter_packet(moat_session *session);
void moat_session_prefilter_bad(moat_session *session);
void moat_session_prefilter_tick(moat_session *session, uint64_t now_us);
bool moat_session_enforcing(const moat_session *session);
/* What the stream guard of a transport without SRTP+ is told per packet. */
moat_guard_load moat_session_guard_load(const moat_session *session, bool enforcing);

/* session_data_flow.c: backpressure on data channels. A message waiting to
 * be sent (in a session's queue, or posted to another worker) that was made
 * from a message some session received holds credit on that session, its
 * source; the source stops reading from SCTP while it holds too much
 * (moat_session_data_flow_check) and whoever gives the credit back wakes it
 * (a task on its worker) once it holds little enough. */
typedef struct {
    moat_plugin_session *source; /* one reference; NULL: nothing charged */
    size_t bytes;
    bool in_transit; /* posted to another worker, counted in flow_in_transit */
} moat_data_credit;

/* Messages posted to other workers a source may have undelivered before it
 * stops reading, and under which it resumes. Its copies are never refused
 * for the target's bound on a plugin's own messages
 * (MOAT_PLUGIN_RELAY_DATA_QUEUE): this mark is what bounds them. */
#define MOAT_DATA_FLOW_IN_TRANSIT_HIGH (MOAT_PLUGIN_RELAY_DATA_QUEUE / 2)
#define MOAT_DATA_FLOW_IN_TRANSIT_LOW  (MOAT_PLUGIN_RELAY_DATA_QUEUE / 4)

/* Charges `bytes` to `source` (none when NULL). Any thread. */
void moat_data_credit_take(moat_data_credit *credit, moat_plugin_session *source, size_t bytes,
                           bool in_transit);
/* Gives the charge back, and wakes the source's worker when that takes the
 * source, paused, under its low-water mark. Any thread; idempotent. */
void moat_data_credit_give(moat_data_credit *credit);
/* The session whose received message the calling thread is delivering to
 * its plugin (messages sent meanwhile are made from it), NULL outside.
 * enter returns the previous one for leave (deliveries may nest). */
moat_plugin_session *moat_data_flow_source(void);
moat_plugin_session *moat_data_flow_enter(moat_plugin_session *source);
void moat_data_flow_leave(moat_plugin_session *previous);
/* The source's credit over `high_bytes` (or too many messages in transit). */
bool moat_data_flow_over(moat_plugin_session *source, size_t high_bytes);
/* Arms the wake-up: credit given back under `low_bytes` (and few enough
 * messages in transit) posts moat_session_data_flow_check to the source's
 * worker. Then reports whether it is already there (a give that came
 * before arming woke nobody). Source's worker. */
bool moat_data_flow_arm(moat_plugin_session *source, size_t low_bytes);
/* No wake-up wanted any more (reading resumed). */
void moat_data_flow_disarm(moat_plugin_session *source);

/* session_data.c */
void moat_session_data_start(moat_session *session);
void moat_session_data_receive(moat_session *session, const uint8_t *data, size_t length);
void moat_session_data_clear(moat_session *session);
/* Starts a graceful SCTP shutdown; false when there is nothing to drain. */
bool moat_session_data_begin_drain(moat_session *session);
bool moat_session_data_drained(const moat_session *session);
/* Aborts the SCTP association (the ABORT goes to the peer) and clears the
 * data channels as moat_session_data_clear does. */
void moat_session_data_abort(moat_session *session);
/* Bytes the data channels still have to deliver: queued in the session and
 * in the association, sent or not, until the peer acknowledges them. */
size_t moat_session_data_pending_bytes(const moat_session *session);
/* Sends one message to the session's peer, or queues it while the SCTP send
 * buffer is full. Made from the message the calling thread is delivering
 * (moat_data_flow_source) when there is one. 0, or -1 refused (counted as a
 * datachannel_limit drop when for lack of memory). */
int moat_session_data_send(moat_session *session, uint16_t stream_id, uint32_t ppid,
                           const uint8_t *data, size_t length);
/* As moat_session_data_send, made from a message `source` received (NULL: a
 * plugin's own message): that is never refused for the queue's limit,
 * whether from the source itself (the echo) or from another session (a
 * relay); what waits is charged to the source, which stops reading past its
 * own high-water mark (half its queue room), so a session's queue holds at
 * most that per source feeding it, past the session's own limit when
 * several do. Session's worker. */
int moat_session_data_send_from(moat_session *session, moat_plugin_session *source,
                                uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                                size_t length);
/* Backpressure: stops the session's reading from SCTP while what its
 * messages made the gateway queue is over its high-water mark (or the
 * gateway's data-channel total is nearly spent), and resumes it once that
 * drained under the low-water mark. After each message delivered, from the
 * tick, and when credit given back wakes the session. Session's worker. */
void moat_session_data_flow_check(moat_session *session);
/* Periodic upkeep of the association (idle buffers give their growth
 * back); from moat_session_tick. */
void moat_session_data_tick(moat_session *session);
/* The association's buffers and what the session holds for its data
 * channels, for /api/stats; JSON null without an association. Worker
 * thread. */
struct json_t *moat_session_data_describe(const moat_session *session);

/* Lines from the packet path and the session's lifecycle pass the worker's
 * log limiter (many sessions cannot flood the log); lines one session can
 * repeat (pair changes, ICE restarts, detector switches) pass the session's
 * own limiter too. Suppressed lines are counted in the next one's fields. */
bool moat_session_log_allow(moat_session *session, bool repeating, moat_log_level level,
                            char *fields, size_t fields_size);
#define moat_session_log_as(session, repeating, level, component, ...)                             \
    do {                                                                                           \
        char session_log_fields_[48];                                                              \
        if (moat_session_log_allow((session), (repeating), (level), session_log_fields_,           \
                                   sizeof session_log_fields_))                                    \
            moat_log_write((level), (component), session_log_fields_, __VA_ARGS__);                \
    } while (0)
#define moat_session_log(session, level, component, ...)                                           \
    moat_session_log_as(session, false, level, component, __VA_ARGS__)
#define moat_session_log_repeating(session, level, component, ...)                                 \
    moat_session_log_as(session, true, level, component, __VA_ARGS__)

/* A forgery at this transport: its detector counts it; the worker's
 * (floods spread over transports none of which sees enough alone) only
 * while this transport's own is off: one peer failing its own session's
 * HMAC, enforced against already, cannot switch its whole worker on. */
static inline void moat_session_note_forgery(moat_session *session)
{
    bool own = moat_detector_enforcing(&session->detector);
    moat_session_prefilter_bad(session);
    if (!own)
        moat_worker_note_bad_datagram(session->worker);
}

/* Counts a drop for this transport and its worker. */
static inline void moat_session_drop(moat_session *session, moat_drop_reason reason)
{
    moat_counter_add(&session->counters.dropped[reason], 1);
    moat_counter_add(&moat_worker_counters_mut(session->worker)->dropped[reason], 1);
    /* Only proof of forgery feeds the detectors: a failed HMAC or a wrong
     * SRTP+ tag. Drops the prefilter itself causes (budget, unknown SSRC,
     * index) would keep it enforcing on its own evidence. */
    if (reason == MOAT_DROP_AUTH || reason == MOAT_DROP_TAG)
        moat_session_note_forgery(session);
}

/* session_media.c: a parsed, authentic (or plain, for ingest) RTP packet
 * goes to the receive statistics, the tap and the plugin; false (counted
 * malformed) when it does not parse as RTP. */
bool moat_session_deliver_rtp(moat_session *session, uint8_t *data, size_t length, size_t capacity,
                              uint64_t now);

/* The ICE and consent parts (session_ice.c, session_cascade.c). */
#include "session/session_ice_internal.h"

#endif
