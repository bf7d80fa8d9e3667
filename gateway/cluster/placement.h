/* Where a new room goes (pure; unit-tested): the less loaded of two random
 * live, serving nodes, those of the requesting node's region first, with
 * placements made in the last moments counted as load so that a burst of
 * new rooms spreads before the registry shows it. Control thread. */
#ifndef MOAT_CLUSTER_PLACEMENT_H
#define MOAT_CLUSTER_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *id;
    const char *region;
    bool serving; /* false: draining */
    uint32_t sessions;
    uint32_t max_sessions; /* 0: no limit */
    uint32_t recent;       /* rooms placed on it lately (placement_recent) */
} moat_placement_candidate;

/* Each room placed lately weighs like this many sessions. */
#define MOAT_PLACEMENT_RECENT_WEIGHT 4

/* The load a candidate is compared by: occupied fraction of its limit (or
 * sessions when it has none) with recent placements added. */
double moat_placement_load(const moat_placement_candidate *candidate);
/* The chosen candidate's index, or -1 when none is serving. `random_a` and
 * `random_b` are two random numbers (the caller's generator; tests pass
 * fixed ones). A full node (sessions >= max) is chosen only if all are. */
int moat_placement_choose(const moat_placement_candidate *candidates, size_t n, const char *region,
                          uint32_t random_a, uint32_t random_b);

/* Placements of the last window, per node id (a small ring). */
#define MOAT_PLACEMENT_RECENT_SLOTS 64
typedef struct {
    char node[MOAT_PLACEMENT_RECENT_SLOTS][128];
    uint64_t at_ms[MOAT_PLACEMENT_RECENT_SLOTS];
    size_t next;
    uint64_t window_ms;
} moat_placement_recent;

void moat_placement_recent_init(moat_placement_recent *recent, uint64_t window_ms);
void moat_placement_recent_add(moat_placement_recent *recent, const char *node, uint64_t now_ms);
uint32_t moat_placement_recent_count(const moat_placement_recent *recent, const char *node,
                                     uint64_t now_ms);

#endif
