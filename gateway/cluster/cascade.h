/* Rooms that span nodes (README.md here, "Cascades"): a WHEP subscriber
 * served by a node that does not own the room. That edge opens one cascade
 * link per room to the owner: an HTTP request to the owner's
 * /api/cluster/cascade (authenticated with the cluster's forward token)
 * carries the SRTP master keys of both directions, and each side runs one
 * ordinary session of the room plugin as a cascade leg
 * (session/session_cascade.h): on the owner a subscriber of the room whose
 * media goes to the edge, on the edge a publisher into the edge's own copy
 * of the room that its local subscribers watch. SRTP with SRTP+ prn tags,
 * consent kept by the legs' RTCP reports. The link opens with the first
 * edge subscriber and closes after the last; when the owner dies the edge's
 * leg loses consent and its subscribers are ended; when the edge dies the
 * owner's leg does. Control thread; cluster/ only. */
#ifndef MOAT_CASCADE_H
#define MOAT_CASCADE_H

#include "cluster/cluster_private.h"

typedef struct moat_cascade moat_cascade;

/* Registers the routes (before the first request). */
moat_cascade *moat_cascade_new(moat_cluster *cluster);
/* Ends the links (after the cluster's forwarder was freed). */
void moat_cascade_free(moat_cascade *cascade);

/* Serves `offer` (a WHEP offer, pending) here as an edge of the room owned
 * by `owner`, opening the link when there is none; answers it. */
void moat_cascade_edge_offer(moat_cascade *cascade, pending_offer *offer,
                             const moat_cluster_node *owner);
/* The /metrics lines. */
void moat_cascade_metrics(moat_cascade *cascade, GString *out);

#endif
