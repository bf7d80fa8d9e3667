/* A subscriber's layer choice driven by the gateway's sender-side estimate
 * (transport-cc feedback, moat_gateway_calls.send_estimate) instead of
 * receiver reports, and probes before moving up: when a higher layer would
 * not fit the estimate, the path is probed with the gateway's padding at
 * that layer's rate for ROOM_BWE_PROBE_US; the estimate rises only when the
 * path carried it (then room_layers_choose moves up), a failed probe (loss,
 * rising delay) backs the next one off. [room] send_side_bwe switches it
 * off (receiver reports and REMB decide, as for peers without transport-cc).
 * The subscriber's worker only; the atomics are read by the API. */
#ifndef MOAT_ROOM_BWE_H
#define MOAT_ROOM_BWE_H

#include "room_layers.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROOM_BWE_PROBE_US       300000u  /* a probe's window */
#define ROOM_BWE_PROBE_FACTOR   1.25     /* probe at the next layer's bitrate x this ... */
#define ROOM_BWE_PROBE_EXTRA    50000u   /* ... plus this (audio, headers), bits/s */
#define ROOM_BWE_BACKOFF_US     1500000u /* between probes, doubled on failure ... */
#define ROOM_BWE_MAX_BACKOFF_US 3000000u /* ... up to this */

typedef struct {
    bool active;            /* the gateway's estimate drives the choice */
    uint64_t next_probe_us; /* the earliest next probe */
    uint64_t backoff_us;
    uint64_t confirmed, failed; /* the gateway's probe counts as last seen */
    /* for the API */
    atomic_uint_fast64_t estimate_bps, acked_bps, probes, probes_confirmed, probes_failed,
        padding_packets, feedbacks, loss_permille, usage;
    atomic_bool on;
} room_bwe;

/* The total rate to probe at before moving from the current layer to the
 * next higher one sending, 0 when there is none or the estimate already
 * carries it (or a switch is under way, or the choice is pinned). Pure. */
uint64_t room_bwe_probe_target(const room_layer_state *s, const uint32_t *bitrates, size_t n,
                               uint64_t estimate_bps);

#endif
