/* The live line on stderr: per interval, attack packets/s per class, and the
 * legitimate sessions' loss and RTT. Rewritten in place on a terminal, one
 * line per interval otherwise. */
#ifndef REPORT_PROGRESS_H
#define REPORT_PROGRESS_H

#include <stdio.h>

#include "flood_run.h"

void report_progress(FILE *out, const flood_result *r, const timeline_interval *interval);
/* Ends a line left open on a terminal. */
void report_progress_finish(FILE *out);

#endif
