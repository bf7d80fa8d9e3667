/* /metrics in the Prometheus text format, summed over the workers at the
 * moment of the scrape. Every drop reason has a series from start. */
#ifndef MOAT_METRICS_H
#define MOAT_METRICS_H

#include "session/gateway_state.h"

#include <glib.h>

/* Returns the exposition text (g_free it). */
char *moat_metrics_render(moat_gateway *gateway);

#endif
