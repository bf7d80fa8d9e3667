/* The token bucket pacing one attack class: tokens accrue at a rate up to a
 * burst, senders take what they may send now, refund what the kernel refused,
 * and ask how long to wait. */
#include "rate_limiter.h"

static void refill(rate_limiter *l, uint64_t now_us)
{
    if (now_us > l->last_us) {
        l->tokens += l->rate * (double)(now_us - l->last_us) / 1e6;
        if (l->tokens > l->burst)
            l->tokens = l->burst;
    }
    l->last_us = now_us;
}

void rate_limiter_init(rate_limiter *l, double rate, double burst, uint64_t now_us)
{
    l->rate = rate > 0 ? rate : 0;
    l->burst = burst >= 1 ? burst : 1;
    l->tokens = 0;
    l->last_us = now_us;
}

void rate_limiter_set_rate(rate_limiter *l, double rate, double burst, uint64_t now_us)
{
    refill(l, now_us);
    l->rate = rate > 0 ? rate : 0;
    l->burst = burst >= 1 ? burst : 1;
    if (l->tokens > l->burst)
        l->tokens = l->burst;
}

size_t rate_limiter_take(rate_limiter *l, size_t want, uint64_t now_us)
{
    refill(l, now_us);
    size_t available = l->tokens >= 1 ? (size_t)l->tokens : 0;
    size_t granted = available < want ? available : want;
    l->tokens -= (double)granted;
    return granted;
}

void rate_limiter_refund(rate_limiter *l, size_t unused)
{
    l->tokens += (double)unused;
    if (l->tokens > l->burst)
        l->tokens = l->burst;
}

uint64_t rate_limiter_wait_us(const rate_limiter *l, size_t want, uint64_t now_us)
{
    double needed = (double)want;
    if (needed > l->burst)
        needed = l->burst;
    double tokens = l->tokens;
    if (now_us > l->last_us)
        tokens += l->rate * (double)(now_us - l->last_us) / 1e6;
    if (tokens >= needed)
        return 0;
    if (l->rate <= 0)
        return UINT64_MAX;
    return (uint64_t)((needed - tokens) * 1e6 / l->rate) + 1;
}
