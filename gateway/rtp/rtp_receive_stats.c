/* RFC 3550 appendix A receiver statistics for one SSRC. */
#include "rtp/rtp_receive_stats.h"

#include <string.h>

#define SEQ_MOD    65536u
#define WINDOW     MOAT_RTP_MISSING_WINDOW
#define WORD_BITS  64u
#define US_PER_SEC 1000000u

/* Extended numbers wrap modulo 2^32; the bitmap index stays continuous
 * across that wrap only if the window divides 2^32. */
_Static_assert((WINDOW & (WINDOW - 1)) == 0 && WINDOW % 64 == 0, "window: power of two");

void moat_rtp_receive_stats_init(moat_rtp_receive_stats *s, uint32_t ssrc, uint32_t min_sequential)
{
    memset(s, 0, sizeof(*s));
    s->ssrc = ssrc;
    /* A.1 needs at least one packet to seed max_seq; 0 and 1 both mean the
     * first packet validates the source. */
    s->min_sequential = min_sequential == 0 ? 1 : min_sequential;
}

uint32_t moat_rtp_receive_stats_extended_max(const moat_rtp_receive_stats *s)
{
    return s->cycles + s->max_seq;
}

uint32_t moat_rtp_receive_stats_jitter(const moat_rtp_receive_stats *s)
{
    return s->jitter_q4 >> 4;
}

static void mark_arrived(moat_rtp_receive_stats *s, uint32_t ext, bool arrived)
{
    uint32_t bit = ext % WINDOW;
    uint64_t mask = (uint64_t)1 << (bit % WORD_BITS);
    if (arrived)
        s->arrived[bit / WORD_BITS] |= mask;
    else
        s->arrived[bit / WORD_BITS] &= ~mask;
}

static bool has_arrived(const moat_rtp_receive_stats *s, uint32_t ext)
{
    uint32_t bit = ext % WINDOW;
    return (s->arrived[bit / WORD_BITS] >> (bit % WORD_BITS)) & 1u;
}

/* True when `ext` lies in the span the missing window still describes. */
static bool tracked(const moat_rtp_receive_stats *s, uint32_t ext)
{
    uint32_t high = moat_rtp_receive_stats_extended_max(s);
    uint32_t back = high - ext;
    return back < WINDOW && back <= high - s->missing_floor;
}

/* A.1 init_seq, plus the parts of this struct that follow the sequence. */
static void init_seq(moat_rtp_receive_stats *s, uint16_t seq)
{
    s->base_seq = seq;
    s->max_seq = seq;
    s->bad_seq = SEQ_MOD + 1; /* so seq == bad_seq is false */
    s->cycles = 0;
    s->received = 0;
    s->received_prior = 0;
    s->expected_prior = 0;
    s->have_transit = false;
    memset(s->arrived, 0, sizeof(s->arrived));
    s->missing_floor = seq;
}

/* Moves the highest sequence number forward to `ext`, marking everything
 * skipped as missing. */
static void advance_window(moat_rtp_receive_stats *s, uint32_t old_high, uint32_t ext)
{
    uint32_t gap = ext - old_high;
    if (gap >= WINDOW) {
        memset(s->arrived, 0, sizeof(s->arrived));
    } else {
        for (uint32_t e = old_high + 1; e != ext; e++)
            mark_arrived(s, e, false);
    }
    mark_arrived(s, ext, true);
}

/* A.8: J += (|D| - J) / 16, kept as J * 16 in integers as the RFC does. */
static void update_jitter(moat_rtp_receive_stats *s, uint32_t timestamp, uint32_t arrival)
{
    uint32_t transit = arrival - timestamp;
    if (s->have_transit) {
        int64_t d = (int32_t)(transit - s->transit);
        if (d < 0)
            d = -d;
        int64_t j = (int64_t)s->jitter_q4 + d - (((int64_t)s->jitter_q4 + 8) >> 4);
        s->jitter_q4 = j < 0 ? 0 : j > UINT32_MAX ? UINT32_MAX : (uint32_t)j;
    }
    s->transit = transit;
    s->have_transit = true;
}

/* The start of counting: first packet of a validated or restarted source. */
static void accept_first(moat_rtp_receive_stats *s, uint16_t seq, uint32_t timestamp,
                         uint32_t arrival)
{
    init_seq(s, seq);
    s->validated = true;
    s->received = 1;
    mark_arrived(s, seq, true);
    update_jitter(s, timestamp, arrival);
}

moat_rtp_seq_result moat_rtp_receive_stats_update(moat_rtp_receive_stats *s, uint16_t seq,
                                                  uint32_t timestamp, uint32_t arrival)
{
    if (!s->started) {
        s->started = true;
        s->max_seq = (uint16_t)(seq - 1);
        s->probation = s->min_sequential;
    }
    if (s->probation > 0) {
        if (seq == (uint16_t)(s->max_seq + 1)) {
            s->probation--;
            s->max_seq = seq;
            if (s->probation == 0) {
                accept_first(s, seq, timestamp, arrival);
                return MOAT_RTP_SEQ_VALID;
            }
        } else {
            /* Out of sequence: this packet starts a new run. Unreachable
             * with min_sequential 1, where the first packet validates. */
            s->probation = s->min_sequential - 1;
            s->max_seq = seq;
        }
        return MOAT_RTP_SEQ_PROBATION;
    }

    uint16_t udelta = (uint16_t)(seq - s->max_seq);
    uint32_t old_high = moat_rtp_receive_stats_extended_max(s);
    if (udelta < MOAT_RTP_MAX_DROPOUT) {
        /* In order, possibly with a gap. */
        if (seq < s->max_seq)
            s->cycles += SEQ_MOD;
        s->max_seq = seq;
        if (udelta > 0)
            advance_window(s, old_high, moat_rtp_receive_stats_extended_max(s));
    } else if (udelta <= SEQ_MOD - MOAT_RTP_MAX_MISORDER) {
        if (seq != s->bad_seq) {
            s->bad_seq = (uint32_t)(uint16_t)(seq + 1);
            return MOAT_RTP_SEQ_BAD;
        }
        /* Two sequential packets after a jump: the source restarted. */
        accept_first(s, seq, timestamp, arrival);
        return MOAT_RTP_SEQ_RESTARTED;
    } else {
        /* Duplicate or reordered within MAX_MISORDER. */
        uint32_t ext = old_high - (uint16_t)(s->max_seq - seq);
        if (tracked(s, ext))
            mark_arrived(s, ext, true);
    }
    s->received++;
    update_jitter(s, timestamp, arrival);
    return MOAT_RTP_SEQ_VALID;
}

void moat_rtp_receive_stats_on_sr(moat_rtp_receive_stats *s, uint64_t ntp_timestamp,
                                  uint64_t now_us)
{
    s->last_sr = (uint32_t)(ntp_timestamp >> 16);
    s->last_sr_arrival = now_us;
    s->have_sr = true;
}

bool moat_rtp_receive_stats_fill_report(moat_rtp_receive_stats *s, uint64_t now_us,
                                        moat_rtcp_report_block *out)
{
    if (!s->validated)
        return false;
    /* A.3, in 64-bit signed arithmetic so no step wraps. */
    int64_t expected = (int64_t)moat_rtp_receive_stats_extended_max(s) - s->base_seq + 1;
    int64_t lost = expected - s->received;
    int64_t expected_interval = expected - s->expected_prior;
    int64_t received_interval = (int64_t)s->received - s->received_prior;
    int64_t lost_interval = expected_interval - received_interval;
    s->expected_prior = (uint32_t)expected;
    s->received_prior = s->received;

    uint8_t fraction = 0;
    if (expected_interval > 0 && lost_interval > 0) {
        int64_t f = (lost_interval << 8) / expected_interval;
        fraction = f > 255 ? 255 : (uint8_t)f;
    }
    if (lost > 0x7FFFFF)
        lost = 0x7FFFFF;
    if (lost < -0x800000)
        lost = -0x800000;

    uint32_t dlsr = 0;
    if (s->have_sr && now_us > s->last_sr_arrival) {
        uint64_t d = (now_us - s->last_sr_arrival) * 65536u / US_PER_SEC;
        dlsr = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
    }

    out->ssrc = s->ssrc;
    out->fraction_lost = fraction;
    out->cumulative_lost = (int32_t)lost;
    out->highest_sequence = moat_rtp_receive_stats_extended_max(s);
    out->jitter = moat_rtp_receive_stats_jitter(s);
    out->last_sr = s->have_sr ? s->last_sr : 0;
    out->delay_since_last_sr = dlsr;
    return true;
}

size_t moat_rtp_receive_stats_missing(const moat_rtp_receive_stats *s, uint16_t *seqs, size_t max)
{
    if (!s->validated)
        return 0;
    uint32_t high = moat_rtp_receive_stats_extended_max(s);
    uint32_t span = high - s->missing_floor;
    if (span > WINDOW - 1)
        span = WINDOW - 1;
    size_t n = 0;
    for (uint32_t back = span; back > 0 && n < max; back--) {
        uint32_t ext = high - back;
        if (!has_arrived(s, ext))
            seqs[n++] = (uint16_t)ext;
    }
    return n;
}

void moat_rtp_receive_stats_forget_missing(moat_rtp_receive_stats *s, uint16_t seq)
{
    if (!s->validated)
        return;
    uint32_t ext = moat_rtp_receive_stats_extended_max(s) - (uint16_t)(s->max_seq - seq);
    if (tracked(s, ext))
        mark_arrived(s, ext, true);
}
