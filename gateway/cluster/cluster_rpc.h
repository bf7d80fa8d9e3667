/* Node-to-node requests and room events over Redis pub/sub
 * (cluster_message.h is the format): this node SUBSCRIBEs, on a second
 * Redis connection, to its own channel moat:rpc:<id> and to moat:events;
 * a request goes out with PUBLISH on the main link and its reply comes
 * back on the requester's channel, matched by a random id, or Moat's own
 * timeout answers (504). Requests from other nodes are answered by this
 * node's plugin API (never forwarded again); room events published here
 * are relayed to the other nodes, whose /api/events listeners get them.
 * Every message refused is counted by reason. Control thread only; owned
 * by the cluster (cluster_private.h). */
#ifndef MOAT_CLUSTER_RPC_H
#define MOAT_CLUSTER_RPC_H

#include "cluster/cluster_message.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct moat_cluster moat_cluster;
typedef struct moat_cluster_rpc moat_cluster_rpc;

/* A request's outcome: the other node's status and body, or Moat's own
 * (504 timeout, 502 not listening, 503 closing) with `local` true. Called
 * exactly once; `body` is valid only during the call. */
typedef void (*moat_cluster_rpc_done_fn)(void *user, unsigned status, const char *body,
                                         size_t length, bool local);

/* Connects the subscriber link (asynchronously) and sets the events tap. */
moat_cluster_rpc *moat_cluster_rpc_new(moat_cluster *cluster, unsigned timeout_ms, char *error,
                                       size_t error_size);
/* Answers requests in flight (503) and frees. */
void moat_cluster_rpc_free(moat_cluster_rpc *rpc);

/* Sends a request to node `node_id`; `done` is always called (at once
 * with 503 when Redis is down). */
void moat_cluster_rpc_request(moat_cluster_rpc *rpc, const char *node_id, const char *method,
                              const char *path, const char *body, size_t body_length,
                              moat_cluster_rpc_done_fn done, void *user);
/* Whether this node's subscriber link is up (requests can be answered). */
bool moat_cluster_rpc_up(const moat_cluster_rpc *rpc);
void moat_cluster_rpc_metrics(const moat_cluster_rpc *rpc, GString *out);
uint64_t moat_cluster_rpc_dropped(const moat_cluster_rpc *rpc, moat_cluster_drop_reason reason);

#endif
