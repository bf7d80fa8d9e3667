/* What one outgoing RTP stream may spend on retransmissions: it measures the
 * stream's media rate (bytes and packets per second, over one-second windows)
 * and keeps a token bucket of retransmitted bytes filled at a small multiple
 * of that rate. A NACK therefore cannot make the gateway send much more than
 * the stream itself would: one small SRTCP packet used to trigger hundreds of
 * full-size retransmissions, every 10 ms.
 *
 * Plain data, no allocation; owned by the stream, one thread. */
#ifndef MOAT_RETRANSMIT_BUDGET_H
#define MOAT_RETRANSMIT_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Retransmitted bytes per media byte (1: a stream may repair total loss). */
#define MOAT_RETRANSMIT_RATE_FACTOR 1.0
/* Floor of the allowance, bytes per second, for a stream just starting. */
#define MOAT_RETRANSMIT_MIN_RATE 16000.0
/* The bucket holds this many seconds of allowance (a burst loss). */
#define MOAT_RETRANSMIT_BURST_S 0.5
/* Packets answered per RTCP compound packet, whatever its NACKs name. */
#define MOAT_RETRANSMIT_MAX_PER_RTCP 64

typedef struct {
    uint64_t window_start_us;
    uint64_t window_bytes;
    uint32_t window_packets;
    double rate_bytes; /* last complete window, bytes per second */
    double rate_packets;
    double tokens; /* bytes that may be retransmitted now */
    uint64_t refilled_us;
    bool started;
} moat_retransmit_budget;

void moat_retransmit_budget_init(moat_retransmit_budget *b);
/* A media packet of `bytes` was sent at now_us. */
void moat_retransmit_budget_on_send(moat_retransmit_budget *b, size_t bytes, uint64_t now_us);
/* Takes `bytes` from the bucket if it holds them; false (and nothing taken)
 * when the retransmission must be refused. */
bool moat_retransmit_budget_take(moat_retransmit_budget *b, size_t bytes, uint64_t now_us);
/* Returns bytes taken for a retransmission that did not happen after all. */
void moat_retransmit_budget_give_back(moat_retransmit_budget *b, size_t bytes);
/* The stream's media rate, bytes and packets per second: the larger of the
 * last complete window and the current one once it is 200 ms old. */
double moat_retransmit_budget_rate_bytes(const moat_retransmit_budget *b, uint64_t now_us);
double moat_retransmit_budget_rate_packets(const moat_retransmit_budget *b, uint64_t now_us);
/* Bytes per second of the last complete window only (0 before the first):
 * what the stream really sent in one second, not a burst extrapolated. */
double moat_retransmit_budget_window_rate_bytes(const moat_retransmit_budget *b);

#endif
