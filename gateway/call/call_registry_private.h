/* The registry's and a call's state, shared by call_registry.c and
 * call_registry_metrics.c (call/ only). Control thread. */
#ifndef MOAT_CALL_REGISTRY_PRIVATE_H
#define MOAT_CALL_REGISTRY_PRIVATE_H

#include "call/call_registry.h"
#include "call/call_load.h"
#include "call/call_sdes.h"
#include "call/call_webrtc_offer.h"

struct moat_call_registry {
    GHashTable *calls; /* call-id -> moat_call (owned) */
    moat_call_ports *ports;
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
    uint64_t refused_load_limit;
    uint64_t refused_worker_load; /* of those: over max_load */
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
    moat_call_webrtc *webrtc[2]; /* a WebRTC party's session, else NULL */
    /* Moat's offer to a WebRTC party, until its answer (call_webrtc_offer.h) */
    moat_call_webrtc_offered *offered[2];
    guint delete_timer;
    moat_call_sdes sdes; /* SDES-SRTP termination per leg (call_sdes.h) */
} moat_call;

#endif
