/* One timed bulk transfer between two processes: a sender that keeps its
 * transport full and a receiver that measures what arrives. Each side runs in
 * a child of its own (so each has its own SCTP stack, clock and core), the
 * receiver reports through a pipe, and the parent ends both. */
#ifndef BENCH_DATACHANNEL_TRANSFER_RUN_H
#define BENCH_DATACHANNEL_TRANSFER_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t message_size;
    bool ordered;    /* data channels only */
    size_t sctp_mtu; /* data channels only: SCTP packet size, 0 for the default */
    /* Data channels only: path MTU discovery (RFC 8899) on both ends, up to
     * this SCTP packet size; 0 for none (sctp_mtu then applies). */
    size_t plpmtud_max;
    double warmup_s;  /* after the first message, before measuring */
    double window_s;  /* how long the receiver measures */
    double timeout_s; /* a side that is not done by then gives up */
} transfer_params;

typedef struct {
    bool measured;
    double megabytes_per_second; /* payload, 10^6 bytes */
    uint64_t messages;           /* received inside the window */
    char detail[96];             /* what went wrong, or what was negotiated */
    /* Data channels: the receiver's SCTP packet size at the end of its
     * window (what discovery found, or the fixed size). */
    uint32_t sctp_packet;
} transfer_result;

/* What the receiver counts: messages inside [first + warmup, + window]. */
typedef struct {
    double warmup_s, window_s;
    double first_s; /* < 0 until the first message */
    uint64_t bytes, messages;
    bool closed;
} transfer_window;

void transfer_window_init(transfer_window *w, const transfer_params *params);

/* One message of length bytes received at now_s; true once the window is
 * over (the result is then final). */
bool transfer_window_add(transfer_window *w, double now_s, size_t length);

/* Fills result from a closed window. */
void transfer_window_result(const transfer_window *w, transfer_result *result);

/* A side of a transfer, run in its own process; it returns when done or
 * past params->timeout_s. The receiver fills result; the sender's is
 * ignored. */
typedef void (*transfer_side)(void *arg, transfer_result *result);

/* Runs receiver and sender in two child processes and returns the
 * receiver's result (measured false, with a reason in detail, when it has
 * none within timeout_s). */
void transfer_run(transfer_side sender, void *sender_arg, transfer_side receiver,
                  void *receiver_arg, double timeout_s, transfer_result *result);

/* CLOCK_MONOTONIC in seconds. */
double transfer_now_s(void);

#endif
