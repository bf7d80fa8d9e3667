/* GET /healthz: whether what the configuration asks for works now. 200 with
 * {"status": "ok", ...} when it does; 503 with {"status": "unhealthy",
 * "error": "unhealthy", "detail": <the first problem>, "problems": [...],
 * ...} when something is broken: a media worker whose loop has not gone
 * round for a second (stuck or gone), or [record] dir set and not
 * writable. The kernel filter's state and TLS are reported, not judged
 * (the filter in auto mode may be off; [prefilter] kernel = on refuses to
 * start without it), and so is the cluster's Redis link when [cluster]
 * is configured: a node whose Redis is away keeps serving its rooms and
 * calls (README, Cluster), so a load balancer must not take it out for
 * that. Unauthenticated: it names no path, no session and no
 * address. Cost: one atomic read per worker and, when [record] dir is
 * set, a stat and an access(2); a file created and removed in the folder
 * at most once per MOAT_RECORD_DIR_PROBE_INTERVAL_US (5 s), whatever the
 * request rate; a folder deleted since the start is not created again
 * (record_dir.h: it counts as writable while its parent is).
 *
 * Control thread. */
#ifndef MOAT_HTTP_HEALTH_H
#define MOAT_HTTP_HEALTH_H

#include "http/http_message.h"
#include "session/gateway_state.h"

/* A worker whose loop has not gone round for this long is unhealthy. */
#define MOAT_HEALTH_WORKER_STALL_US 1000000u

void moat_http_health(moat_gateway *gateway, moat_http_response *response);

#endif
