/* One session's measurements of its echoed packets: loss, interarrival jitter
 * (RFC 3550 A.8, via the gateway's receive statistics), round-trip time
 * from each packet's probe, and the reception report on the echoed stream. */
#include "echo_stats.h"

#include <string.h>

void echo_stats_init(echo_stats *e, uint32_t clock_rate)
{
    memset(e, 0, sizeof *e);
    e->clock_rate = clock_rate;
}

void echo_stats_on_sent(echo_stats *e)
{
    e->sent++;
}

void echo_stats_on_echo(echo_stats *e, uint32_t ssrc, uint16_t sequence, uint32_t timestamp,
                        uint64_t sent_us, uint64_t now_us)
{
    e->received++;
    double rtt_ms = now_us >= sent_us ? (double)(now_us - sent_us) / 1000.0 : 0.0;
    if (e->rtt_samples == 0 || rtt_ms < e->rtt_min_ms)
        e->rtt_min_ms = rtt_ms;
    if (rtt_ms > e->rtt_max_ms)
        e->rtt_max_ms = rtt_ms;
    e->rtt_sum_ms += rtt_ms;
    e->rtt_samples++;
    if (!e->stream_started) {
        /* Echoes are authenticated by SRTP: no probation. */
        moat_rtp_receive_stats_init(&e->stream, ssrc, 0);
        e->stream_started = true;
    }
    uint32_t arrival = (uint32_t)(now_us * e->clock_rate / 1000000u);
    moat_rtp_receive_stats_update(&e->stream, sequence, timestamp, arrival);
}

bool echo_stats_on_sender_report(echo_stats *e, uint32_t ssrc, uint64_t ntp_timestamp,
                                 uint64_t now_us)
{
    if (!e->stream_started || ssrc != e->stream.ssrc)
        return false;
    moat_rtp_receive_stats_on_sr(&e->stream, ntp_timestamp, now_us);
    e->sender_reports++;
    return true;
}

bool echo_stats_report_block(echo_stats *e, uint64_t now_us, moat_rtcp_report_block *out)
{
    return e->stream_started && moat_rtp_receive_stats_fill_report(&e->stream, now_us, out);
}

double echo_stats_loss(const echo_stats *e)
{
    if (e->sent == 0 || e->received >= e->sent)
        return 0.0;
    return (double)(e->sent - e->received) / (double)e->sent;
}

double echo_stats_jitter_ms(const echo_stats *e)
{
    if (!e->stream_started || e->clock_rate == 0)
        return 0.0;
    /* jitter_q4 keeps the RFC 3550 estimate in 1/16 timestamp units: the
     * finer value matters at 8 kHz, where one unit is 125 us. */
    return (double)e->stream.jitter_q4 / 16.0 * 1000.0 / e->clock_rate;
}

double echo_stats_rtt_mean_ms(const echo_stats *e)
{
    return e->rtt_samples > 0 ? e->rtt_sum_ms / (double)e->rtt_samples : -1.0;
}
