/* Which lane (SCTP association) of a multi-lane tunnel carries an IP
 * packet: a hash of its flow's 5-tuple (addresses, protocol, ports) for TCP
 * and UDP over IPv4 and IPv6, the same both ways of a flow, so one flow's
 * packets stay in order on one association while different flows get
 * separate congestion windows. Fragments, IPv6 extension headers, other
 * protocols and anything too short to read go to lane 0. Pure. */
#ifndef TUNNEL_LANE_H
#define TUNNEL_LANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TUNNEL_MAX_LANES 8 /* the gateway's cap per peer (plugins/tunnel) */

/* The packet's flow key (the same both ways of a flow, well mixed in every
 * bit); false for what goes to lane 0. */
bool tunnel_flow_of(const uint8_t *packet, size_t length, uint32_t *key);

/* The lane by the key alone, 0 to lanes - 1 (0 when lanes is 0 or 1):
 * what tunnel_flows.h falls back to when its table is full. */
unsigned tunnel_lane_of(const uint8_t *packet, size_t length, unsigned lanes);

#endif
