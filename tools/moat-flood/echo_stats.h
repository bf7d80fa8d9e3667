/* What one session measures from the packets its echoing endpoint returns:
 * loss (sent against echoed), interarrival jitter of the echoed stream (RFC
 * 3550 A.8, through the gateway's receive statistics) and round-trip time
 * from the probe each packet carries; and, as a real receiver does, the
 * reception report block on the echoed stream (RFC 3550 §6.4.1) with the
 * endpoint's last sender report (LSR/DLSR), from which the endpoint learns
 * the round-trip time. */
#ifndef ECHO_STATS_H
#define ECHO_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "rtp/rtp_receive_stats.h"

typedef struct {
    uint64_t sent;     /* legitimate RTP packets handed to the kernel */
    uint64_t received; /* echoes authenticated and carrying our probe */
    uint64_t rtt_samples;
    double rtt_sum_ms, rtt_min_ms, rtt_max_ms;
    uint32_t clock_rate;
    bool stream_started;
    moat_rtp_receive_stats stream;
    uint64_t unprotect_failures; /* datagrams from the endpoint that did not authenticate */
    uint64_t rtcp_received;
    uint64_t sender_reports; /* the endpoint's SRs on the echoed stream */
} echo_stats;

void echo_stats_init(echo_stats *e, uint32_t clock_rate);
void echo_stats_on_sent(echo_stats *e);
/* One echoed packet: its header fields, its probe's send time, now. */
void echo_stats_on_echo(echo_stats *e, uint32_t ssrc, uint16_t sequence, uint32_t timestamp,
                        uint64_t sent_us, uint64_t now_us);

/* A sender report from the endpoint (its SSRC, NTP timestamp), received at
 * now_us: kept for the next report block when it describes the echoed
 * stream (the SSRC of the echoes); false, and ignored, otherwise (another
 * SSRC, or before the first echo). */
bool echo_stats_on_sender_report(echo_stats *e, uint32_t ssrc, uint64_t ntp_timestamp,
                                 uint64_t now_us);
/* Fills a reception report block on the echoed stream at now_us (loss,
 * jitter, highest sequence, LSR/DLSR of the last sender report; LSR 0
 * before one arrived) and starts a new reporting interval; false, *out
 * untouched, before the first echo. */
bool echo_stats_report_block(echo_stats *e, uint64_t now_us, moat_rtcp_report_block *out);

/* Fraction of sent packets that never came back (0 when nothing was sent). */
double echo_stats_loss(const echo_stats *e);
double echo_stats_jitter_ms(const echo_stats *e);
/* Mean RTT; negative when no echo came back. */
double echo_stats_rtt_mean_ms(const echo_stats *e);

#endif
