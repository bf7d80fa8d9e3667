/* The attack thread: one token bucket per class (with the ramp), batches
 * built by the class's generator and sent with sendmmsg, until the deadline,
 * every class's --count, or stop. Counts only what the kernel accepted. */
#ifndef ATTACK_RUNNER_H
#define ATTACK_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attack_generator.h"

typedef struct {
    bool enabled[ATTACK_KIND_COUNT];
    double rate[ATTACK_KIND_COUNT]; /* pps at the start */
    double ramp_s;                  /* 0: constant rates */
    double ramp_step;               /* pps added to each class per ramp step */
    uint64_t count;                 /* per class; 0: no limit */
    unsigned batch;                 /* 1..ATTACK_BATCH_MAX */
    uint64_t start_us, end_us;
} attack_plan;

typedef struct attack_runner attack_runner;

/* Creates every enabled class's generator (a class that cannot run fails
 * the whole start, with its reason) and starts the thread. */
attack_runner *attack_runner_start(const attack_plan *plan, const attack_environment *env,
                                   char *error, size_t error_size);

/* Packets the kernel accepted so far, per class. Any thread. */
void attack_runner_totals(const attack_runner *r, uint64_t out[ATTACK_KIND_COUNT]);
/* sendmmsg failures other than a full socket buffer, all classes. */
uint64_t attack_runner_errors(const attack_runner *r);
/* The rate every unfinished class targets at now_us, summed. */
double attack_runner_target_pps(const attack_runner *r, uint64_t now_us);
/* The rate the plan gives a class at now_us. */
double attack_plan_rate(const attack_plan *plan, attack_kind kind, uint64_t now_us);
/* Every class has sent its --count. */
bool attack_runner_finished(const attack_runner *r);

/* Stops and joins the thread; totals stay readable. Then free. */
void attack_runner_stop(attack_runner *r);
void attack_runner_free(attack_runner *r);

#endif
