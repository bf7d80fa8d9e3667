/* Token bucket pacing one attack class: tokens accrue at `rate` per second up
 * to `burst`; a sender takes as many as it may send now and gives back what
 * the kernel did not accept. */
#ifndef RATE_LIMITER_H
#define RATE_LIMITER_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double rate;   /* tokens per second */
    double burst;  /* most tokens held at once */
    double tokens; /* may be fractional */
    uint64_t last_us;
} rate_limiter;

/* Starts empty at now_us, so the first packet leaves after 1/rate seconds
 * rather than a burst at once. */
void rate_limiter_init(rate_limiter *l, double rate, double burst, uint64_t now_us);
/* Changes rate and burst from now on (tokens accrued so far are kept, up
 * to the new burst). */
void rate_limiter_set_rate(rate_limiter *l, double rate, double burst, uint64_t now_us);
/* Grants up to `want` whole tokens. */
size_t rate_limiter_take(rate_limiter *l, size_t want, uint64_t now_us);
/* Returns tokens taken but not used. */
void rate_limiter_refund(rate_limiter *l, size_t unused);
/* Microseconds until `want` whole tokens are available (0: now). A want
 * above the burst is clamped to it. */
uint64_t rate_limiter_wait_us(const rate_limiter *l, size_t want, uint64_t now_us);

#endif
