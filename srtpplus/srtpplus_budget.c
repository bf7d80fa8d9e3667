/* The SRTP+ verification budget (SRTPPLUS.md section 5): a GCRA token bucket for
 * packets whose tag could not be checked, with the caller's clock, and the spec's
 * default rate. */
#include "srtpplus_budget.h"
#include "srtpplus_scheme.h"

#define NS_PER_S 1000000000ull

void srtpplus_budget_init(struct srtpplus_budget *budget, uint32_t rate_per_s, uint32_t burst)
{
    if (burst == 0)
        burst = 1;
    budget->interval_ns = rate_per_s ? NS_PER_S / rate_per_s : 0;
    if (rate_per_s && budget->interval_ns == 0)
        budget->interval_ns = 1;
    budget->tolerance_ns = budget->interval_ns * (uint64_t)(burst - 1);
    budget->tat_ns = 0;
}

bool srtpplus_budget_take(struct srtpplus_budget *budget, uint64_t now_ns)
{
    if (budget->interval_ns == 0)
        return false;
    uint64_t tat = budget->tat_ns > now_ns ? budget->tat_ns : now_ns;
    if (tat - now_ns > budget->tolerance_ns)
        return false;
    budget->tat_ns = tat + budget->interval_ns;
    return true;
}

uint32_t srtpplus_budget_default_rate(uint32_t learned_packets_per_s)
{
    uint32_t rate = learned_packets_per_s / 10;
    return rate < SRTPPLUS_BUDGET_MIN_RATE ? SRTPPLUS_BUDGET_MIN_RATE : rate;
}
