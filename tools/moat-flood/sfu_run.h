/* A fan-out run of moat-flood (--subscribers): the publisher connects,
 * then every subscriber (WHEP, or the Janus videoroom), then the publisher
 * sends paced media for --duration while the subscribers count what
 * arrives; a drain, then everyone hangs up. */
#ifndef SFU_RUN_H
#define SFU_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flood_options.h"
#include "flood_session.h"

typedef struct {
    const flood_options *options;
    flood_session publisher;
    flood_session *subscribers;
    size_t n_subscribers;
    size_t n_connected; /* subscribers connected when the media started */
    double setup_s, run_s;
    uint64_t published; /* RTP packets the publisher sent */
    bool interrupted;
    unsigned hangup_failures;
    char first_failure[256]; /* the first subscriber's failure, if any */
} sfu_result;

/* One subscriber's loss: the larger of its sequence gaps and its shortfall
 * against what the publisher sent, as a fraction of that; 1 when it never
 * connected. */
double sfu_subscriber_loss(const sfu_result *r, const flood_session *s);

/* 0 with result filled; 1 when the run could not happen (message in error);
 * 2 when a target was refused. Release the result with sfu_result_clear. */
int sfu_run(const flood_options *options, volatile sig_atomic_t *stop_requested, sfu_result *result,
            char *error, size_t error_size);
void sfu_result_clear(sfu_result *result);

/* sfu_report.c: the human summary, the JSON summary (stdout), the progress line. */
void sfu_report_summary(FILE *out, const sfu_result *r);
int sfu_report_json(FILE *out, const sfu_result *r);
void sfu_report_progress(FILE *out, const sfu_result *r, double elapsed_s, uint64_t published,
                         uint64_t received, double length_s);

#endif
