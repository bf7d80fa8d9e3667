/* Live per-transport statistics for the dashboard and /metrics. Twice a
 * second the control thread asks each worker to describe itself (on the
 * worker's own thread, so no session state is read from elsewhere); the
 * answers come back to the control thread, which keeps the latest one per
 * worker. Readers get data at most half a second old and never wait. */
#ifndef MOAT_STATS_SNAPSHOT_H
#define MOAT_STATS_SNAPSHOT_H

#include "session/gateway_state.h"

#include <glib.h>

typedef struct moat_stats_snapshot moat_stats_snapshot;

moat_stats_snapshot *moat_stats_snapshot_start(moat_gateway *gateway);
void moat_stats_snapshot_stop(moat_stats_snapshot *snapshot);
/* {"time": s, "workers": [...], "transports": [...]} as text (g_free). Each
 * transport is named by its session's public label ("id"); the WHIP resource
 * id ("resource") only when `reveal_resources`. Transports whose session has
 * already left the registry are omitted. */
char *moat_stats_snapshot_json(moat_stats_snapshot *snapshot, bool reveal_resources);
/* Appends per-transport Prometheus series (bounded count) to `out`, labelled
 * transport="<public label>", never with the resource id. */
void moat_stats_snapshot_prometheus(moat_stats_snapshot *snapshot, GString *out);

#endif
