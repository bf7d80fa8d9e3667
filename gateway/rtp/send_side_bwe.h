/* Sender-side bandwidth estimation from transport-wide feedback, in the
 * spirit of Google congestion control (draft-ietf-rmcat-gcc-02):
 *
 *  - every packet sent to the peer gets a transport-wide sequence number
 *    and its send time and size are remembered (moat_ssbwe_on_send);
 *  - the peer's feedback (transport_cc.h, RTPFB FMT 15) gives arrival
 *    times; packets are grouped in 5 ms send bursts, the inter-group delay
 *    variation feeds a trendline filter whose slope an adaptive-threshold
 *    overuse detector judges (overusing, normal, underusing);
 *  - AIMD rate control: overuse cuts the rate to 0.85 x the acknowledged
 *    (received) bitrate of the last 150 ms (the bottleneck's own rate while
 *    its queue stands; a half-second window would still hold the wider
 *    path's arrivals and need a second cut), normal grows it 8 % a second, capped by 1.5 x
 *    the acknowledged bitrate (growth beyond that needs a probe); pauses
 *    in what was sent do not count as a low acknowledged bitrate;
 *  - a loss-based bound: loss above 10 % cuts it by half the loss, under
 *    2 % it follows the delay-based estimate;
 *  - a probe (padding sent at a target rate for a short window, marked on
 *    send) whose packets arrive at about that rate without loss lifts the
 *    estimate to the delivered rate.
 *
 * Pure state and arithmetic, no I/O, no clock of its own: the caller
 * passes times in µs. One owner, one thread (the session's worker). The
 * feedback is the peer's input: sequence numbers not in the send history
 * (never sent, too old, already acknowledged) are ignored, so a hostile
 * feedback can only say "lost" or "late" about what was really sent. */
#ifndef MOAT_RTP_SEND_SIDE_BWE_H
#define MOAT_RTP_SEND_SIDE_BWE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_SSBWE_HISTORY      4096 /* sequence numbers remembered */
#define MOAT_SSBWE_TRENDLINE    20   /* delay samples in the regression */
#define MOAT_SSBWE_MIN_BPS      50000u
#define MOAT_SSBWE_MAX_BPS      20000000u
#define MOAT_SSBWE_BURST_US     5000u   /* packets sent this close form one group */
#define MOAT_SSBWE_ACKED_WINDOW 500000u /* acknowledged bitrate window (arrival clock) */
/* The recent acknowledged bitrate, for an overuse cut: while the
 * bottleneck's queue stands, what arrived in this window is its rate. */
#define MOAT_SSBWE_RECENT_WINDOW  150000u
#define MOAT_SSBWE_LOSS_PACKETS   40      /* loss judged over at least this many */
#define MOAT_SSBWE_DECREASE_GAP   300000u /* between two delay-based cuts */
#define MOAT_SSBWE_PROBE_MIN_PKTS 8
#define MOAT_SSBWE_LOST_QUEUE     64

typedef enum {
    MOAT_SSBWE_NORMAL = 0,
    MOAT_SSBWE_OVERUSING,
    MOAT_SSBWE_UNDERUSING,
} moat_ssbwe_usage;

typedef struct {
    uint64_t packets_sent, packets_acked, packets_lost;
    uint64_t feedbacks, ignored; /* statuses for unknown or repeated seqs */
    uint64_t overuse_events, probes_confirmed, probes_failed;
} moat_ssbwe_stats;

typedef struct {
    /* send history */
    uint16_t next_seq;
    int64_t send_us[MOAT_SSBWE_HISTORY];
    uint16_t size[MOAT_SSBWE_HISTORY];
    uint16_t seq_of[MOAT_SSBWE_HISTORY];
    uint8_t flags[MOAT_SSBWE_HISTORY]; /* SENT, ACKED, PROBE (send_side_bwe.c) */

    /* packet groups (send bursts) */
    bool group_open, have_previous;
    int64_t group_first_send, group_last_send, group_arrival;
    int64_t previous_send, previous_arrival;

    /* trendline and overuse detector */
    int64_t first_arrival;
    double accumulated_ms, smoothed_ms;
    double samples_x[MOAT_SSBWE_TRENDLINE], samples_y[MOAT_SSBWE_TRENDLINE];
    size_t n_samples, sample_at;
    unsigned n_deltas;
    double trend, previous_trend, threshold;
    double overuse_ms;
    unsigned overuse_count;
    int64_t last_threshold_arrival;
    moat_ssbwe_usage usage;

    /* acknowledged bitrate (on the arrival clock) */
    int64_t acked_window_start, acked_last_arrival;
    uint64_t acked_window_bytes;
    uint64_t acked_bps;
    int64_t recent_window_start;
    uint64_t recent_window_bytes;
    uint64_t recent_acked_bps; /* over the last MOAT_SSBWE_RECENT_WINDOW, 0 none */

    /* rates */
    uint64_t delay_bps, loss_bps;
    uint64_t last_update_us, last_decrease_us, last_loss_cut_us;
    unsigned loss_received, loss_lost;
    double loss_fraction;

    /* probe */
    bool probing;
    uint64_t probe_target_bps;
    uint64_t probe_started_us;
    uint16_t probe_first_seq, probe_last_seq;
    bool probe_have_first;
    uint64_t probe_bytes_acked;
    unsigned probe_acked, probe_lost;
    int64_t probe_first_arrival, probe_last_arrival;
    uint64_t probe_first_size;
    bool probe_overuse;
    int probe_result; /* 1 confirmed, -1 failed, 0 none since the last take */

    /* Sequence numbers feedback newly reported lost (each once), for the
     * caller to repair: moat_ssbwe_take_lost. Full: the rest wait for a
     * NACK. */
    uint16_t lost[MOAT_SSBWE_LOST_QUEUE];
    uint8_t n_lost;

    moat_ssbwe_stats stats;
} moat_ssbwe;

void moat_ssbwe_init(moat_ssbwe *e, uint64_t initial_bps);
/* A packet of `bytes` (the whole RTP packet) leaves now; returns the
 * transport-wide sequence number to stamp on it. `probe`: sent for the
 * current probe (padding). */
uint16_t moat_ssbwe_on_send(moat_ssbwe *e, size_t bytes, uint64_t now_us, bool probe);
/* One feedback: statuses for base_seq .. base_seq + n - 1, arrival in µs
 * on the peer's clock, -1 not received (transport_cc.h moat_twcc_parse). */
void moat_ssbwe_on_feedback(moat_ssbwe *e, uint16_t base_seq, const int64_t *arrival_us, size_t n,
                            uint64_t now_us);
/* Moves up to `capacity` of the sequence numbers feedback reported lost
 * since the last call (a status "not received" before one received in the
 * same feedback, each reported once) into out; returns how many. */
size_t moat_ssbwe_take_lost(moat_ssbwe *e, uint16_t *out, size_t capacity);
/* When `seq` was sent (µs, the caller's clock); -1 when it is not in the
 * history. */
int64_t moat_ssbwe_sent_us(const moat_ssbwe *e, uint16_t seq);
/* The estimate (bits/s): min(delay-based, loss-based). */
uint64_t moat_ssbwe_estimate(const moat_ssbwe *e);
/* Starts a probe toward target_bps (the caller sends the padding, marked
 * probe); moat_ssbwe_probe_end closes its window: the result is judged when
 * the feedback for its packets has come (moat_ssbwe_take_probe_result). */
void moat_ssbwe_probe_start(moat_ssbwe *e, uint64_t target_bps, uint64_t now_us);
void moat_ssbwe_probe_end(moat_ssbwe *e, uint64_t now_us);
/* 1: the last probe lifted the estimate, -1: it failed (loss, rising
 * delay, delivered far below the target), 0: no new result. Clears it. */
int moat_ssbwe_take_probe_result(moat_ssbwe *e);
/* The overuse detector's verdict, for statistics. */
moat_ssbwe_usage moat_ssbwe_usage_now(const moat_ssbwe *e);

#endif
