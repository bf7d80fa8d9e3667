/* The run as a time series, one row per --interval: legitimate packets sent
 * and echoed (filed by send time), RTT, jitter and attack packets against the
 * targeted rate (main thread only). */
#include "timeline.h"

#include <glib.h>
#include <string.h>

void timeline_init(timeline *t, uint64_t start_us, double interval_s)
{
    memset(t, 0, sizeof *t);
    t->start_us = start_us;
    t->interval_us = (uint64_t)(interval_s * 1e6);
    if (t->interval_us == 0)
        t->interval_us = 1;
}

void timeline_free(timeline *t)
{
    g_free(t->intervals);
    t->intervals = NULL;
    t->n_intervals = t->capacity = 0;
}

size_t timeline_index(const timeline *t, uint64_t now_us)
{
    if (now_us < t->start_us)
        return SIZE_MAX;
    return (size_t)((now_us - t->start_us) / t->interval_us);
}

/* The interval with this index, creating it and those before it. */
static timeline_interval *at(timeline *t, size_t index)
{
    if (index >= t->capacity) {
        size_t capacity = t->capacity ? t->capacity : 64;
        while (capacity <= index)
            capacity *= 2;
        t->intervals = g_renew(timeline_interval, t->intervals, capacity);
        t->capacity = capacity;
    }
    while (t->n_intervals <= index) {
        timeline_interval *fresh = &t->intervals[t->n_intervals];
        memset(fresh, 0, sizeof *fresh);
        fresh->start_s = (double)(t->n_intervals * t->interval_us) / 1e6;
        fresh->length_s = (double)t->interval_us / 1e6;
        t->n_intervals++;
    }
    return &t->intervals[index];
}

void timeline_on_sent(timeline *t, uint64_t send_us)
{
    size_t index = timeline_index(t, send_us);
    if (index != SIZE_MAX)
        at(t, index)->legit_sent++;
}

void timeline_on_echo(timeline *t, uint64_t send_us, double rtt_ms)
{
    size_t index = timeline_index(t, send_us);
    if (index == SIZE_MAX)
        return;
    timeline_interval *i = at(t, index);
    i->legit_received++;
    i->rtt_sum_ms += rtt_ms;
    i->rtt_samples++;
}

size_t timeline_close(timeline *t, uint64_t now_us, bool final,
                      const uint64_t attack_totals[ATTACK_KIND_COUNT], double target_attack_pps,
                      double jitter_ms)
{
    size_t current = timeline_index(t, now_us);
    if (current == SIZE_MAX)
        return 0;
    /* Intervals that ended; with final, also the one running now when it
     * has begun. */
    size_t end = current;
    uint64_t current_start = t->start_us + (uint64_t)current * t->interval_us;
    if (final && now_us > current_start)
        end = current + 1;
    if (end == 0)
        return 0;
    at(t, end - 1); /* grow once, so pointers below stay valid */
    timeline_interval *last = NULL;
    size_t closed = 0;
    for (size_t index = 0; index < end; index++) {
        timeline_interval *i = at(t, index);
        if (i->closed)
            continue;
        i->closed = true;
        i->target_attack_pps = target_attack_pps;
        i->jitter_ms = jitter_ms;
        if (index == current)
            i->length_s = (double)(now_us - current_start) / 1e6;
        last = i;
        closed++;
    }
    if (last != NULL) {
        for (int k = 0; k < ATTACK_KIND_COUNT; k++) {
            last->attack_sent[k] = attack_totals[k] - t->attack_totals[k];
            t->attack_totals[k] = attack_totals[k];
        }
    }
    return closed;
}

double timeline_interval_loss(const timeline_interval *i)
{
    if (i->legit_sent == 0)
        return -1.0;
    if (i->legit_received >= i->legit_sent)
        return 0.0;
    return (double)(i->legit_sent - i->legit_received) / (double)i->legit_sent;
}

double timeline_interval_rtt_ms(const timeline_interval *i)
{
    return i->rtt_samples > 0 ? i->rtt_sum_ms / (double)i->rtt_samples : -1.0;
}

double timeline_interval_attack_pps(const timeline_interval *i)
{
    uint64_t total = 0;
    for (int k = 0; k < ATTACK_KIND_COUNT; k++)
        total += i->attack_sent[k];
    return i->length_s > 0 ? (double)total / i->length_s : 0.0;
}
