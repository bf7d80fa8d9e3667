/* Temporal layers toward a subscriber: the choice, the per-packet filter
 * and the gap-free renumbering (room_temporal.h). */
#include "room_temporal.h"

#include <string.h>

static bool newer(const room_gap_map *m, uint16_t a, uint16_t b)
{
    uint16_t diff = (uint16_t)((a - b) & m->mask);
    return diff != 0 && diff <= m->mask / 2;
}

void room_gap_init(room_gap_map *m, uint16_t mask)
{
    memset(m, 0, sizeof *m);
    m->mask = mask;
}

void room_gap_drop(room_gap_map *m, uint16_t input)
{
    input &= m->mask;
    if (m->started && !newer(m, input, m->newest))
        return; /* late (or a second packet of a dropped picture) */
    m->started = true;
    m->newest = input;
    if (m->n_drops == ROOM_GAP_DROPS) {
        m->forgot = true;
        m->forgotten = m->drops[m->next_drop];
    } else {
        m->n_drops++;
    }
    m->drops[m->next_drop] = input;
    m->next_drop = (m->next_drop + 1) % ROOM_GAP_DROPS;
    m->removed++;
}

bool room_gap_forward(room_gap_map *m, uint16_t input, uint16_t *out)
{
    input &= m->mask;
    if (!m->started || newer(m, input, m->newest)) {
        m->started = true;
        m->newest = input;
        *out = (uint16_t)((input - m->removed) & m->mask);
        return true;
    }
    if (m->forgot && !newer(m, input, m->forgotten))
        return false;
    uint16_t after = 0;
    for (size_t i = 0; i < m->n_drops; i++) {
        if (m->drops[i] == input)
            return false; /* its number went to the packet after it */
        if (newer(m, m->drops[i], input))
            after++;
    }
    *out = (uint16_t)((input - m->removed + after) & m->mask);
    return true;
}

void room_temporal_init(room_temporal_state *t)
{
    t->target = ROOM_TEMPORAL_ALL;
    t->current = ROOM_TEMPORAL_ALL;
}

bool room_temporal_packet(room_temporal_state *t, const moat_video_descriptor *d, bool keyframe)
{
    if (!d->has_tid)
        return true;
    int tid = d->tid < ROOM_TEMPORAL_ALL ? d->tid : ROOM_TEMPORAL_ALL;
    if (d->begins_frame) {
        if (t->target < t->current)
            t->current = t->target;
        else if (t->target > t->current && keyframe)
            t->current = t->target; /* nothing before a keyframe is referenced */
        else if (t->target > t->current && tid == t->current + 1 && d->layer_sync)
            t->current = tid; /* one layer at a time: each sync depends on TL0 only */
    }
    return tid <= t->current;
}

int room_temporal_choose(uint64_t estimate_bps, const uint32_t bps[ROOM_TEMPORAL_LAYERS],
                         int target)
{
    int top = 0;
    uint64_t cumulative[ROOM_TEMPORAL_LAYERS], sum = 0;
    for (int t = 0; t < ROOM_TEMPORAL_LAYERS; t++) {
        sum += bps[t];
        cumulative[t] = sum;
        if (bps[t] > 0)
            top = t;
    }
    if (top == 0)
        return ROOM_TEMPORAL_ALL; /* no temporal layers to drop */
    for (int t = top; t > 0; t--) {
        double factor = t <= target ? ROOM_TEMPORAL_DOWN_FACTOR : ROOM_TEMPORAL_UP_FACTOR;
        if ((double)estimate_bps >= (double)cumulative[t] * factor)
            return t == top ? ROOM_TEMPORAL_ALL : t;
    }
    return 0;
}
