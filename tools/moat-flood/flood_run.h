/* One run of moat-flood: set the sessions up, send legitimate media and the
 * attacks for --duration (or until every class reached --count), drain the
 * echoes, hang up. The result feeds every report. */
#ifndef FLOOD_RUN_H
#define FLOOD_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attack_kind.h"
#include "flood_options.h"
#include "flood_session.h"
#include "timeline.h"

typedef struct {
    const flood_options *options;
    flood_session *sessions; /* options->sessions of them */
    size_t n_sessions;
    size_t n_connected;         /* when the run started */
    size_t n_not_opened;        /* never POSTed: the setup deadline passed first */
    struct sockaddr_in6 target; /* where session-less classes went */
    bool has_target;
    uint64_t attack_sent[ATTACK_KIND_COUNT];
    uint64_t attack_errors;
    timeline timeline;
    double setup_s, run_s;
    bool interrupted; /* SIGINT or SIGTERM ended the run early */
    unsigned hangup_failures;
    char hangup_error[256];
} flood_result;

/* Runs with the options; stop_requested is polled (a signal handler sets
 * it). 0 with result filled; 1 when the run could not happen (message in
 * error); 2 when a target was refused or a class cannot run here. The result
 * is to be released with flood_result_clear in every case. */
int flood_run(const flood_options *options, volatile sig_atomic_t *stop_requested,
              flood_result *result, char *error, size_t error_size);
void flood_result_clear(flood_result *result);

#endif
