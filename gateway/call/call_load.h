/* The workers' CPU load for [ng] max_load: each worker thread's CPU time
 * over a window of at least MOAT_CALL_LOAD_WINDOW_NS, as a percentage of
 * one core, averaged over the workers (the node's media capacity in use).
 * Sampled when asked (a new call's offer), never on a timer. Control
 * thread; the sampler borrows the workers. */
#ifndef MOAT_CALL_LOAD_H
#define MOAT_CALL_LOAD_H

#include "engine/worker.h"

#include <stdint.h>

#define MOAT_CALL_LOAD_WINDOW_NS (500ull * 1000000ull)

typedef struct {
    moat_worker *const *workers;
    unsigned n_workers;
    uint64_t *cpu_ns; /* at the last sample (owned) */
    uint64_t wall_ns; /* monotonic time of the last sample; 0: none yet */
    unsigned percent; /* the last sample's load */
} moat_call_load;

void moat_call_load_init(moat_call_load *load, moat_worker *const *workers, unsigned n_workers);
void moat_call_load_clear(moat_call_load *load);
/* The load at `now_ns` (monotonic): a new sample once the window since the
 * last one has passed, else the last one's load (0 before the first). */
unsigned moat_call_load_sample(moat_call_load *load, uint64_t now_ns);

/* Pure: the average over `n` workers of each one's CPU time between the
 * samples (`before`, `after`, ns) as a percentage of `wall_ns`, each worker
 * counted at most 100; 0 when `n` or `wall_ns` is 0. */
unsigned moat_call_load_percent(const uint64_t *before, const uint64_t *after, unsigned n,
                                uint64_t wall_ns);

#endif
