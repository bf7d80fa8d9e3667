/* Prometheus lines of the transcoders (metrics.c style). Control thread. */
#ifndef MOAT_TRANSCODE_METRICS_H
#define MOAT_TRANSCODE_METRICS_H

#include <glib.h>

void moat_transcode_metrics(GString *out);

#endif
