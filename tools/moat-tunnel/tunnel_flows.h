/* moat-tunnel's lane for each flow it sends: a new TCP or UDP flow goes to
 * the lane carrying the fewest live flows and keeps that lane while it
 * lives (idle TUNNEL_FLOW_IDLE_S: forgotten), so K flows use min(K, lanes)
 * lanes; a hash alone leaves lanes empty while others carry two or three
 * flows (ten flows over eight lanes: about two empty). Each side assigns
 * the flows it sends, so the two directions of one flow may take different
 * lanes; each direction keeps its order. What is no flow (tunnel_lane.h)
 * goes to lane 0; when the table has no room near a new flow's slot, the
 * flow's lane is its key's (tunnel_lane_of). Single thread: the tool's
 * loop owns the table. */
#ifndef TUNNEL_FLOWS_H
#define TUNNEL_FLOWS_H

#include "tunnel_lane.h"

#include <stddef.h>
#include <stdint.h>

#define TUNNEL_FLOW_SLOTS  4096
#define TUNNEL_FLOW_PROBES 16
#define TUNNEL_FLOW_IDLE_S 30.0

typedef struct {
    uint32_t key; /* a flow key; TUNNEL_FLOW_EMPTY or TUNNEL_FLOW_GONE */
    uint8_t lane;
    double last_s;
} tunnel_flow_slot;

typedef struct {
    tunnel_flow_slot slots[TUNNEL_FLOW_SLOTS];
    unsigned live[TUNNEL_MAX_LANES]; /* flows each lane carries */
    double swept_s;
} tunnel_flows;

/* Empty, at `now_s`. */
void tunnel_flows_init(tunnel_flows *flows, double now_s);

/* The lane of `packet`, 0 to lanes - 1 (lanes at most TUNNEL_MAX_LANES). */
unsigned tunnel_flows_lane(tunnel_flows *flows, const uint8_t *packet, size_t length,
                           unsigned lanes, double now_s);

#endif
