/* The reports of a finished run: the human summary, --json, --csv and
 * --plot. Each returns 0, or -1 with a message (files that cannot be
 * written). */
#ifndef FLOOD_REPORTS_H
#define FLOOD_REPORTS_H

#include <stddef.h>
#include <stdio.h>

#include "flood_run.h"

void report_summary(FILE *out, const flood_result *r);
int report_json(FILE *out, const flood_result *r, char *error, size_t error_size);
int report_csv(const char *path, const flood_result *r, char *error, size_t error_size);
int report_plot(const char *path, const flood_result *r, char *error, size_t error_size);

/* Totals over every session: packets sent and echoed, mean RTT (negative
 * when none came back). */
typedef struct {
    uint64_t sent, received;
    double loss;
    double rtt_mean_ms;
    double jitter_ms;           /* mean over sessions that received echoes */
    uint64_t reception_reports; /* report blocks on the echoes, in our SRs */
} flood_legit_totals;
void flood_legit_totals_get(const flood_result *r, flood_legit_totals *out);

#endif
