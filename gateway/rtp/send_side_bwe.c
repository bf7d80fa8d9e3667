/* Sender-side bandwidth estimation (send_side_bwe.h): the send history,
 * packet groups, the trendline filter and overuse detector, AIMD, the
 * loss-based bound and probe results. */
#include "rtp/send_side_bwe.h"

#include <string.h>

enum { SENT = 1, ACKED = 2, PROBE = 4, LOST = 8 };

#define INITIAL_THRESHOLD  12.5
#define THRESHOLD_GAIN     4.0
#define K_UP               0.0087
#define K_DOWN             0.039
#define SMOOTHING          0.9
#define OVERUSE_TIME_MS    50.0  /* sustained: a loaded receiver's timing noise is not */
#define INCREASE_PER_S     0.077 /* ln 1.08: 8 % a second */
#define DECREASE_FACTOR    0.85
#define ACKED_PAUSE_US     250000
#define PROBE_JUDGE_US     1000000u /* after its end, judged with what came */
#define PROBE_MAX_LOSS     0.05
#define PROBE_CONFIRM_PART 0.85 /* delivered / target for "confirmed" */

void moat_ssbwe_init(moat_ssbwe *e, uint64_t initial_bps)
{
    memset(e, 0, sizeof *e);
    e->threshold = INITIAL_THRESHOLD;
    e->delay_bps = initial_bps < MOAT_SSBWE_MIN_BPS ? MOAT_SSBWE_MIN_BPS : initial_bps;
    e->loss_bps = e->delay_bps;
}

static uint64_t clamp_bps(double bps)
{
    if (!(bps >= MOAT_SSBWE_MIN_BPS))
        return MOAT_SSBWE_MIN_BPS;
    if (bps > MOAT_SSBWE_MAX_BPS)
        return MOAT_SSBWE_MAX_BPS;
    return (uint64_t)bps;
}

uint16_t moat_ssbwe_on_send(moat_ssbwe *e, size_t bytes, uint64_t now_us, bool probe)
{
    uint16_t seq = e->next_seq++;
    size_t slot = seq % MOAT_SSBWE_HISTORY;
    e->seq_of[slot] = seq;
    e->send_us[slot] = (int64_t)now_us;
    e->size[slot] = (uint16_t)(bytes > UINT16_MAX ? UINT16_MAX : bytes);
    e->flags[slot] = (uint8_t)(SENT | (probe || e->probing ? PROBE : 0));
    if (e->probing && !e->probe_have_first) {
        e->probe_first_seq = seq;
        e->probe_have_first = true;
    }
    e->stats.packets_sent++;
    return seq;
}

/* The history slot of `seq` when it was sent and is recent; -1 otherwise. */
static long sent_slot(const moat_ssbwe *e, uint16_t seq)
{
    uint16_t age = (uint16_t)(e->next_seq - 1 - seq);
    if (e->stats.packets_sent == 0 || age >= MOAT_SSBWE_HISTORY)
        return -1;
    size_t slot = seq % MOAT_SSBWE_HISTORY;
    if (e->seq_of[slot] != seq || !(e->flags[slot] & SENT))
        return -1;
    return (long)slot;
}

/* The same, not acknowledged yet. */
static long known_slot(const moat_ssbwe *e, uint16_t seq)
{
    long slot = sent_slot(e, seq);
    return slot >= 0 && !(e->flags[slot] & ACKED) ? slot : -1;
}

/* ---- trendline and overuse detector ---- */

static double trend_slope(const moat_ssbwe *e)
{
    size_t n = e->n_samples;
    double sx = 0, sy = 0;
    for (size_t i = 0; i < n; i++) {
        sx += e->samples_x[i];
        sy += e->samples_y[i];
    }
    double mx = sx / (double)n, my = sy / (double)n, num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (e->samples_x[i] - mx) * (e->samples_y[i] - my);
        den += (e->samples_x[i] - mx) * (e->samples_x[i] - mx);
    }
    return den > 0 ? num / den : e->trend;
}

static void update_threshold(moat_ssbwe *e, double modified, int64_t arrival)
{
    if (e->last_threshold_arrival == 0)
        e->last_threshold_arrival = arrival;
    double magnitude = modified < 0 ? -modified : modified;
    if (magnitude > e->threshold + 15.0) {
        e->last_threshold_arrival = arrival; /* a spike: not learned from */
        return;
    }
    double k = magnitude < e->threshold ? K_DOWN : K_UP;
    double dt_ms = (double)(arrival - e->last_threshold_arrival) / 1000.0;
    if (dt_ms > 100.0)
        dt_ms = 100.0;
    if (dt_ms < 0)
        dt_ms = 0;
    e->threshold += k * (magnitude - e->threshold) * dt_ms;
    if (e->threshold < 6.0)
        e->threshold = 6.0;
    if (e->threshold > 600.0)
        e->threshold = 600.0;
    e->last_threshold_arrival = arrival;
}

static void detect(moat_ssbwe *e, double send_delta_ms, int64_t arrival)
{
    double n = e->n_deltas < 60 ? (double)e->n_deltas : 60.0;
    double modified = n * e->trend * THRESHOLD_GAIN;
    if (modified > e->threshold) {
        e->overuse_ms += e->overuse_count == 0 ? send_delta_ms / 2 : send_delta_ms;
        e->overuse_count++;
        if (e->overuse_ms > OVERUSE_TIME_MS && e->overuse_count > 1 &&
            e->trend >= e->previous_trend) {
            e->overuse_ms = 0;
            e->overuse_count = 0;
            e->usage = MOAT_SSBWE_OVERUSING;
        }
    } else if (modified < -e->threshold) {
        e->overuse_ms = 0;
        e->overuse_count = 0;
        e->usage = MOAT_SSBWE_UNDERUSING;
    } else {
        e->overuse_ms = 0;
        e->overuse_count = 0;
        e->usage = MOAT_SSBWE_NORMAL;
    }
    e->previous_trend = e->trend;
    update_threshold(e, modified, arrival);
}

/* One inter-group delay variation sample. */
static void on_group_delta(moat_ssbwe *e, double send_delta_ms, double arrival_delta_ms,
                           int64_t arrival)
{
    if (e->n_deltas == 0 && e->n_samples == 0)
        e->first_arrival = arrival;
    if (e->n_deltas < 1000)
        e->n_deltas++;
    e->accumulated_ms += arrival_delta_ms - send_delta_ms;
    e->smoothed_ms = SMOOTHING * e->smoothed_ms + (1 - SMOOTHING) * e->accumulated_ms;
    e->samples_x[e->sample_at] = (double)(arrival - e->first_arrival) / 1000.0;
    e->samples_y[e->sample_at] = e->smoothed_ms;
    e->sample_at = (e->sample_at + 1) % MOAT_SSBWE_TRENDLINE;
    if (e->n_samples < MOAT_SSBWE_TRENDLINE)
        e->n_samples++;
    if (e->n_samples == MOAT_SSBWE_TRENDLINE)
        e->trend = trend_slope(e);
    detect(e, send_delta_ms, arrival);
    if (e->probing || e->probe_have_first)
        e->probe_overuse = e->probe_overuse || e->usage == MOAT_SSBWE_OVERUSING;
}

/* Packet groups: a packet sent within MOAT_SSBWE_BURST_US of its group's
 * first joins it; a later one closes it and compares it with the last. */
static void on_arrival(moat_ssbwe *e, int64_t send, int64_t arrival)
{
    if (e->group_open && send < e->group_first_send)
        return; /* reordered across groups: left out */
    if (e->group_open && send - e->group_first_send <= (int64_t)MOAT_SSBWE_BURST_US) {
        if (send > e->group_last_send)
            e->group_last_send = send;
        if (arrival > e->group_arrival)
            e->group_arrival = arrival;
        return;
    }
    if (e->group_open) {
        if (e->have_previous) {
            double send_delta = (double)(e->group_last_send - e->previous_send) / 1000.0;
            double arrival_delta = (double)(e->group_arrival - e->previous_arrival) / 1000.0;
            on_group_delta(e, send_delta, arrival_delta, e->group_arrival);
        }
        e->previous_send = e->group_last_send;
        e->previous_arrival = e->group_arrival;
        e->have_previous = true;
    }
    e->group_open = true;
    e->group_first_send = e->group_last_send = send;
    e->group_arrival = arrival;
}

/* ---- acknowledged bitrate, probe and loss bookkeeping ---- */

/* The same over MOAT_SSBWE_RECENT_WINDOW. A window's first packet only
 * opens it (its bytes arrived before the window's start). */
static void on_recent_bytes(moat_ssbwe *e, int64_t arrival, unsigned bytes, bool pause)
{
    if (e->recent_window_start == 0 || arrival < e->recent_window_start || pause) {
        e->recent_window_start = arrival ? arrival : 1;
        e->recent_window_bytes = 0;
        return;
    }
    e->recent_window_bytes += bytes;
    int64_t span = arrival - e->recent_window_start;
    if (span >= (int64_t)MOAT_SSBWE_RECENT_WINDOW) {
        e->recent_acked_bps = e->recent_window_bytes * 8000000ull / (uint64_t)span;
        e->recent_window_start = arrival;
        e->recent_window_bytes = 0;
    }
}

static void on_acked_bytes(moat_ssbwe *e, int64_t arrival, unsigned bytes)
{
    /* A pause (nothing sent: a layer switch waiting for its keyframe) is
     * not the path's rate: the window starts again after it. */
    bool pause = e->acked_window_bytes != 0 && arrival - e->acked_last_arrival > ACKED_PAUSE_US;
    if (e->acked_window_bytes == 0 || arrival < e->acked_window_start || pause) {
        e->acked_window_start = arrival;
        e->acked_window_bytes = 0;
    }
    on_recent_bytes(e, arrival, bytes, pause);
    e->acked_last_arrival = arrival;
    e->acked_window_bytes += bytes;
    int64_t span = arrival - e->acked_window_start;
    if (span >= (int64_t)MOAT_SSBWE_ACKED_WINDOW) {
        e->acked_bps = e->acked_window_bytes * 8000000ull / (uint64_t)span;
        e->acked_window_bytes = 0;
    }
}

static void on_probe_packet(moat_ssbwe *e, int64_t arrival, unsigned bytes)
{
    if (arrival < 0) {
        e->probe_lost++;
        return;
    }
    if (e->probe_acked == 0 || arrival < e->probe_first_arrival) {
        e->probe_first_arrival = arrival;
        e->probe_first_size = bytes;
    }
    if (e->probe_acked == 0 || arrival > e->probe_last_arrival)
        e->probe_last_arrival = arrival;
    e->probe_acked++;
    e->probe_bytes_acked += bytes;
}

static void judge_probe(moat_ssbwe *e)
{
    unsigned total = e->probe_acked + e->probe_lost;
    double loss = total ? (double)e->probe_lost / total : 1.0;
    int64_t span = e->probe_last_arrival - e->probe_first_arrival;
    uint64_t delivered = 0;
    if (e->probe_acked >= MOAT_SSBWE_PROBE_MIN_PKTS && span > 0)
        delivered = (e->probe_bytes_acked - e->probe_first_size) * 8000000ull / (uint64_t)span;
    /* Judged on what arrived: a path that cannot carry the target spreads
     * the probe's arrivals (delivered falls short) or drops them. The
     * delay trend alone is not trusted here: a loaded receiver's timing
     * noise looks like a short ramp. */
    bool clean = loss < PROBE_MAX_LOSS && delivered > 0;
    if (clean) {
        uint64_t lifted = delivered < e->probe_target_bps ? delivered : e->probe_target_bps;
        lifted = clamp_bps((double)lifted * 0.95);
        if (lifted > e->delay_bps)
            e->delay_bps = lifted;
        if (lifted > e->loss_bps)
            e->loss_bps = lifted;
    }
    bool confirmed = clean && delivered >= e->probe_target_bps * PROBE_CONFIRM_PART;
    e->probe_result = confirmed ? 1 : -1;
    if (confirmed)
        e->stats.probes_confirmed++;
    else
        e->stats.probes_failed++;
    e->probe_have_first = false;
    e->probe_started_us = 0;
}

static void judge_loss(moat_ssbwe *e, uint64_t now_us)
{
    unsigned total = e->loss_received + e->loss_lost;
    if (total < MOAT_SSBWE_LOSS_PACKETS)
        return;
    e->loss_fraction = (double)e->loss_lost / total;
    e->loss_received = e->loss_lost = 0;
    if (e->loss_fraction > 0.10) {
        /* At most once per MOAT_SSBWE_DECREASE_GAP: the losses of one
         * episode are counted once. */
        if (e->last_loss_cut_us && now_us - e->last_loss_cut_us < MOAT_SSBWE_DECREASE_GAP)
            return;
        uint64_t base = moat_ssbwe_estimate(e);
        e->loss_bps = clamp_bps((double)base * (1.0 - 0.5 * e->loss_fraction));
        e->last_loss_cut_us = now_us ? now_us : 1;
    } else if (e->loss_fraction < 0.02) {
        e->loss_bps = e->delay_bps;
    }
}

/* ---- AIMD ---- */

static void update_rate(moat_ssbwe *e, uint64_t now_us)
{
    double dt = e->last_update_us ? (double)(now_us - e->last_update_us) / 1e6 : 0;
    if (dt > 1.0)
        dt = 1.0;
    e->last_update_us = now_us;
    if (e->usage == MOAT_SSBWE_OVERUSING) {
        if (e->last_decrease_us == 0 || now_us - e->last_decrease_us >= MOAT_SSBWE_DECREASE_GAP) {
            double base = e->recent_acked_bps ? (double)e->recent_acked_bps
                          : e->acked_bps      ? (double)e->acked_bps
                                              : (double)e->delay_bps;
            uint64_t cut = clamp_bps(base * DECREASE_FACTOR);
            if (cut < e->delay_bps)
                e->delay_bps = cut;
            e->last_decrease_us = now_us;
            e->stats.overuse_events++;
        }
        return;
    }
    if (e->usage == MOAT_SSBWE_UNDERUSING)
        return; /* hold: the queues drain */
    double grown = (double)e->delay_bps * (1.0 + INCREASE_PER_S * dt);
    if (e->acked_bps) {
        double cap = 1.5 * (double)e->acked_bps + 10000.0;
        if (grown > cap)
            grown = cap > (double)e->delay_bps ? cap : (double)e->delay_bps;
    }
    e->delay_bps = clamp_bps(grown);
}

/* A packet reported not received before one received in the same
 * feedback (index received_after - 1): queued once for the caller's
 * repair. Probe padding needs none. */
static void note_lost(moat_ssbwe *e, long slot, size_t i, size_t received_after)
{
    if (i >= received_after || (e->flags[slot] & (LOST | PROBE)))
        return;
    e->flags[slot] |= LOST;
    if (e->n_lost < MOAT_SSBWE_LOST_QUEUE)
        e->lost[e->n_lost++] = e->seq_of[slot];
}

void moat_ssbwe_on_feedback(moat_ssbwe *e, uint16_t base_seq, const int64_t *arrival_us, size_t n,
                            uint64_t now_us)
{
    e->stats.feedbacks++;
    size_t received_after = 0; /* one past the last status received */
    for (size_t i = 0; i < n; i++)
        received_after = arrival_us[i] >= 0 ? i + 1 : received_after;
    for (size_t i = 0; i < n; i++) {
        uint16_t seq = (uint16_t)(base_seq + i);
        long slot = known_slot(e, seq);
        if (slot < 0) {
            e->stats.ignored++;
            continue;
        }
        bool probe = (e->flags[slot] & PROBE) != 0;
        if (arrival_us[i] < 0) {
            e->stats.packets_lost++;
            e->loss_lost++;
            note_lost(e, slot, i, received_after);
            if (probe && e->probe_have_first)
                on_probe_packet(e, -1, 0);
            continue;
        }
        e->flags[slot] |= ACKED;
        e->stats.packets_acked++;
        e->loss_received++;
        on_arrival(e, e->send_us[slot], arrival_us[i]);
        on_acked_bytes(e, arrival_us[i], e->size[slot]);
        if (probe && e->probe_have_first)
            on_probe_packet(e, arrival_us[i], e->size[slot]);
    }
    judge_loss(e, now_us);
    update_rate(e, now_us);
    bool covered = n > 0 && (int16_t)(uint16_t)(base_seq + n - 1 - e->probe_last_seq) >= 0;
    if (e->probe_have_first && !e->probing && e->probe_started_us &&
        (covered || now_us - e->probe_started_us >= PROBE_JUDGE_US))
        judge_probe(e);
}

size_t moat_ssbwe_take_lost(moat_ssbwe *e, uint16_t *out, size_t capacity)
{
    size_t n = e->n_lost < capacity ? e->n_lost : capacity;
    memcpy(out, e->lost, n * sizeof *out);
    memmove(e->lost, e->lost + n, (e->n_lost - n) * sizeof *out);
    e->n_lost = (uint8_t)(e->n_lost - n);
    return n;
}

int64_t moat_ssbwe_sent_us(const moat_ssbwe *e, uint16_t seq)
{
    long slot = sent_slot(e, seq);
    return slot >= 0 ? e->send_us[slot] : -1;
}

uint64_t moat_ssbwe_estimate(const moat_ssbwe *e)
{
    return e->delay_bps < e->loss_bps ? e->delay_bps : e->loss_bps;
}

void moat_ssbwe_probe_start(moat_ssbwe *e, uint64_t target_bps, uint64_t now_us)
{
    e->probing = true;
    e->probe_target_bps = target_bps;
    e->probe_started_us = now_us ? now_us : 1;
    e->probe_have_first = false;
    e->probe_bytes_acked = 0;
    e->probe_acked = e->probe_lost = 0;
    e->probe_first_size = 0;
    e->probe_overuse = false;
}

void moat_ssbwe_probe_end(moat_ssbwe *e, uint64_t now_us)
{
    if (!e->probing)
        return;
    e->probing = false;
    e->probe_last_seq = (uint16_t)(e->next_seq - 1);
    /* Judged once its feedback had time to come (on_feedback). */
    e->probe_started_us = now_us ? now_us : 1;
    if (!e->probe_have_first) {
        e->probe_result = -1;
        e->stats.probes_failed++;
        e->probe_started_us = 0;
    }
}

int moat_ssbwe_take_probe_result(moat_ssbwe *e)
{
    int result = e->probe_result;
    e->probe_result = 0;
    return result;
}

moat_ssbwe_usage moat_ssbwe_usage_now(const moat_ssbwe *e)
{
    return e->usage;
}
