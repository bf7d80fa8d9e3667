/* Owns room placement's choice (placement.h). */
#include "cluster/placement.h"

#include <stdio.h>
#include <string.h>

double moat_placement_load(const moat_placement_candidate *candidate)
{
    double occupied =
        (double)candidate->sessions + (double)candidate->recent * MOAT_PLACEMENT_RECENT_WEIGHT;
    if (candidate->max_sessions == 0)
        return occupied / 1000000.0; /* no limit: compare absolute counts */
    return occupied / (double)candidate->max_sessions;
}

static bool full(const moat_placement_candidate *candidate)
{
    return candidate->max_sessions && candidate->sessions >= candidate->max_sessions;
}

static bool same_region(const moat_placement_candidate *candidate, const char *region)
{
    const char *theirs = candidate->region ? candidate->region : "";
    return strcmp(theirs, region ? region : "") == 0;
}

/* Indices of the pool: serving, not full (unless `allow_full`), and in the
 * region when `region_only`. */
static size_t pool(const moat_placement_candidate *candidates, size_t n, const char *region,
                   bool region_only, bool allow_full, size_t *out)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (!candidates[i].serving || (!allow_full && full(&candidates[i])) ||
            (region_only && !same_region(&candidates[i], region)))
            continue;
        out[count++] = i;
    }
    return count;
}

int moat_placement_choose(const moat_placement_candidate *candidates, size_t n, const char *region,
                          uint32_t random_a, uint32_t random_b)
{
    if (n == 0)
        return -1;
    size_t indices[n];
    size_t count = pool(candidates, n, region, true, false, indices);
    if (count == 0)
        count = pool(candidates, n, region, false, false, indices);
    if (count == 0)
        count = pool(candidates, n, region, false, true, indices);
    if (count == 0)
        return -1;
    if (count == 1)
        return (int)indices[0];
    size_t a = random_a % count;
    size_t b = random_b % (count - 1);
    if (b >= a)
        b++; /* two distinct candidates */
    size_t first = indices[a], second = indices[b];
    double load_a = moat_placement_load(&candidates[first]);
    double load_b = moat_placement_load(&candidates[second]);
    return (int)(load_b < load_a ? second : first);
}

void moat_placement_recent_init(moat_placement_recent *recent, uint64_t window_ms)
{
    memset(recent, 0, sizeof *recent);
    recent->window_ms = window_ms;
}

void moat_placement_recent_add(moat_placement_recent *recent, const char *node, uint64_t now_ms)
{
    size_t slot = recent->next % MOAT_PLACEMENT_RECENT_SLOTS;
    snprintf(recent->node[slot], sizeof recent->node[slot], "%s", node);
    recent->at_ms[slot] = now_ms ? now_ms : 1;
    recent->next = slot + 1;
}

uint32_t moat_placement_recent_count(const moat_placement_recent *recent, const char *node,
                                     uint64_t now_ms)
{
    uint32_t count = 0;
    for (size_t i = 0; i < MOAT_PLACEMENT_RECENT_SLOTS; i++) {
        if (recent->at_ms[i] && now_ms - recent->at_ms[i] < recent->window_ms &&
            strcmp(recent->node[i], node) == 0)
            count++;
    }
    return count;
}
