/* A Moat node's membership of a cluster ([cluster], README.md here): the
 * node registry in Redis, room ownership leases, placement of new rooms,
 * draining, and WHIP/WHEP offers for a room owned elsewhere redirected (307)
 * or forwarded (proxy) to its owner. Started by the app only when [cluster]
 * redis is set; Redis trouble never stops local media: offers are then
 * served here. Control thread only; the cluster holds the gateway's pointer
 * and registers its HTTP routes, offer hook and metrics hook. */
#ifndef MOAT_CLUSTER_H
#define MOAT_CLUSTER_H

#include "session/gateway_state.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct moat_cluster moat_cluster;

/* The [cluster] settings moat_cluster_start would refuse (the node id, the
 * Redis address, advertise_http), checked without connecting: 0, or -1 with
 * one line in `error`. --check-config runs it; so does the start. */
int moat_cluster_check_config(const moat_config *config, char *error, size_t error_size);

/* Connects to Redis (asynchronously: a node starts even with Redis down)
 * and registers the routes and hooks. NULL with `error` on bad settings. */
moat_cluster *moat_cluster_start(moat_gateway *gateway, char *error, size_t error_size);
/* Answers offers still waiting for Redis or an owner (503) and frees. */
void moat_cluster_free(moat_cluster *cluster);

/* Out of (or back into) placement; this node's rooms keep being served.
 * False, nothing changed, when asked back into placement while a SIGTERM
 * drain is under way (the node quits at its deadline: it takes no room). */
bool moat_cluster_set_draining(moat_cluster *cluster, bool draining);
/* SIGTERM: drain, then quit `loop` once no session is left or after
 * [cluster] drain_timeout_s. A second call quits at once. */
void moat_cluster_drain_and_quit(moat_cluster *cluster, GMainLoop *loop);

#endif
