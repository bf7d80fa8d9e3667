/* The forged-packet source of bench/paced: IPv4/UDP datagrams built by hand
 * on a raw socket (IP_HDRINCL), so they arrive on a live call's nominated
 * 5-tuple, paced evenly (a slice every 100 us) as a real flood arrives, not
 * in bursts. Forged SRTP with the call's live SSRC and sequence numbers just
 * ahead of the live stream. Refuses destinations outside loopback and
 * private networks; the run is bounded in time and packets. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH       64
#define SLICE_NS    100000ull
#define MAX_SIZE    1400
#define MAX_SECONDS 60.0
#define MAX_PACKETS 20000000ull

typedef struct {
    struct in_addr src, dst;
    uint16_t sport, dport;
    uint32_t ssrc;
    long seq_base; /* -1: random sequence numbers */
    double seq_rate, rate, seconds;
    unsigned ahead, size;
    int cpu;
} options;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int allowed(struct in_addr address)
{
    uint32_t a = ntohl(address.s_addr);
    return (a >> 24) == 127 || (a >> 24) == 10 || (a >> 20) == (172 << 4 | 1) ||
           (a >> 16) == (192 << 8 | 168) || (a >> 8) == (192u << 16 | 0 << 8 | 2);
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){.seq_base = -1,
                   .seq_rate = 50,
                   .rate = 20000,
                   .seconds = 3,
                   .ahead = 24,
                   .size = 172,
                   .cpu = -1};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--src") && inet_pton(AF_INET, v, &o->src) == 1)
            continue;
        if (!strcmp(k, "--dst") && inet_pton(AF_INET, v, &o->dst) == 1)
            continue;
        if (!strcmp(k, "--sport"))
            o->sport = (uint16_t)atoi(v);
        else if (!strcmp(k, "--dport"))
            o->dport = (uint16_t)atoi(v);
        else if (!strcmp(k, "--ssrc"))
            o->ssrc = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(k, "--seq-base"))
            o->seq_base = atol(v);
        else if (!strcmp(k, "--seq-rate"))
            o->seq_rate = atof(v);
        else if (!strcmp(k, "--rate"))
            o->rate = atof(v);
        else if (!strcmp(k, "--seconds"))
            o->seconds = atof(v);
        else if (!strcmp(k, "--ahead"))
            o->ahead = (unsigned)atoi(v);
        else if (!strcmp(k, "--size"))
            o->size = (unsigned)atoi(v);
        else if (!strcmp(k, "--cpu"))
            o->cpu = atoi(v);
        else
            return -1;
    }
    if (!o->sport || !o->dport || o->size < 12 || o->size > MAX_SIZE || o->ahead == 0 ||
        o->rate <= 0 || o->seconds <= 0 || o->seconds > MAX_SECONDS || !allowed(o->dst) ||
        !o->src.s_addr)
        return -1;
    return 0;
}

static void build(const options *o, uint8_t *packet)
{
    struct iphdr *ip = (struct iphdr *)packet;
    struct udphdr *udp = (struct udphdr *)(packet + sizeof *ip);
    uint8_t *rtp = packet + sizeof *ip + sizeof *udp;
    memset(packet, 0, sizeof *ip + sizeof *udp);
    ip->version = 4;
    ip->ihl = 5;
    ip->ttl = 64;
    ip->protocol = IPPROTO_UDP;
    ip->saddr = o->src.s_addr;
    ip->daddr = o->dst.s_addr;
    ip->tot_len = htons((uint16_t)(sizeof *ip + sizeof *udp + o->size));
    udp->source = htons(o->sport);
    udp->dest = htons(o->dport);
    udp->len = htons((uint16_t)(sizeof *udp + o->size));
    udp->check = 0; /* IPv4 allows none; the kernel fills the IP checksum */
    rtp[0] = 0x80;
    rtp[1] = 111;
    uint32_t ssrc = htonl(o->ssrc);
    memcpy(rtp + 8, &ssrc, 4);
    for (unsigned i = 12; i < o->size; i++)
        rtp[i] = (uint8_t)rand();
}

int main(int argc, char **argv)
{
    options o;
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: paced_spoof --src A --sport P --dst A --dport P --ssrc N "
                        "[--seq-base S --seq-rate PPS --ahead N] [--rate PPS] [--seconds S] "
                        "[--size B] [--cpu N]  (private/loopback destinations only)\n");
        return 2;
    }
    if (o.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(o.cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    int fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
    int on = 1;
    if (fd < 0 || setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &on, sizeof on) != 0) {
        fprintf(stderr, "raw socket: %s\n", strerror(errno));
        return 1;
    }
    static uint8_t packets[BATCH][MAX_SIZE + 28];
    struct iovec vectors[BATCH];
    struct mmsghdr headers[BATCH];
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr = o.dst};
    for (int i = 0; i < BATCH; i++) {
        build(&o, packets[i]);
        vectors[i] = (struct iovec){packets[i], 28 + o.size};
        headers[i] = (struct mmsghdr){.msg_hdr = {.msg_name = &to,
                                                  .msg_namelen = sizeof to,
                                                  .msg_iov = &vectors[i],
                                                  .msg_iovlen = 1}};
    }
    uint64_t start = now_ns(), end = start + (uint64_t)(o.seconds * 1e9), sent = 0, failed = 0;
    for (uint64_t slice = start; sent < MAX_PACKETS; slice += SLICE_NS) {
        uint64_t t = now_ns();
        if (t >= end)
            break; /* a sender that cannot keep up still stops on time */
        if (t < slice) {
            struct timespec pause = {0, (long)(slice - t)};
            nanosleep(&pause, NULL);
            t = slice;
        }
        if (slice + SLICE_NS < t)
            slice = t; /* behind: pace from now on */
        double elapsed = (t - start) / 1e9;
        uint64_t due = (uint64_t)(elapsed * o.rate);
        while (sent < due) {
            unsigned n = due - sent > BATCH ? BATCH : (unsigned)(due - sent);
            long live = o.seq_base + (long)(elapsed * o.seq_rate);
            for (unsigned i = 0; i < n; i++) {
                uint16_t seq = o.seq_base >= 0 ? (uint16_t)(live + 1 + (sent + i) % o.ahead)
                                               : (uint16_t)rand();
                uint8_t *rtp = packets[i] + 28;
                rtp[2] = (uint8_t)(seq >> 8);
                rtp[3] = (uint8_t)seq;
                uint32_t ts = htonl((uint32_t)(sent + i));
                memcpy(rtp + 4, &ts, 4);
            }
            int done = sendmmsg(fd, headers, n, 0);
            if (done <= 0) {
                failed += n;
                sent += n;
                continue;
            }
            sent += (unsigned)done;
        }
    }
    double took = (now_ns() - start) / 1e9;
    printf("{\"sent\": %llu, \"failed\": %llu, \"seconds\": %.3f}\n", (unsigned long long)sent,
           (unsigned long long)failed, took);
    close(fd);
    return 0;
}
