/* The calls Moat relays for a SIP proxy: a registry of calls by call-id,
 * each with its two parties by tag (side 0: the first offer's from-tag,
 * never replaced; side 1: the latest answer's to-tag, so a later fork's
 * 200 OK takes the call, or the from-tag of an offer whose to-tag is the
 * caller's) and one stream (two legs, call_media.h) per m-line, all on one
 * worker. Driven by ng commands (offer, answer, delete, query, list:
 * ng/ng_request.h). An offer goes to the side its from-tag names, else to
 * the callee's when its to-tag is the caller's; tags naming no party are
 * an error. An offer or answer whose SDP aims a leg at a refused
 * destination (call_address.h) is an error that creates and changes
 * nothing. A call whose legs receive nothing for a while ends (the media
 * timeout: moat_call_registry_sweep). Control thread only. */
#ifndef MOAT_CALL_REGISTRY_H
#define MOAT_CALL_REGISTRY_H

#include "call/call_address.h"
#include "call/call_learning.h"
#include "call/call_media.h"
#include "call/call_sdp.h"
#include "call/call_webrtc.h"
#include "engine/worker.h"
#include "ng/ng_request.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct moat_call_registry moat_call_registry;

typedef struct {
    moat_worker *const *workers;
    unsigned n_workers;
    const char *bind_address; /* [media] bind */
    int port_min, port_max;   /* [media] port_min, port_max */
    const char *address;      /* put in c= lines unless the request names media-address */
    int delete_delay_s;       /* [ng] delete_delay_s: delete without delete-delay */
    int max_calls;            /* [ng] max_calls: calls at once; 0: no limit */
    int max_load;             /* [ng] max_load: workers' CPU percent (call_load.h); 0: none */
    /* [call] media_timeout_s, silent_timeout_s (moat_call_registry_sweep); 0: off */
    int media_timeout_s, silent_timeout_s;
    /* [call] max_transcoders: transcoding pipelines at once (two per
     * transcoded m-line; call_transcode_plan.h); 0: no transcoding */
    int max_transcoders;
    moat_call_webrtc_env webrtc; /* gateway NULL: WebRTC parties are refused */
    /* [call] (call_learning.h, call_address.h) */
    moat_call_learning learning;
    bool allow_loopback_destinations;
    const char *denied_networks; /* comma-separated CIDRs; NULL or "": none */
    /* Moat's sockets outside the call layer (is_own_port NULL: none); the
     * legs' own range is added here. */
    moat_call_own_endpoints own;
    /* The record of Moat's own sockets (engine/own_sockets.h), outliving the
     * registry: the legs mark their ports there and the loop guard reads it.
     * NULL: the registry keeps one of its own (the legs' ports alone). */
    moat_own_sockets *own_sockets;
} moat_call_settings;

moat_call_registry *moat_call_registry_new(const moat_call_settings *settings, char *error,
                                           size_t error_size);
/* Frees every call and the registry: after the workers stopped (their legs
 * then close at once) and before they are freed. */
void moat_call_registry_free(moat_call_registry *registry);
/* Draining (a cluster node leaving): new calls are refused like at
 * max_calls and max_load ("load limit" / "Parallel session limit
 * reached"); the calls already relayed go on (answer, delete, re-offers). */
void moat_call_registry_set_draining(moat_call_registry *registry, bool draining);
/* Whether `from` is one of Moat's own sockets (a leg's, or the gateway's
 * others) on this host: what must never send ng requests. */
bool moat_call_registry_is_own_source(const moat_call_registry *registry,
                                      const struct sockaddr *from, socklen_t from_length);

typedef struct {
    char *sdp;         /* offer/answer: the rewritten SDP (owned; g_free) */
    char error[192];   /* non-empty: result "error" with this error-reason */
    char warning[128]; /* non-empty: "warning" on an ok reply */
    /* With error: a limit refused a new call and the request "supports"
     * "load limit" (the proxy tries its next node): result "load limit". */
    bool load_limit;
} moat_call_reply;

void moat_call_reply_clear(moat_call_reply *reply);

/* Each fills reply (error or ok). */
void moat_call_offer(moat_call_registry *registry, const moat_ng_request *request,
                     moat_call_reply *reply);
void moat_call_answer(moat_call_registry *registry, const moat_ng_request *request,
                      moat_call_reply *reply);
/* Ends the call (after delete-delay) when it has no from-tag or its tags
 * name a party as rtpengine matches them (to-tag first); tags naming no
 * party leave the call as it was: ok with the warning "Call-ID not found
 * or tags didn't match", an error with "fatal". */
void moat_call_delete(moat_call_registry *registry, const moat_ng_request *request,
                      moat_call_reply *reply);

/* What query reports of one call. */
typedef struct {
    char kind[16];
    char protocol[32];   /* the party's transport (UDP/TLS/RTP/SAVPF: a WebRTC leg) */
    bool webrtc;         /* its leg is a core session (call_webrtc.h) */
    uint16_t local_port; /* Moat's port facing this party */
    struct sockaddr_in6 sdp_address;
    bool rtcp_mux;
    moat_call_leg_counters counters; /* what this party sent to Moat */
} moat_call_media_view;

typedef struct {
    const char *tag; /* NULL: not known yet (no answer) */
    size_t n_media;
    moat_call_media_view media[MOAT_CALL_SDP_MAX_MEDIA];
} moat_call_side_view;

typedef struct {
    const char *call_id;
    int64_t created_s; /* Unix time */
    bool deleting;     /* deleted, relaying until delete-delay ends */
    moat_call_side_view sides[2];
} moat_call_view;

/* 0, or -1 for an unknown call. Strings point into the registry until the
 * next command. */
int moat_call_query(moat_call_registry *registry, const char *call_id, moat_call_view *out);
/* Up to `capacity` call-ids (valid until the next command); how many. */
size_t moat_call_list(moat_call_registry *registry, const char **ids, size_t capacity);
size_t moat_call_count(moat_call_registry *registry);

/* The rtcp-mux of each m-line after an answer: muxed when Moat's offer to
 * the answerer offered it (`offered`) and the answer accepts it. m-lines
 * the answer lacks (fewer than the offer had) do not mux. Fills all
 * MOAT_CALL_SDP_MAX_MEDIA entries of `out`. */
void moat_call_answer_mux(const moat_call_sdp *answer, const bool *offered, bool *out);

/* Keeping calls over a restart (call_restore.c): every restorable call's
 * record (call_journal.h: its ng commands and the ports and keys Moat
 * chose) is put to a store after each offer and answer that changed it,
 * and removed when the call is deleted; a node started again hands the
 * records back to moat_call_registry_restore, which replays them on the
 * same ports with the same keys. Calls with a WebRTC leg (DTLS keys) are
 * not kept. The store (the cluster's Redis) is the caller's; Moat's own
 * shutdown leaves the records in it. */
typedef struct {
    /* `record` is `length` octets, valid during the call; secrets inside. */
    void (*put)(void *user, const char *call_id, const uint8_t *record, size_t length);
    void (*remove)(void *user, const char *call_id);
    void *user;
} moat_call_journal_sink;

typedef enum {
    MOAT_CALL_RESTORED,        /* rebuilt on its recorded ports and keys */
    MOAT_CALL_RESTORE_FAILED,  /* malformed, ports taken, a step refused */
    MOAT_CALL_RESTORE_SKIPPED, /* a call by that id exists already */
    MOAT_CALL_RESTORE_IDLE,    /* restored, but no packet within restore_idle_s: ended */
    MOAT_CALL_RESTORE_OUTCOMES
} moat_call_restore_outcome;

/* sink NULL: no journaling (the default). restore_idle_s: a restored call
 * on which no leg receives a packet within it ends (its parties are gone). */
void moat_call_registry_set_journal(moat_call_registry *registry,
                                    const moat_call_journal_sink *sink, int restore_idle_s);
/* Puts every restorable call's record again (the store came back). */
void moat_call_registry_journal_all(moat_call_registry *registry);
/* Rebuilds one call from its record. The outcome; `error` says why for
 * FAILED. */
moat_call_restore_outcome moat_call_registry_restore(moat_call_registry *registry,
                                                     const uint8_t *record, size_t length,
                                                     char *error, size_t error_size);

/* The media timeout, as rtpengine's timeout and silent-timeout: a call none
 * of whose legs received an RTP or RTCP packet (one a leg accepted: a
 * stranger's dropped datagrams do not count) for media_timeout_s, counted
 * from its creation, its last offer or answer that succeeded, or its last
 * packet, ends as an ng delete with delete-delay 0 ends it (its ports
 * freed, its record withdrawn, its WebRTC sessions ended). A call whose
 * parties may rightly be silent gets silent_timeout_s instead: not answered
 * yet (ringing), or an m-line in use that a party's latest SDP holds
 * (c=0.0.0.0 on a phone's), makes one-way (sendonly, recvonly) or
 * inactive. A restored call none of whose parties sent since the restore
 * ends after restore_idle_s (counted "idle" in moat_calls_restored_total).
 * Calls in their delete-delay are left to it. A timer runs one sweep over
 * all calls every second (a quarter of the shortest limit when that is
 * less), reading the legs' packet counters (no cost on the workers): a call
 * ends between its limit and its limit plus two sweep periods after its
 * last packet. Each end is counted by timeout and logged (rate-limited).
 * For tests: one sweep at monotonic time now_us (g_get_monotonic_time). */
typedef enum {
    MOAT_CALL_TIMEOUT_MEDIA,  /* media_timeout_s */
    MOAT_CALL_TIMEOUT_SILENT, /* silent_timeout_s */
    MOAT_CALL_TIMEOUTS
} moat_call_timeout;

void moat_call_registry_sweep(moat_call_registry *registry, int64_t now_us);
/* Calls ended by `timeout` so far. */
uint64_t moat_call_registry_timed_out(const moat_call_registry *registry,
                                      moat_call_timeout timeout);

/* Prometheus lines of the call layer (metrics.c style). */
void moat_call_registry_metrics(moat_call_registry *registry, GString *out);

/* Stream `index` (m-line) of a call, or NULL; for tests and fuzz targets
 * that feed its legs (moat_call_stream_receive). */
moat_call_stream *moat_call_registry_stream(moat_call_registry *registry, const char *call_id,
                                            size_t index);

#endif
