/* The media phase of bench/voip: every ready call's two sides send 172-byte
 * G.711 RTP every 20 ms through the relay, paced as real phones (the 2N
 * streams spread evenly over the period, sent in 100 us slices), on one
 * socket with sendmmsg/recvmmsg; per-direction loss counted over a window
 * after a warm-up (a packet more than 150 ms late counts as lost). Owns its socket and counters for
 * the run's duration. */
#ifndef RTP_MEDIA_H
#define RTP_MEDIA_H

#include "voip_load.h"

#include <stdint.h>
#include <sys/types.h>

typedef struct {
    voip_call *calls;
    unsigned n;
    uint16_t port; /* every side receives on its own address, this port */
    double warmup_s, measure_s, drain_s;
    pid_t relay_pid; /* 0: no relay CPU figure */
    int progress;    /* a line a second on stderr */
} media_plan;

typedef struct {
    uint64_t sent, send_errors, received, stray;
    uint64_t late; /* in the window but over 150 ms late: counted lost */
    uint64_t window_sent, window_received;
    double worst_loss;   /* the worst call direction over the window */
    unsigned worst_call; /* which: the call, and the side that sent */
    unsigned worst_side;
    unsigned directions_over; /* call directions with loss >= 1% */
    unsigned calls_over;      /* calls with either direction over */
    double relay_cpu;         /* the relay's CPU over the window, in cores */
    double generator_cpu;     /* ours, in cores */
    double max_lag_ms;        /* how far sending fell behind its schedule */
    double latency_mean_us, latency_max_us;
} media_result;

/* Binds the media socket; 0 on success, -1 with errno. */
int rtp_media_open(uint16_t port);

/* Runs the phase on the socket from rtp_media_open; 0 on success. */
int rtp_media_run(int fd, const media_plan *plan, media_result *out);

#endif
