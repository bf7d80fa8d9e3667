/* This node's ng calls kept in Redis over a restart ([cluster] keep_calls,
 * cluster_calls.c). Control thread; owned by the cluster, which frees it
 * after its Redis link (whose unanswered commands still reach it). */
#ifndef MOAT_CLUSTER_CALLS_H
#define MOAT_CLUSTER_CALLS_H

#include <stdbool.h>
#include <stdint.h>

struct moat_cluster;
typedef struct moat_cluster_calls moat_cluster_calls;

/* NULL when the node relays no calls or keep_calls is off. Sets itself as
 * the call registry's journal sink. */
moat_cluster_calls *moat_cluster_calls_new(struct moat_cluster *cluster);
/* Unsets the sink; the records stay in Redis for the next start. */
void moat_cluster_calls_free(moat_cluster_calls *calls);
/* The Redis link came up: the first time the records are read back and
 * restored, then (and every later time) the hash is rewritten. */
void moat_cluster_calls_link_up(moat_cluster_calls *calls);
/* Record writes that failed or could not be sent (Redis away). */
uint64_t moat_cluster_calls_writes_failed(const moat_cluster_calls *calls);
/* Whether the records of before the start were read back. */
bool moat_cluster_calls_loaded(const moat_cluster_calls *calls);

#endif
