/* The verification budget of SRTPPLUS.md section 5: a token bucket limiting how many
 * packets whose tag could not be checked may still reach srtp_unprotect. Implemented as
 * GCRA (a theoretical arrival time), which needs no division per packet. The caller
 * passes the time; nothing here reads a clock. */
#ifndef SRTPPLUS_BUDGET_H
#define SRTPPLUS_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct srtpplus_budget {
    uint64_t interval_ns;  /* 1 / rate; 0 when the rate is 0 (nothing allowed) */
    uint64_t tolerance_ns; /* (burst - 1) * interval */
    uint64_t tat_ns;       /* theoretical arrival time of the next token */
};

/* rate in tokens per second, burst >= 1 tokens available at once; rate 0 denies all. */
void srtpplus_budget_init(struct srtpplus_budget *budget, uint32_t rate_per_s, uint32_t burst);

/* Takes one token at time now_ns (any monotonic clock in nanoseconds). */
bool srtpplus_budget_take(struct srtpplus_budget *budget, uint64_t now_ns);

/* The spec's default budget for a transport's learned packet rate: 10 %, at least 20/s. */
uint32_t srtpplus_budget_default_rate(uint32_t learned_packets_per_s);

#endif
