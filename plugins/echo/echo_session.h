/* Per-session state of the echo plugin: what it needs of each negotiated
 * m-line (its kind, whether the peer receives on it, our SSRC on it: not a
 * copy of moat_media_info, 1.7 KB a line), what has been learned about the
 * peer's streams, and counters. Allocated in
 * attach, freed in detach; media callbacks run on one worker, so only the
 * counters (also read by handle_message on the control thread) are atomic. */
#ifndef MOAT_ECHO_SESSION_H
#define MOAT_ECHO_SESSION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugin.h"

/* At most one keyframe request per stream in this interval. */
#define MOAT_ECHO_PLI_INTERVAL_US 500000u

/* The peer's stream on one m-line. Only one SSRC per m-line is echoed (the
 * declared one, else the first seen with payload), because the gateway
 * announced a single local SSRC for it: echoing a second stream (RTX,
 * simulcast layers) onto it would interleave two sequence spaces. */
typedef struct {
    /* From the m-line at attach. */
    moat_media_kind kind;
    bool peer_receives;
    uint32_t local_ssrc;
    /* Learned. */
    bool primary_known;
    uint32_t primary_ssrc;
    bool seen;
    bool pli_sent;
    uint64_t last_pli_us;
} moat_echo_stream;

typedef struct {
    moat_plugin_session *handle;
    const moat_gateway_calls *gateway;
    bool hung_up;
    atomic_uint_fast64_t echoed_rtp;
    atomic_uint_fast64_t echoed_data;
    size_t n_media;
    moat_echo_stream streams[]; /* n_media, allocated with the session */
} moat_echo_session;

#endif
