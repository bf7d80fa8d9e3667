/* The registry's and a call's state, shared by call_registry.c and
 * call_registry_metrics.c (call/ only). Control thread. */
#ifndef MOAT_CALL_REGISTRY_PRIVATE_H
#define MOAT_CALL_REGISTRY_PRIVATE_H

#include "call/call_registry.h"
#include "call/call_journal.h"
#include "call/call_load.h"
#include "call/call_sdes.h"
#include "call/call_transcode_plan.h"
#include "call/call_webrtc_offer.h"

#include "base/log.h"

struct moat_call_registry {
    GHashTable *calls; /* call-id -> moat_call (owned) */
    moat_call_ports *ports;
    moat_own_sockets *own;      /* the legs' ports are marked here (loop guard) */
    moat_own_sockets *own_made; /* owned: settings gave none */
    moat_call_worker **contexts;
    unsigned n_contexts;
    char *address;
    int delete_delay_s;
    moat_call_webrtc_env webrtc;
    moat_call_learning learning;
    moat_call_network *denied;       /* owned */
    moat_call_own_endpoints outside; /* the gateway's own sockets */
    moat_call_destination_policy destinations;
    int max_calls; /* 0: no limit */
    int max_load;  /* [ng] max_load: workers' CPU percent; 0: no limit */
    moat_call_load load;
    bool draining; /* new calls refused */
    /* Restoring calls after a restart (call_restore.c) */
    moat_call_journal_sink sink;  /* put NULL: calls are not journaled */
    int restore_idle_s;           /* a restored call without a packet this long ends */
    moat_call_journal *restoring; /* the journal the next new call takes (a restore) */
    guint srtp_timer;             /* SDES legs' stream positions journaled (call_restore.c) */
    bool replaying;               /* a restore's steps are running: nothing is put */
    uint64_t restored[MOAT_CALL_RESTORE_OUTCOMES];
    /* Calls whose media stopped (call_timeout.c) */
    int media_timeout_s;  /* [call] media_timeout_s; 0: off */
    int silent_timeout_s; /* [call] silent_timeout_s; 0: off */
    guint sweep_timer;
    unsigned sweep_interval_ms;
    uint64_t timed_out[MOAT_CALL_TIMEOUTS];
    moat_log_limiter timeout_log;
    uint64_t refused_load_limit;
    uint64_t refused_worker_load; /* of those: over max_load */
    /* Transcoding at answers (call_transcode_plan.h) */
    int max_transcoders; /* [call] max_transcoders: pipelines at once; 0: none */
    uint64_t transcode_refused[MOAT_CALL_TRANSCODE_REFUSALS];
};

typedef struct {
    moat_call_registry *registry;
    char *id;
    char *tags[2];
    moat_call_sdp sdp[2]; /* the last SDP each side sent */
    bool has_sdp[2];
    moat_call_stream *streams[MOAT_CALL_SDP_MAX_MEDIA];
    size_t n_streams;
    moat_call_worker *context;
    int64_t created_s;
    int offer_side; /* side of the last offer's sender */
    bool rtcp_mux_offered[MOAT_CALL_SDP_MAX_MEDIA];
    /* the last offer as received (a WebRTC offerer: Moat's answer to it),
     * whose codecs decide transcoding */
    char *offer_text;
    bool transcode_offered;                   /* an offer of the call carried codec-transcode */
    bool transcoded[MOAT_CALL_SDP_MAX_MEDIA]; /* the stream has a transcoder pair */
    moat_call_webrtc *webrtc[2];              /* a WebRTC party's session, else NULL */
    /* Moat's offer to a WebRTC party, until its answer (call_webrtc_offer.h) */
    moat_call_webrtc_offered *offered[2];
    guint delete_timer;
    moat_call_sdes sdes;        /* SDES-SRTP termination per leg (call_sdes.h) */
    moat_call_journal *journal; /* owned: what rebuilds the call (call_journal.h) */
    bool journaled;             /* its record is in the sink's store */
    /* The media timeout (call_timeout.c), monotonic microseconds: when the
     * call was made, last offered or answered, or a sweep last saw its legs'
     * packet count (media_packets) move; a restored call ends at
     * restore_deadline_us unless a packet came (0: none pending). */
    int64_t media_at_us;
    uint64_t media_packets;
    int64_t restore_deadline_us;
} moat_call;

/* call_timeout.c: the limits set and the sweep armed (registry_new); the
 * sweep started, moved to the shortest limit's pace, or stopped when no
 * limit is set (set_journal), and stopped for good (registry_free); a
 * call's clock restarted by its creation, an offer or an answer that
 * succeeded (rtpengine: signalling refills the streams). */
void moat_call_timeout_init(moat_call_registry *registry, int media_timeout_s,
                            int silent_timeout_s);
void moat_call_timeout_arm(moat_call_registry *registry);
void moat_call_timeout_stop(moat_call_registry *registry);
void moat_call_timeout_note_signal(moat_call *call);

/* How often the SDES legs' stream positions are looked at (call_restore.c). */
#define MOAT_CALL_SRTP_SNAPSHOT_S 2

/* call_restore.c, for call_registry.c: the journal a new call starts with
 * (a restore's, or a fresh one); the command that just succeeded on the
 * call, recorded and written to the store; the store's copy withdrawn (a
 * deleted or freed call). */
moat_call_journal *moat_call_restore_journal_for_new(moat_call_registry *registry);
/* The offer itself (call_registry.c); moat_call_offer (call_restore.c)
 * wraps it to forget the keys of an offer that failed. */
void moat_call_offer_run(moat_call_registry *registry, const moat_ng_request *request,
                         moat_call_reply *reply);
void moat_call_restore_note(moat_call *call, const moat_ng_request *request);
void moat_call_restore_withdraw(moat_call *call);

/* WebRTC parties (call_registry_webrtc.c); each false with the reply's
 * error. The party on `side` offered: its session answers (a running one
 * goes on when the offer keeps its ICE credentials and fingerprint). */
bool moat_call_start_webrtc(moat_call *call, int side, const moat_ng_request *request,
                            moat_call_reply *reply);
/* The party on `side` gets Moat's WebRTC offer (or, its session running,
 * the description it has with the offer's directions) as reply->sdp. */
bool moat_call_offer_webrtc_leg(moat_call *call, int side, const moat_ng_request *request,
                                const moat_call_sdp *sdp, moat_call_reply *reply);
/* The party on `side` answered Moat's offer: its session. */
bool moat_call_answer_webrtc_leg(moat_call *call, int side, const moat_ng_request *request,
                                 const moat_call_sdp *sdp, moat_call_reply *reply);
/* Whether the answer from `answerer` may be taken (see the function). */
bool moat_call_check_answer_media(moat_call *call, int answerer, const moat_ng_request *request,
                                  const moat_call_sdp *sdp, moat_call_reply *reply);

#endif
