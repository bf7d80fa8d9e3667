/* A token bucket in plain data: `rate` tokens a second up to `burst`. One
 * owner, one thread; no allocation. Used where a cheap check must come
 * before expensive work (a STUN HMAC) or before memory is committed. */
#ifndef MOAT_TOKEN_BUCKET_H
#define MOAT_TOKEN_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    double rate;  /* tokens per second */
    double burst; /* most tokens held */
    double tokens;
    uint64_t refilled_us;
} moat_token_bucket;

/* Starts full. */
static inline void moat_token_bucket_init(moat_token_bucket *b, double rate, double burst,
                                          uint64_t now_us)
{
    *b = (moat_token_bucket){.rate = rate, .burst = burst, .tokens = burst, .refilled_us = now_us};
}

/* Takes one token if there is one. */
static inline bool moat_token_bucket_take(moat_token_bucket *b, uint64_t now_us)
{
    if (now_us > b->refilled_us) {
        b->tokens += b->rate * (double)(now_us - b->refilled_us) / 1e6;
        if (b->tokens > b->burst)
            b->tokens = b->burst;
        b->refilled_us = now_us;
    }
    if (b->tokens < 1.0)
        return false;
    b->tokens -= 1.0;
    return true;
}

/* Takes `n` tokens (bytes, say) if at least one is there: the balance may go
 * below zero by one packet's worth, so a packet larger than the burst still
 * passes once the bucket is full, and the average stays `rate`. */
static inline bool moat_token_bucket_take_n(moat_token_bucket *b, double n, uint64_t now_us)
{
    if (now_us > b->refilled_us) {
        b->tokens += b->rate * (double)(now_us - b->refilled_us) / 1e6;
        if (b->tokens > b->burst)
            b->tokens = b->burst;
        b->refilled_us = now_us;
    }
    if (b->tokens <= 0.0)
        return false;
    b->tokens -= n;
    return true;
}

#endif
