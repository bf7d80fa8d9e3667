/* Media rate measurement and the retransmission token bucket of one stream. */
#include "rtp/retransmit_budget.h"

#define WINDOW_US      1000000u
#define MIN_PARTIAL_US 200000u

void moat_retransmit_budget_init(moat_retransmit_budget *b)
{
    *b = (moat_retransmit_budget){0};
}

static void roll_window(moat_retransmit_budget *b, uint64_t now_us)
{
    uint64_t elapsed = now_us - b->window_start_us;
    if (elapsed < WINDOW_US)
        return;
    /* A stream silent for several windows is measured as the average over
     * the whole gap, which is what it sent. */
    b->rate_bytes = (double)b->window_bytes * 1e6 / (double)elapsed;
    b->rate_packets = (double)b->window_packets * 1e6 / (double)elapsed;
    b->window_start_us = now_us;
    b->window_bytes = 0;
    b->window_packets = 0;
}

static double partial(uint64_t count, uint64_t elapsed)
{
    return elapsed < MIN_PARTIAL_US ? 0.0 : (double)count * 1e6 / (double)elapsed;
}

double moat_retransmit_budget_rate_bytes(const moat_retransmit_budget *b, uint64_t now_us)
{
    double current = partial(b->window_bytes, now_us - b->window_start_us);
    return current > b->rate_bytes ? current : b->rate_bytes;
}

double moat_retransmit_budget_rate_packets(const moat_retransmit_budget *b, uint64_t now_us)
{
    double current = partial(b->window_packets, now_us - b->window_start_us);
    return current > b->rate_packets ? current : b->rate_packets;
}

double moat_retransmit_budget_window_rate_bytes(const moat_retransmit_budget *b)
{
    return b->rate_bytes;
}

void moat_retransmit_budget_on_send(moat_retransmit_budget *b, size_t bytes, uint64_t now_us)
{
    if (!b->started) {
        b->started = true;
        b->window_start_us = now_us;
        b->refilled_us = now_us;
        b->tokens =
            MOAT_RETRANSMIT_MIN_RATE * MOAT_RETRANSMIT_RATE_FACTOR * MOAT_RETRANSMIT_BURST_S;
    }
    if (now_us < b->window_start_us)
        return;
    roll_window(b, now_us);
    b->window_bytes += bytes;
    b->window_packets++;
}

static double allowance(const moat_retransmit_budget *b, uint64_t now_us)
{
    double rate = moat_retransmit_budget_rate_bytes(b, now_us);
    if (rate < MOAT_RETRANSMIT_MIN_RATE)
        rate = MOAT_RETRANSMIT_MIN_RATE;
    return rate * MOAT_RETRANSMIT_RATE_FACTOR;
}

bool moat_retransmit_budget_take(moat_retransmit_budget *b, size_t bytes, uint64_t now_us)
{
    if (!b->started)
        return false; /* nothing was sent, nothing can be resent */
    if (now_us > b->refilled_us) {
        double per_s = allowance(b, now_us);
        b->tokens += per_s * (double)(now_us - b->refilled_us) / 1e6;
        double cap = per_s * MOAT_RETRANSMIT_BURST_S;
        if (b->tokens > cap)
            b->tokens = cap;
        b->refilled_us = now_us;
    }
    if (b->tokens < (double)bytes)
        return false;
    b->tokens -= (double)bytes;
    return true;
}

void moat_retransmit_budget_give_back(moat_retransmit_budget *b, size_t bytes)
{
    b->tokens += (double)bytes;
}
