/* What every transport of moat-tunnel shares: the TUN device, the stop
 * request from the signal handler, the figures for progress lines and the
 * summary, and the helpers that move packets between the TUN device and a
 * transport. One thread (the transport's poll loop) owns it all. */
#ifndef TUNNEL_RUN_H
#define TUNNEL_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtls/certificate.h"
#include "tunnel_options.h"
#include "tunnel_source.h"

/* Why a packet did not make it (summary: dropped{reason}). */
typedef enum {
    TUNNEL_LOSS_NOT_CONNECTED = 0, /* from the TUN device before the link was up */
    TUNNEL_LOSS_SEND_FAILED,       /* the transport refused it */
    TUNNEL_LOSS_TUN_WRITE,         /* the TUN device refused a received packet */
    TUNNEL_LOSS_BAD_MESSAGE,       /* received: not binary, empty or over the MTU */
    TUNNEL_LOSS_LANE_FULL,         /* its lane's send buffer was full (other lanes were not) */
    TUNNEL_LOSS_NOT_IP,            /* received: not an IPv4/IPv6 packet whose header fits */
    TUNNEL_LOSS_FOREIGN_SOURCE,    /* received: a source outside the tunnel (tunnel_source.h) */
    TUNNEL_LOSS_REASON_COUNT,
} tunnel_loss_reason;

typedef struct {
    uint64_t packets_out, bytes_out; /* TUN -> peer */
    uint64_t packets_in, bytes_in;   /* peer -> TUN */
    uint64_t lost[TUNNEL_LOSS_REASON_COUNT];
    uint64_t keepalives_sent, keepalives_answered;
    uint64_t reconnects;
    uint64_t refused;               /* baselines' --listen: strangers refused before the peer */
    uint64_t hello_verify_requests; /* udp --listen: cookies sent (dtls/dtls_listen.h) */
    unsigned lanes;                 /* sctp: the lanes the figures above sum */
    uint64_t lane_packets_out[8];   /* sctp: TUN -> peer, per lane */
    uint64_t lane_packets_in[8];    /* sctp: peer -> TUN, per lane */
} tunnel_figures;

typedef struct {
    const tunnel_options *options;
    tunnel_source_rule sources; /* what the peer's packets may come from */
    int tun_fd;
    char tun_name[16];
    moat_certificate *certificate;
    tunnel_figures figures;
    double started_s, connected_s; /* connected_s 0 until the link is up */
    double next_progress_s;
    char end_reason[200];
} tunnel_run;

/* The count of SIGINT/SIGTERM received: the run stops at the first; a WHIP
 * request in flight is cancelled when it changes, none is sent after the
 * second (http_guard.h). */
extern volatile sig_atomic_t tunnel_stop_requested;

double tunnel_now_s(void);

/* A packet from the peer goes to the TUN device (counted) when it is an
 * IP packet that run->sources allows; dropped by reason otherwise. */
void tunnel_run_deliver(tunnel_run *run, const uint8_t *packet, size_t length);

/* Reads one packet from the TUN device into buffer (capacity bytes): its
 * length, 0 when none is waiting, -1 on an error. */
long tunnel_run_read_tun(tunnel_run *run, uint8_t *buffer, size_t capacity);

/* A progress line on stderr when one is due. */
void tunnel_run_progress(tunnel_run *run, const char *state);

/* The summary (stdout), once at the end; end="..." has '"' and '\\'
 * escaped. */
void tunnel_run_summary(const tunnel_run *run);

/* Keeps the first reason the run ended for (printable ASCII only: bytes
 * that are not become '?', tool_text.h). */
void tunnel_run_end(tunnel_run *run, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* The transports: each runs its poll loop until the stop request, the
 * end of the session or a failure. 0 for a clean end (signal, the peer
 * closed), -1 for a failure (run->end_reason says why). */
int tunnel_sctp_run(tunnel_run *run);
int tunnel_tls_run(tunnel_run *run);
int tunnel_dtls_run(tunnel_run *run);

#endif
