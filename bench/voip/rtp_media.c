/* bench/voip's media: the paced sender (a global schedule of 2N streams,
 * one packet every 20 ms / 2N), the receiver that maps a datagram's
 * destination address back to its call and side, and the loss window. */
#include "rtp_media.h"

#include <arpa/inet.h>
#include <errno.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define BATCH     64
#define PACKET    172 /* 12-byte RTP header + 160 bytes of PCMU */
#define PERIOD_NS 20000000ull
#define SLICE_NS  200000ull
#define SSRC_BASE 0x5a000000u
#define LATE_US   150000.0 /* ITU-T G.114's one-way delay budget */

typedef struct {
    const media_plan *plan;
    int fd;
    unsigned endpoints;
    uint32_t *seq;       /* next sequence number, per sending endpoint */
    uint32_t *win_start; /* the window's first sequence number, per sender */
    uint32_t *win_end;
    uint32_t *received; /* in-window packets received, per sender */
    int window_open, window_closed;
    uint64_t t0, next_k;
    double latency_sum;
    media_result *out;
} media;

typedef struct {
    struct mmsghdr msg[BATCH];
    struct iovec iov[BATCH];
    unsigned char data[BATCH][PACKET + 64];
    unsigned char control[BATCH][CMSG_SPACE(sizeof(struct in_pktinfo))];
    struct sockaddr_in from[BATCH];
} batch;

int rtp_media_open(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int one = 1, rcv = 64 << 20, snd = 16 << 20;
    setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
    /* DF set: an unconnected socket then skips the per-packet IP ID hash. */
    int pmtu = IP_PMTUDISC_DO;
    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof rcv);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof snd);
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (bind(fd, (struct sockaddr *)&any, sizeof any) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

static double cpu_seconds_of(pid_t pid)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    char *p = strrchr(text, ')');
    unsigned long utime = 0, stime = 0;
    if (!p ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
        return 0;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static double own_cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static uint64_t scheduled_ns(const media *m, uint64_t k)
{
    return m->t0 + k * PERIOD_NS / m->endpoints;
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Fills slot `j` of `b` with endpoint e's next packet. */
static void build(media *m, batch *b, unsigned j, unsigned e, uint64_t now)
{
    unsigned n = m->plan->n, index = e % n, side = e / n;
    unsigned char *p = b->data[j];
    uint32_t seq = m->seq[e];
    p[0] = 0x80, p[1] = 0, p[2] = (unsigned char)(seq >> 8), p[3] = (unsigned char)seq;
    put32(p + 4, seq * 160u);
    put32(p + 8, SSRC_BASE + e);
    memcpy(p + 12, &now, sizeof now);
    b->iov[j] = (struct iovec){p, PACKET};
    struct cmsghdr *c = (struct cmsghdr *)b->control[j];
    c->cmsg_level = IPPROTO_IP, c->cmsg_type = IP_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof(struct in_pktinfo));
    struct in_pktinfo info = {.ipi_spec_dst = voip_side_address(index, side)};
    memcpy(CMSG_DATA(c), &info, sizeof info);
    b->msg[j].msg_hdr = (struct msghdr){.msg_name = &m->plan->calls[index].to_relay[side],
                                        .msg_namelen = sizeof(struct sockaddr_in),
                                        .msg_iov = &b->iov[j],
                                        .msg_iovlen = 1,
                                        .msg_control = b->control[j],
                                        .msg_controllen = sizeof b->control[j]};
}

/* Sends every packet whose time has come, BATCH at a time. */
static void send_due(media *m, batch *b, uint64_t now)
{
    uint64_t due = (now - m->t0) * m->endpoints / PERIOD_NS + 1;
    unsigned cap = m->endpoints < BATCH ? m->endpoints : BATCH;
    if (m->next_k < due && m->window_open && !m->window_closed) {
        double lag = (double)(now - scheduled_ns(m, m->next_k)) / 1e6;
        if (lag > m->out->max_lag_ms)
            m->out->max_lag_ms = lag;
    }
    while (m->next_k < due) {
        unsigned count = 0, ends[BATCH];
        uint64_t k = m->next_k, ks[BATCH];
        for (; k < due && count < cap; k++) {
            unsigned e = (unsigned)(k % m->endpoints);
            if (m->plan->calls[e % m->plan->n].state != CALL_READY)
                continue;
            ks[count] = k, ends[count] = e;
            build(m, b, count++, e, now);
        }
        int sent = count ? sendmmsg(m->fd, b->msg, count, 0) : 0;
        if (sent < 0) {
            m->out->send_errors++;
            return; /* the socket is full: try again next slice */
        }
        for (int j = 0; j < sent; j++)
            m->seq[ends[j]]++;
        m->out->sent += (uint64_t)sent;
        m->next_k = (unsigned)sent < count ? ks[sent] : k;
        if ((unsigned)sent < count)
            return;
    }
}

static void count_packet(media *m, const unsigned char *p, size_t len, struct in_addr to)
{
    unsigned n = m->plan->n, index, side;
    m->out->received++;
    if (len != PACKET || voip_address_side(to, n, &index, &side) < 0) {
        m->out->stray++;
        return;
    }
    unsigned from = (1 - side) * n + index;
    if (get32(p + 8) != SSRC_BASE + from) {
        m->out->stray++;
        return;
    }
    if (!m->window_open)
        return;
    uint16_t offset = (uint16_t)((unsigned)(p[2] << 8 | p[3]) - m->win_start[from]);
    uint32_t span = (m->window_closed ? m->win_end[from] : m->seq[from]) - m->win_start[from];
    if (offset >= span)
        return;
    uint64_t sent_at;
    memcpy(&sent_at, p + 12, sizeof sent_at);
    double us = (double)(voip_now_ns() - sent_at) / 1e3;
    if (us > m->out->latency_max_us)
        m->out->latency_max_us = us;
    if (us > LATE_US) {
        m->out->late++; /* a phone's jitter buffer would have dropped it */
        return;
    }
    m->received[from]++;
    m->latency_sum += us;
}

/* Reads until the socket is empty or `limit` batches went by. */
static void receive(media *m, batch *b, unsigned limit)
{
    for (unsigned round = 0; round < limit; round++) {
        for (unsigned j = 0; j < BATCH; j++) {
            b->iov[j] = (struct iovec){b->data[j], sizeof b->data[j]};
            b->msg[j].msg_hdr = (struct msghdr){.msg_name = &b->from[j],
                                                .msg_namelen = sizeof b->from[j],
                                                .msg_iov = &b->iov[j],
                                                .msg_iovlen = 1,
                                                .msg_control = b->control[j],
                                                .msg_controllen = sizeof b->control[j]};
        }
        int got = recvmmsg(m->fd, b->msg, BATCH, MSG_DONTWAIT, NULL);
        if (got <= 0)
            return;
        for (int j = 0; j < got; j++) {
            struct msghdr *h = &b->msg[j].msg_hdr;
            struct in_addr to = {0};
            for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
                if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
                    struct in_pktinfo info;
                    memcpy(&info, CMSG_DATA(c), sizeof info);
                    to = info.ipi_addr;
                }
            }
            count_packet(m, b->data[j], b->msg[j].msg_len, to);
        }
        if (got < BATCH)
            return;
    }
}

static void mark_window(media *m, uint32_t *into)
{
    memcpy(into, m->seq, m->endpoints * sizeof *m->seq);
}

static void loss_summary(media *m)
{
    media_result *out = m->out;
    unsigned n = m->plan->n;
    for (unsigned i = 0; i < n; i++) {
        if (m->plan->calls[i].state != CALL_READY)
            continue;
        int over = 0;
        for (unsigned side = 0; side < 2; side++) {
            unsigned e = side * n + i;
            uint32_t sent = m->win_end[e] - m->win_start[e];
            uint32_t got = m->received[e] < sent ? m->received[e] : sent;
            double loss = sent ? 1.0 - (double)got / sent : 1.0;
            out->window_sent += sent;
            out->window_received += got;
            if (loss > out->worst_loss) {
                out->worst_loss = loss;
                out->worst_call = i, out->worst_side = side;
            }
            if (loss >= 0.01)
                out->directions_over++, over = 1;
        }
        out->calls_over += (unsigned)over;
    }
    if (out->window_received)
        out->latency_mean_us = m->latency_sum / (double)out->window_received;
}

static void progress(const media *m, uint64_t now)
{
    fprintf(stderr, "voip_load: media t=%.1fs sent=%llu received=%llu lag_max=%.2fms%s\n",
            (double)(now - m->t0) / 1e9, (unsigned long long)m->out->sent,
            (unsigned long long)m->out->received, m->out->max_lag_ms,
            m->window_closed ? " (draining)"
            : m->window_open ? " (measuring)"
                             : " (warm-up)");
}

static void loop(media *m, batch *b)
{
    const media_plan *plan = m->plan;
    uint64_t open_at = m->t0 + (uint64_t)(plan->warmup_s * 1e9);
    uint64_t close_at = open_at + (uint64_t)(plan->measure_s * 1e9);
    uint64_t end = close_at + (uint64_t)(plan->drain_s * 1e9), next_report = m->t0 + 1000000000;
    double relay0 = 0, own0 = 0, window_s = 0;
    for (uint64_t now = voip_now_ns(); now < end; now = voip_now_ns()) {
        if (!m->window_open && now >= open_at) {
            mark_window(m, m->win_start);
            m->window_open = 1;
            relay0 = plan->relay_pid ? cpu_seconds_of(plan->relay_pid) : 0;
            own0 = own_cpu_seconds();
            window_s = (double)now;
        }
        if (!m->window_closed && (now >= close_at || now + SLICE_NS >= end)) {
            mark_window(m, m->win_end);
            m->window_closed = 1;
            window_s = ((double)now - window_s) / 1e9;
            if (plan->relay_pid)
                m->out->relay_cpu = (cpu_seconds_of(plan->relay_pid) - relay0) / window_s;
            m->out->generator_cpu = (own_cpu_seconds() - own0) / window_s;
        }
        if (!m->window_closed)
            send_due(m, b, now);
        receive(m, b, 1024);
        if (plan->progress && now >= next_report) {
            progress(m, now);
            next_report += 1000000000;
        }
        /* Sleep to the next slice whatever arrives meanwhile: one wake-up
         * per slice, the socket's buffer holds what came in. */
        uint64_t wake = now + SLICE_NS;
        struct timespec at = {.tv_sec = (time_t)(wake / 1000000000ull),
                              .tv_nsec = (long)(wake % 1000000000ull)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
    }
}

int rtp_media_run(int fd, const media_plan *plan, media_result *out)
{
    *out = (media_result){0};
    media m = {.plan = plan, .fd = fd, .endpoints = 2 * plan->n, .out = out};
    m.seq = calloc(m.endpoints, sizeof *m.seq);
    m.win_start = calloc(m.endpoints, sizeof *m.win_start);
    m.win_end = calloc(m.endpoints, sizeof *m.win_end);
    m.received = calloc(m.endpoints, sizeof *m.received);
    batch *b = calloc(1, sizeof *b);
    int ok = m.seq && m.win_start && m.win_end && m.received && b && plan->n;
    if (ok) {
        memset(b->data, 0xff, sizeof b->data); /* PCMU silence */
        prctl(PR_SET_TIMERSLACK, 1UL);
        m.t0 = voip_now_ns();
        loop(&m, b);
        loss_summary(&m);
    }
    free(b);
    free(m.received);
    free(m.win_end);
    free(m.win_start);
    free(m.seq);
    return ok ? 0 : -1;
}
