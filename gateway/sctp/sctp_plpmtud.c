/* The PLPMTUD state machine (RFC 8899 §5): search rounds, probe timers,
 * confirmation and black-hole fallback. Pure logic, see sctp_plpmtud.h. */
#include "sctp/sctp_plpmtud.h"

/* Packet sizes of common links' MTUs, probed early so the PLPMTU usually
 * rises in the first round trip even when the maximum does not get through:
 * 1500 (Ethernet) and 9000 (jumbo frames) less UDP over IPv4 or IPv6 and a
 * DTLS 1.2 AES-GCM record's 37 bytes, rounded down to 4. */
static const uint32_t plateaus[] = {1432, 1412, 8932, 8912};

#define PLATEAU_COUNT (sizeof plateaus / sizeof plateaus[0])

static uint32_t round4(uint32_t size)
{
    return size & ~3u;
}

static bool before(uint32_t seq, uint32_t mark)
{
    return (int32_t)(seq - mark) < 0;
}

void moat_plpmtud_init(moat_plpmtud *p, uint32_t max)
{
    *p = (moat_plpmtud){0};
    if (max > MOAT_PLPMTUD_MAX)
        max = MOAT_PLPMTUD_MAX;
    if (max < MOAT_PLPMTUD_BASE)
        max = MOAT_PLPMTUD_BASE;
    p->max = round4(max);
    p->plpmtu = MOAT_PLPMTUD_BASE;
    p->failed = p->max + 4;
    p->state = MOAT_PLPMTUD_DISABLED;
}

static bool near_any(const moat_plpmtud *p, uint32_t size)
{
    for (unsigned i = 0; i < p->count; i++) {
        uint32_t d = p->sizes[i] > size ? p->sizes[i] - size : size - p->sizes[i];
        if (d < MOAT_PLPMTUD_GRANULARITY)
            return true;
    }
    return false;
}

static void add_size(moat_plpmtud *p, uint32_t size)
{
    if (p->count < MOAT_PLPMTUD_ROUND_SIZES && !near_any(p, size))
        p->sizes[p->count++] = size;
}

/* The sizes of a round in (plpmtu, failed): the top, three evenly spaced
 * below it, then the plateaus in between. */
static void pick_sizes(moat_plpmtud *p)
{
    p->count = 0;
    uint32_t lo = p->plpmtu;
    uint32_t top = p->failed - 4 < p->max ? p->failed - 4 : p->max;
    if (top <= lo || p->failed - lo <= MOAT_PLPMTUD_GRANULARITY)
        return;
    for (uint32_t i = 4; i >= 1; i--) {
        uint32_t size = round4(lo + (uint32_t)(((uint64_t)(top - lo) * i) / 4u));
        if (size > lo)
            add_size(p, size);
    }
    for (size_t i = 0; i < PLATEAU_COUNT; i++)
        if (plateaus[i] > lo && plateaus[i] < top)
            add_size(p, plateaus[i]);
}

static void complete(moat_plpmtud *p, int64_t now_us)
{
    p->state = MOAT_PLPMTUD_SEARCH_COMPLETE;
    p->count = 0;
    p->pending = 0;
    p->raise_at_us = now_us + MOAT_PLPMTUD_RAISE_TIMER_US;
    if (!p->confirming)
        p->confirm_deadline_us = now_us + MOAT_PLPMTUD_CONFIRMATION_TIMER_US;
}

static void start_round(moat_plpmtud *p, int64_t now_us)
{
    pick_sizes(p);
    if (p->count == 0) {
        complete(p, now_us);
        return;
    }
    p->acked = 0;
    p->pending = (1u << p->count) - 1u;
    p->attempts = 0;
    p->round_seq = p->next_seq;
    p->deadline_us = now_us + MOAT_PLPMTUD_PROBE_TIMER_US;
}

static void begin_search(moat_plpmtud *p, int64_t now_us)
{
    p->state = MOAT_PLPMTUD_SEARCHING;
    p->counters.searches++;
    start_round(p, now_us);
}

void moat_plpmtud_start(moat_plpmtud *p, int64_t now_us)
{
    if (p->state != MOAT_PLPMTUD_DISABLED || p->max <= MOAT_PLPMTUD_BASE)
        return;
    begin_search(p, now_us);
}

/* Bits of the round's sizes above the PLPMTU not acknowledged yet. */
static uint32_t open_sizes(const moat_plpmtud *p)
{
    uint32_t bits = 0;
    for (unsigned i = 0; i < p->count; i++)
        if (!(p->acked & (1u << i)) && p->sizes[i] > p->plpmtu)
            bits |= 1u << i;
    return bits;
}

static void round_expired(moat_plpmtud *p, int64_t now_us)
{
    uint32_t open = open_sizes(p);
    p->counters.probes_lost += (uint64_t)__builtin_popcount(open & ~p->pending);
    p->attempts++;
    if (open != 0 && p->attempts < MOAT_PLPMTUD_MAX_PROBES) {
        p->pending = open;
        p->deadline_us = now_us + MOAT_PLPMTUD_PROBE_TIMER_US;
        return;
    }
    for (unsigned i = 0; i < p->count; i++)
        if ((open & (1u << i)) && p->sizes[i] < p->failed)
            p->failed = p->sizes[i];
    start_round(p, now_us);
}

static void black_hole(moat_plpmtud *p, int64_t now_us)
{
    p->counters.black_holes++;
    p->failed = p->plpmtu;
    p->plpmtu = MOAT_PLPMTUD_BASE;
    p->confirming = false;
    p->confirm_pending = 0;
    p->count = 0;
    p->pending = 0;
    p->state = MOAT_PLPMTUD_BASE_STATE;
    p->deadline_us = now_us + MOAT_PLPMTUD_PROBE_TIMER_US;
}

static void start_confirmation(moat_plpmtud *p, int64_t now_us)
{
    p->confirming = true;
    p->confirm_pending = 3u;
    p->confirm_base_acked = false;
    p->confirm_attempts = 0;
    p->confirm_seq = p->next_seq;
    p->confirm_deadline_us = now_us + MOAT_PLPMTUD_PROBE_TIMER_US;
}

static void confirmation_timer(moat_plpmtud *p, int64_t now_us)
{
    if (!p->confirming) {
        if (p->state == MOAT_PLPMTUD_SEARCH_COMPLETE && p->plpmtu > MOAT_PLPMTUD_BASE)
            start_confirmation(p, now_us);
        else
            p->confirm_deadline_us = now_us + MOAT_PLPMTUD_CONFIRMATION_TIMER_US;
        return;
    }
    p->counters.probes_lost++;
    if (++p->confirm_attempts >= MOAT_PLPMTUD_MAX_PROBES) {
        if (p->confirm_base_acked) {
            black_hole(p, now_us);
            return;
        }
        /* Nothing got through, not even the base: not a smaller path. */
        p->confirm_attempts = 0;
    }
    p->confirm_pending = 3u;
    p->confirm_deadline_us = now_us + MOAT_PLPMTUD_PROBE_TIMER_US;
}

/* Runs whichever timer is due; false when none is. */
static bool run_one_timer(moat_plpmtud *p, int64_t now_us)
{
    switch (p->state) {
    case MOAT_PLPMTUD_DISABLED:
        return false;
    case MOAT_PLPMTUD_BASE_STATE:
        if (now_us < p->deadline_us)
            return false;
        begin_search(p, now_us);
        return true;
    case MOAT_PLPMTUD_SEARCHING:
        if (p->confirming && now_us >= p->confirm_deadline_us) {
            confirmation_timer(p, now_us);
            return true;
        }
        if (now_us < p->deadline_us)
            return false;
        round_expired(p, now_us);
        return true;
    case MOAT_PLPMTUD_SEARCH_COMPLETE:
        if (now_us >= p->confirm_deadline_us) {
            confirmation_timer(p, now_us);
            return true;
        }
        if (now_us >= p->raise_at_us && !p->confirming) {
            if (p->plpmtu >= p->max) {
                p->raise_at_us = now_us + MOAT_PLPMTUD_RAISE_TIMER_US;
                return false;
            }
            p->failed = p->max + 4;
            begin_search(p, now_us);
            return true;
        }
        return false;
    }
    return false;
}

bool moat_plpmtud_poll(moat_plpmtud *p, int64_t now_us, moat_plpmtud_probe *probe)
{
    /* Each timer either moves a deadline into the future or changes state:
     * a handful of iterations at most. */
    for (int i = 0; i < 8 && run_one_timer(p, now_us); i++)
        ;
    if (p->confirming && p->confirm_pending != 0) {
        bool first = (p->confirm_pending & 1u) != 0;
        p->confirm_pending &= first ? ~1u : ~2u;
        probe->seq = p->next_seq++;
        probe->size = first ? p->plpmtu : MOAT_PLPMTUD_BASE;
        p->counters.probes_sent++;
        return true;
    }
    if (p->state != MOAT_PLPMTUD_SEARCHING || p->pending == 0)
        return false;
    unsigned i = (unsigned)__builtin_ctz(p->pending);
    p->pending &= ~(1u << i);
    probe->seq = p->next_seq++;
    probe->size = p->sizes[i];
    p->counters.probes_sent++;
    return true;
}

int64_t moat_plpmtud_deadline(const moat_plpmtud *p)
{
    int64_t at = INT64_MAX;
    switch (p->state) {
    case MOAT_PLPMTUD_DISABLED:
        return INT64_MAX;
    case MOAT_PLPMTUD_BASE_STATE:
        return p->deadline_us;
    case MOAT_PLPMTUD_SEARCHING:
        at = p->pending ? INT64_MIN : p->deadline_us;
        break;
    case MOAT_PLPMTUD_SEARCH_COMPLETE:
        at = p->confirm_deadline_us < p->raise_at_us ? p->confirm_deadline_us : p->raise_at_us;
        break;
    }
    if (p->confirming) {
        int64_t c = p->confirm_pending ? INT64_MIN : p->confirm_deadline_us;
        at = c < at ? c : at;
    }
    return at;
}

static bool confirmation_ack(moat_plpmtud *p, uint32_t seq, uint32_t size, int64_t now_us)
{
    if (!p->confirming || before(seq, p->confirm_seq) || !before(seq, p->next_seq))
        return false;
    if (size == MOAT_PLPMTUD_BASE && size != p->plpmtu) {
        p->confirm_base_acked = true;
        p->counters.probes_acked++;
        return true;
    }
    if (size != p->plpmtu)
        return false;
    p->confirming = false;
    p->confirm_pending = 0;
    p->counters.probes_acked++;
    p->confirm_deadline_us = now_us + MOAT_PLPMTUD_CONFIRMATION_TIMER_US;
    return true;
}

bool moat_plpmtud_on_ack(moat_plpmtud *p, uint32_t seq, uint32_t size, int64_t now_us)
{
    if (confirmation_ack(p, seq, size, now_us))
        return false;
    if (p->state != MOAT_PLPMTUD_SEARCHING || before(seq, p->round_seq) ||
        !before(seq, p->next_seq))
        return false;
    unsigned i = 0;
    while (i < p->count && p->sizes[i] != size)
        i++;
    if (i == p->count || (p->acked & (1u << i)))
        return false;
    p->acked |= 1u << i;
    p->pending &= ~(1u << i);
    p->counters.probes_acked++;
    bool grew = size > p->plpmtu;
    if (grew) {
        p->plpmtu = size;
        /* A larger size got through: a confirmation of a smaller one is
         * moot. */
        p->confirming = false;
        p->confirm_pending = 0;
    }
    if (open_sizes(p) == 0)
        start_round(p, now_us);
    return grew;
}

void moat_plpmtud_suspect(moat_plpmtud *p, int64_t now_us)
{
    if (p->plpmtu <= MOAT_PLPMTUD_BASE || p->confirming)
        return;
    if (p->state != MOAT_PLPMTUD_SEARCHING && p->state != MOAT_PLPMTUD_SEARCH_COMPLETE)
        return;
    start_confirmation(p, now_us);
}

const char *moat_plpmtud_state_name(moat_plpmtud_state state)
{
    switch (state) {
    case MOAT_PLPMTUD_DISABLED:
        return "disabled";
    case MOAT_PLPMTUD_BASE_STATE:
        return "base";
    case MOAT_PLPMTUD_SEARCHING:
        return "searching";
    case MOAT_PLPMTUD_SEARCH_COMPLETE:
        return "search_complete";
    }
    return "unknown";
}
