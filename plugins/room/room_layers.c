/* A subscriber's simulcast layer: keyframe-gated switching and the
 * bandwidth-driven choice (room_layers.h). */
#include "room_layers.h"

#include <string.h>

void room_layers_init(room_layer_state *s)
{
    memset(s, 0, sizeof *s);
    s->current = -1;
    s->target = -1;
    s->estimate_bps = ROOM_BWE_INITIAL_BPS;
}

void room_layers_set_target(room_layer_state *s, int layer, uint64_t now_us)
{
    if (layer == s->target)
        return;
    s->target = layer;
    s->drop_current = false;
    s->switched_us = now_us;
    if (layer >= 0 && layer != s->current) {
        s->keyframe_wanted = true;
        s->asked_us = now_us;
    }
}

room_layer_verdict room_layers_packet(room_layer_state *s, int layer, bool keyframe,
                                      bool keyframe_known, uint64_t now_us)
{
    if (layer < 0)
        return ROOM_LAYER_DROP;
    bool waiting = s->target >= 0 && s->target != s->current;
    if (waiting && layer == s->target) {
        bool blind = !keyframe_known && now_us - s->asked_us >= ROOM_LAYER_BLIND_SWITCH_US;
        if (keyframe || blind) {
            s->current = s->target;
            s->switched_us = now_us;
            s->drop_current = false;
            return ROOM_LAYER_SWITCHED;
        }
        if (now_us - s->asked_us >= ROOM_LAYER_REASK_US) {
            s->keyframe_wanted = true;
            s->asked_us = now_us;
        }
    }
    if (waiting && s->drop_current)
        return ROOM_LAYER_DROP;
    return layer == s->current ? ROOM_LAYER_FORWARD : ROOM_LAYER_DROP;
}

void room_layers_drop_current(room_layer_state *s)
{
    s->drop_current = s->current >= 0 && s->target >= 0 && s->target != s->current;
}

bool room_layers_is_step_down(const room_layer_state *s, int target, const uint32_t *bitrates,
                              size_t n)
{
    int current = s->current;
    if (s->pinned || target < 0 || current < 0 || (size_t)target >= n || (size_t)current >= n ||
        target == current)
        return false;
    return bitrates[target] > 0 && bitrates[target] < bitrates[current];
}

unsigned room_layers_mask(const room_layer_state *s)
{
    unsigned mask = 0;
    if (s->current >= 0)
        mask |= 1u << s->current;
    if (s->target >= 0)
        mask |= 1u << s->target;
    return mask;
}

static uint64_t clamp_estimate(double bps)
{
    if (bps < ROOM_BWE_MIN_BPS)
        return ROOM_BWE_MIN_BPS;
    if (bps > ROOM_BWE_MAX_BPS)
        return ROOM_BWE_MAX_BPS;
    return (uint64_t)bps;
}

void room_layers_on_remb(room_layer_state *s, uint64_t bitrate_bps, uint64_t now_us)
{
    s->remb_bps = clamp_estimate((double)bitrate_bps);
    s->remb_us = now_us ? now_us : 1;
}

/* Heavy loss cuts the estimate by half the loss; low loss lets it grow 5 %
 * per report. */
void room_layers_on_loss(room_layer_state *s, uint8_t fraction_lost, uint64_t now_us)
{
    double loss = fraction_lost / 256.0;
    double estimate = (double)s->estimate_bps;
    if (loss > 0.10)
        estimate *= 1.0 - loss / 2.0;
    else if (loss < 0.02)
        estimate *= 1.05;
    s->estimate_bps = clamp_estimate(estimate);
}

uint64_t room_layers_estimate(const room_layer_state *s, uint64_t now_us)
{
    bool recent = s->remb_us != 0 && now_us - s->remb_us < ROOM_BWE_REMB_AGE_US;
    return recent && s->remb_bps < s->estimate_bps ? s->remb_bps : s->estimate_bps;
}

/* Layers ordered by bitrate: the index of the k-th lowest sending layer. */
static size_t by_bitrate(const uint32_t *bitrates, size_t n, int *order)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (bitrates[i] == 0)
            continue;
        size_t at = k++;
        while (at > 0 && bitrates[order[at - 1]] > bitrates[i]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = (int)i;
    }
    return k;
}

int room_layers_choose(room_layer_state *s, const uint32_t *bitrates, size_t n, uint64_t now_us)
{
    if (s->pinned)
        return s->target;
    int order[ROOM_MAX_LAYERS];
    size_t k = by_bitrate(bitrates, n < ROOM_MAX_LAYERS ? n : ROOM_MAX_LAYERS, order);
    if (k == 0)
        return s->target;
    /* Growth on loss-free reports stops at twice the top layer. */
    uint64_t cap = 2ull * bitrates[order[k - 1]];
    if (cap < ROOM_BWE_INITIAL_BPS)
        cap = ROOM_BWE_INITIAL_BPS;
    if (s->estimate_bps > cap)
        s->estimate_bps = cap;
    /* The highest layer the estimate carries (the lowest one at least). */
    double estimate = (double)room_layers_estimate(s, now_us);
    size_t fit = 0;
    while (fit + 1 < k && estimate >= bitrates[order[fit + 1]])
        fit++;
    size_t at = k; /* the target's rank, k when it does not send */
    for (size_t r = 0; r < k; r++) {
        if (order[r] == s->target)
            at = r;
    }
    if (at == k)
        return order[fit]; /* nothing sensible held: take the fit now */
    if (fit > at) {
        bool margin = estimate >= bitrates[order[at + 1]] * ROOM_LAYER_UP_FACTOR;
        bool held = now_us - s->switched_us >= ROOM_LAYER_UP_HOLD_US;
        return margin && held ? order[at + 1] : s->target;
    }
    if (estimate < bitrates[order[at]] * ROOM_LAYER_DOWN_FACTOR && at > 0)
        return order[fit < at ? fit : at - 1];
    return s->target;
}
