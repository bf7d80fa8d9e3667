/* MOAT_BENCH_QUICK=1 (`make bench-quick`, part of `make test`): every
 * benchmark runs for a few seconds on its full code path (setup, a short
 * measurement, its report and last line) so that a broken benchmark fails
 * the tests. A quick run's figures mean nothing, and nothing judges them;
 * a run that measured nothing (nothing carried, a baseline missing) fails,
 * quick or not. */
#ifndef MOAT_BENCH_QUICK_H
#define MOAT_BENCH_QUICK_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static inline bool bench_quick(void)
{
    const char *v = getenv("MOAT_BENCH_QUICK");
    return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

/* `full`, or `quick` in a quick run. */
#define BENCH_SCALE(full, quick) (bench_quick() ? (quick) : (full))

#endif
