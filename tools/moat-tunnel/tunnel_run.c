/* Moving packets between the TUN device and a transport, and the figures
 * moat-tunnel reports (tunnel_run.h). */
#include "tunnel_run.h"
#include "tool_text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t tunnel_stop_requested;

static const char *const loss_names[TUNNEL_LOSS_REASON_COUNT] = {
    "not_connected", "send_failed", "tun_write",      "bad_message",
    "lane_full",     "not_ip",      "foreign_source",
};

double tunnel_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void tunnel_run_deliver(tunnel_run *run, const uint8_t *packet, size_t length)
{
    if (length == 0 || length > run->options->mtu) {
        run->figures.lost[TUNNEL_LOSS_BAD_MESSAGE]++;
        return;
    }
    tunnel_source_verdict verdict = tunnel_source_check(&run->sources, packet, length);
    if (verdict != TUNNEL_SOURCE_ALLOWED) {
        run->figures.lost[verdict == TUNNEL_SOURCE_NOT_IP ? TUNNEL_LOSS_NOT_IP
                                                          : TUNNEL_LOSS_FOREIGN_SOURCE]++;
        return;
    }
    if (write(run->tun_fd, packet, length) != (ssize_t)length) {
        run->figures.lost[TUNNEL_LOSS_TUN_WRITE]++;
        return;
    }
    run->figures.packets_in++;
    run->figures.bytes_in += length;
}

long tunnel_run_read_tun(tunnel_run *run, uint8_t *buffer, size_t capacity)
{
    ssize_t n = read(run->tun_fd, buffer, capacity);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    return (long)n;
}

void tunnel_run_end(tunnel_run *run, const char *format, ...)
{
    if (run->end_reason[0])
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(run->end_reason, sizeof run->end_reason, format, args);
    va_end(args);
    /* It may quote a server (a WHIP error's body, a Location): printed on
     * stderr and in the summary, so plain printable text only. */
    tool_text_printable(run->end_reason);
}

void tunnel_run_progress(tunnel_run *run, const char *state)
{
    double now = tunnel_now_s();
    if (run->options->progress_s <= 0 || now < run->next_progress_s)
        return;
    run->next_progress_s = now + run->options->progress_s;
    const tunnel_figures *f = &run->figures;
    fprintf(stderr,
            "moat-tunnel: %.0f s %s out=%llu pkts/%llu B in=%llu pkts/%llu B keepalive=%llu/%llu\n",
            now - run->started_s, state, (unsigned long long)f->packets_out,
            (unsigned long long)f->bytes_out, (unsigned long long)f->packets_in,
            (unsigned long long)f->bytes_in, (unsigned long long)f->keepalives_answered,
            (unsigned long long)f->keepalives_sent);
}

void tunnel_run_summary(const tunnel_run *run)
{
    const tunnel_figures *f = &run->figures;
    double now = tunnel_now_s();
    double up = run->connected_s > 0 ? now - run->connected_s : 0;
    printf("summary transport=%s mode=%s device=%s mtu=%u duration_s=%.1f connected_s=%.1f\n",
           tunnel_transport_name(run->options->transport), tunnel_mode_name(run->options->mode),
           run->tun_name, run->options->mtu, now - run->started_s, up);
    printf("summary packets_out=%llu bytes_out=%llu packets_in=%llu bytes_in=%llu "
           "keepalives_sent=%llu keepalives_answered=%llu reconnects=%llu refused=%llu "
           "hello_verify_requests=%llu\n",
           (unsigned long long)f->packets_out, (unsigned long long)f->bytes_out,
           (unsigned long long)f->packets_in, (unsigned long long)f->bytes_in,
           (unsigned long long)f->keepalives_sent, (unsigned long long)f->keepalives_answered,
           (unsigned long long)f->reconnects, (unsigned long long)f->refused,
           (unsigned long long)f->hello_verify_requests);
    /* The process's CPU time per packet carried (both ways): what bounds
     * the tunnel's rate when the cores, not the path, are the limit. */
    struct rusage usage;
    double cpu_s = 0;
    if (getrusage(RUSAGE_SELF, &usage) == 0)
        cpu_s = (double)usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
                (double)usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
    uint64_t packets = f->packets_out + f->packets_in;
    printf("summary cpu_s=%.2f cpu_us_per_packet=%.1f\n", cpu_s,
           packets ? cpu_s * 1e6 / (double)packets : 0.0);
    if (f->lanes > 0) {
        printf("summary lanes=%u lane_packets_out=", f->lanes);
        for (unsigned i = 0; i < f->lanes && i < 8; i++)
            printf("%s%llu", i ? "," : "", (unsigned long long)f->lane_packets_out[i]);
        printf(" lane_packets_in=");
        for (unsigned i = 0; i < f->lanes && i < 8; i++)
            printf("%s%llu", i ? "," : "", (unsigned long long)f->lane_packets_in[i]);
        printf("\n");
    }
    printf("summary dropped");
    for (int r = 0; r < TUNNEL_LOSS_REASON_COUNT; r++)
        printf(" %s=%llu", loss_names[r], (unsigned long long)f->lost[r]);
    char end[2 * sizeof run->end_reason];
    tool_text_quoted(run->end_reason[0] ? run->end_reason : "stopped", end, sizeof end);
    printf("\nsummary end=\"%s\"\n", end);
    fflush(stdout);
}
