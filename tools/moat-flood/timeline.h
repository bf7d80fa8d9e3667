/* The run as a time series, one row per --interval: legitimate packets sent
 * in the interval and how many of those came back (echoes are filed by
 * their send time, so late echoes still count for their interval), RTT,
 * jitter, and the attack packets sent with the rate that was targeted.
 * Main thread only. */
#ifndef TIMELINE_H
#define TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attack_kind.h"

typedef struct {
    double start_s, length_s; /* from the start of the run */
    bool closed;
    uint64_t legit_sent, legit_received;
    double rtt_sum_ms;
    uint64_t rtt_samples;
    double jitter_ms; /* mean over sessions when the interval closed */
    double target_attack_pps;
    uint64_t attack_sent[ATTACK_KIND_COUNT];
} timeline_interval;

typedef struct {
    uint64_t start_us, interval_us;
    timeline_interval *intervals;
    size_t n_intervals, capacity;
    uint64_t attack_totals[ATTACK_KIND_COUNT]; /* at the last close */
} timeline;

void timeline_init(timeline *t, uint64_t start_us, double interval_s);
void timeline_free(timeline *t);

void timeline_on_sent(timeline *t, uint64_t send_us);
void timeline_on_echo(timeline *t, uint64_t send_us, double rtt_ms);

/* The interval now_us falls in, or SIZE_MAX before the start. */
size_t timeline_index(const timeline *t, uint64_t now_us);
/* Closes every interval that ended before now_us (or all, up to now_us,
 * when final): attack packets since the last close go to the interval being
 * closed. Returns how many were closed. */
size_t timeline_close(timeline *t, uint64_t now_us, bool final,
                      const uint64_t attack_totals[ATTACK_KIND_COUNT], double target_attack_pps,
                      double jitter_ms);

double timeline_interval_loss(const timeline_interval *i);       /* fraction, negative: none sent */
double timeline_interval_rtt_ms(const timeline_interval *i);     /* negative: no echo */
double timeline_interval_attack_pps(const timeline_interval *i); /* all classes */

#endif
