/* Data channel throughput (DESIGN.md: benchmarks print ratios against a
 * baseline measured in the same run).
 *
 * 1. Loopback: one reliable ordered channel (the gateway's SCTP association
 *    over its DTLS transport over UDP) against TLS 1.2 over TCP with the same
 *    cipher suite, for 1 KiB and 16 KiB messages, with native SCTP packets
 *    (path MTU discovery, RFC 8899, up to one 2^14-byte DTLS record: what
 *    loopback and native peers can carry; the size found is printed), with
 *    browser-sized ones (1200 bytes, what browsers use, reported
 *    separately) and with 16384 forced from the start (set_mtu before
 *    connect: usrsctp then also cuts messages into 16 KiB chunks, where
 *    discovery, raising the size once the association is up, bundles
 *    1200-byte chunks into large packets). Each side of a transfer is a
 *    process of its own; the receiver measures payload bytes over a fixed
 *    window after a warm-up.
 * 2. Round-trip times of 7, 71 and 196 ms on a 1 Gbit/s link between two
 *    network namespaces the bench creates (the TUN link emulator, or tc
 *    netem where there is no TUN device): the same SCTP/DTLS channel with
 *    browser-sized packets against TLS/TCP (the kernel's autotuned windows)
 *    over the same link, and at 7 ms once more with path MTU discovery
 *    (the link's 1500-byte MTU bounds it). Root only. The UDP sockets do
 *    not fragment (IP_PMTUDISC_PROBE), as the gateway's do not.
 *
 *    Each row also says how many packets the emulator dropped during each
 *    kind's transfers (queue full, ring full, TUN write refused).
 *
 * `datachannel loopback` or `datachannel link [rtt ms]` runs one part (one
 * round trip). `datachannel one <message bytes> <SCTP packet> [seconds]`
 * runs a single loopback SCTP/DTLS transfer and prints its MB/s (for
 * profiling and A/B runs of two builds); `datachannel one-tls <message
 * bytes> [seconds]` the TLS/TCP one. MOAT_BENCH_CPU=1 makes each side of a
 * data channel transfer print the CPU time it spent per MB of payload
 * (stderr), a figure the machine's load moves far less than MB/s;
 * MOAT_BENCH_NO_GSO=1 sends one message per datagram as the worker did
 * before UDP GSO. MOAT_BENCH_TRACE=1 in the environment makes the SCTP sender
 * print its path every 100 ms (srtt, cwnd, buffers, usrsctp's T3 timeouts,
 * fast retransmissions, retransmitted chunks, max-burst events) and each
 * side its UDP drops, on stderr.
 *
 * The last line is
 *   ratio_vs_tls=X long_rtt_vs_tcp=Y
 * X: SCTP/DTLS over TLS/TCP throughput on loopback, the geometric mean over
 * the message sizes, with the packet size loopback allows (the line before
 * gives the browser-sized figure); Y: SCTP/DTLS over TLS/TCP at 71 ms
 * (0 when not measured). TLS/TCP runs with the namespaces' default socket
 * limits (net.ipv4.tcp_wmem max 4 MiB), which bound it to about 35-40 MB/s
 * at 71 ms on an idle machine, below the 1 Gbit/s link.
 *
 * No figure is judged, but a row whose SCTP/DTLS or TLS/TCP transfers all
 * failed (not skipped to stay within the run's budget), or a link that could
 * not be made as root, makes the bench exit 1, saying so: it measured
 * nothing there. */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_quick.h"
#include "dc_transfer.h"
#include "dtls/certificate.h"
#include "dtls/dtls_context.h"
#include "netns_link.h"
#include "tls_transfer.h"
#include "transfer_run.h"

#define LOOPBACK_WARMUP_S 0.3
#define WINDOW_S          1.5
/* Beyond warm-up and window: handshakes (DTLS, SCTP, DCEP: a few round
 * trips) and slack. A side that is not done by then gives up. */
#define SETUP_ALLOWANCE_S 3.0
#define LINK_MESSAGE_SIZE (16 * 1024)
#define LINK_RATE_BPS     1000000000ull
#define LONG_RTT_MS       71
/* The round trip measured again with path MTU discovery. */
#define DISCOVERY_RTT_MS 7
/* SCTP packet sizes: what browsers use, and one whole DTLS record (the
 * most path MTU discovery probes, or forced). */
#define BROWSER_PACKET 1200
#define NATIVE_PACKET  16384
/* Loopback rows: discovery, browser-sized, forced. */
#define KINDS 3

/* A hard bound on the whole run: transfers that could end past it are
 * skipped (and said so). */
#define RUN_BUDGET_S 170.0
/* Each figure is the mean of this many transfers, SCTP and TLS taking
 * turns, since single runs vary with the machine's load. */
#define ROUNDS 2

static const size_t loopback_sizes[] = {1024, 16 * 1024};
static const unsigned round_trip_ms[] = {7, 71, 196};
static double run_deadline_s;
/* ROUNDS and WINDOW_S, or less in a quick run (bench_quick.h). */
static int rounds = ROUNDS;
static double window_s = WINDOW_S;
/* `link <ms>`: that round trip only (0: all). */
static unsigned only_rtt_ms;

typedef struct {
    moat_certificate *certificate[2]; /* sender, receiver */
    moat_dtls_context *context[2];
} identities;

static int make_identities(identities *ids)
{
    char error[256];
    for (int i = 0; i < 2; i++) {
        ids->certificate[i] = moat_certificate_generate(error, sizeof error);
        ids->context[i] = ids->certificate[i]
                              ? moat_dtls_context_new(ids->certificate[i], error, sizeof error)
                              : NULL;
        if (ids->context[i] == NULL) {
            fprintf(stderr, "bench: %s\n", error);
            return -1;
        }
    }
    return 0;
}

static struct sockaddr_in address_of(const char *ip, uint16_t port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, ip, &a.sin_addr);
    return a;
}

static uint16_t bound_port(int fd)
{
    struct sockaddr_in a;
    socklen_t length = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &length);
    return ntohs(a.sin_port);
}

/* Binds fds[i] to ips[i] on any port and connects each to the other. */
static int pair_udp(const int fds[2], const char *const ips[2])
{
    struct sockaddr_in bound[2];
    for (int i = 0; i < 2; i++) {
        bound[i] = address_of(ips[i], 0);
        if (fds[i] < 0 || bind(fds[i], (struct sockaddr *)&bound[i], sizeof bound[i]) != 0)
            return -1;
        bound[i].sin_port = htons(bound_port(fds[i]));
    }
    for (int i = 0; i < 2; i++)
        if (connect(fds[i], (struct sockaddr *)&bound[1 - i], sizeof bound[1 - i]) != 0)
            return -1;
    return 0;
}

/* Datagrams above the interface MTU fail (EMSGSIZE) instead of being
 * fragmented, as on the gateway's sockets (core/worker.c). */
static void no_fragmentation(const int fds[2])
{
    int probe = IP_PMTUDISC_PROBE;
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            setsockopt(fds[i], IPPROTO_IP, IP_MTU_DISCOVER, &probe, sizeof probe);
}

static void close_pair(const int fds[2])
{
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

static void run_datachannel(const identities *ids, const int udp[2], const transfer_params *params,
                            transfer_result *result)
{
    dc_side sides[2];
    for (int i = 0; i < 2; i++) {
        sides[i] = (dc_side){
            .udp_fd = udp[i],
            .is_sender = i == 0,
            .context = ids->context[i],
            .peer_fingerprint = moat_certificate_fingerprint(ids->certificate[1 - i]),
            .params = *params,
        };
    }
    transfer_run(dc_transfer_side, &sides[0], dc_transfer_side, &sides[1], params->timeout_s,
                 result);
}

static void run_tls(const identities *ids, int client_fd, int listen_fd, const char *server_ip,
                    const transfer_params *params, transfer_result *result)
{
    struct sockaddr_in server = address_of(server_ip, 0);
    memset(result, 0, sizeof *result);
    if (client_fd < 0 || listen_fd < 0 ||
        bind(listen_fd, (struct sockaddr *)&server, sizeof server) != 0 ||
        listen(listen_fd, 1) != 0) {
        snprintf(result->detail, sizeof result->detail, "TCP setup failed");
        return;
    }
    server.sin_port = htons(bound_port(listen_fd));
    tls_side client = {.fd = client_fd, .peer = server, .is_sender = true, .params = *params};
    tls_side listener = {.fd = listen_fd, .certificate = ids->certificate[1], .params = *params};
    transfer_run(tls_transfer_side, &client, tls_transfer_side, &listener, params->timeout_s,
                 result);
}

static void print_failure(const char *what, const transfer_result *r)
{
    if (!r->measured && r->detail[0] != '\0')
        printf("  (%s not measured: %s)\n", what, r->detail);
}

/* The detail of a transfer left out to stay within RUN_BUDGET_S. */
#define BUDGET_SKIP "skipped to stay within"

/* Rows that measured nothing (their transfers all failed, or no link). */
static int unmeasured_rows;

static bool within_budget(const transfer_params *params, transfer_result *result)
{
    memset(result, 0, sizeof *result);
    if (transfer_now_s() + params->timeout_s + 1 <= run_deadline_s)
        return true;
    snprintf(result->detail, sizeof result->detail, BUDGET_SKIP " %.0f s", RUN_BUDGET_S);
    return false;
}

/* Mean of the measured runs; keeps the last failure for the report. */
typedef struct {
    double sum;
    int measured;
    int runs, skipped; /* transfers added; left out for the budget */
    transfer_result failure;
    uint32_t packet_min, packet_max; /* SCTP packet sizes at the runs' ends */
} mean_rate;

static void mean_add(mean_rate *m, const transfer_result *r)
{
    m->runs++;
    if (!r->measured && strncmp(r->detail, BUDGET_SKIP, strlen(BUDGET_SKIP)) == 0)
        m->skipped++;
    if (r->measured) {
        m->sum += r->megabytes_per_second;
        m->measured++;
        if (r->sctp_packet != 0 && (m->packet_min == 0 || r->sctp_packet < m->packet_min))
            m->packet_min = r->sctp_packet;
        if (r->sctp_packet > m->packet_max)
            m->packet_max = r->sctp_packet;
    } else {
        m->failure = *r;
    }
}

static double mean_value(const mean_rate *m)
{
    return m->measured > 0 ? m->sum / m->measured : 0;
}

/* Counts (and says) a row's kind whose transfers ran and all failed. */
static void note_unmeasured(const char *row, const char *what, const mean_rate *m)
{
    if (m->measured > 0 || m->runs == m->skipped)
        return;
    fprintf(stderr, "datachannel: no valid measurement: %s: %s: %s\n", row, what,
            m->failure.detail[0] ? m->failure.detail : "every transfer failed");
    unmeasured_rows++;
}

/* "1432" or "1412-1432": the packet sizes the runs ended with. */
static void packet_text(const mean_rate *m, char *out, size_t size)
{
    if (m->packet_min == m->packet_max)
        snprintf(out, size, "%u", m->packet_max);
    else
        snprintf(out, size, "%u-%u", m->packet_min, m->packet_max);
}

static void loopback_datachannel(const identities *ids, const transfer_params *params,
                                 transfer_result *result)
{
    static const char *const loopback[2] = {"127.0.0.1", "127.0.0.1"};
    if (!within_budget(params, result))
        return;
    int udp[2] = {socket(AF_INET, SOCK_DGRAM, 0), socket(AF_INET, SOCK_DGRAM, 0)};
    no_fragmentation(udp);
    if (pair_udp(udp, loopback) == 0)
        run_datachannel(ids, udp, params, result);
    else
        snprintf(result->detail, sizeof result->detail, "UDP setup failed");
    close_pair(udp);
}

static void loopback_tls(const identities *ids, const transfer_params *params,
                         transfer_result *result)
{
    if (!within_budget(params, result))
        return;
    int tcp[2] = {socket(AF_INET, SOCK_STREAM, 0), socket(AF_INET, SOCK_STREAM, 0)};
    run_tls(ids, tcp[0], tcp[1], "127.0.0.1", params, result);
    close_pair(tcp);
}

/* Geometric means of SCTP/DTLS over TLS/TCP, native and browser-sized
 * packets; -1 when none was measured. */
static void loopback_part(const identities *ids, double *native_ratio, double *browser_ratio)
{
    printf(
        "loopback, one reliable ordered channel against TLS 1.2 over TCP, %s (mean of %d runs)\n",
        TLS_TRANSFER_CIPHER, rounds);
    printf("%-8s %-22s %16s %14s %10s\n", "message", "SCTP packet", "SCTP/DTLS MB/s",
           "TLS/TCP MB/s", "SCTP/TLS");
    double log_sum[KINDS] = {0, 0, 0}; /* discovered, browser, forced */
    int measured[KINDS] = {0, 0, 0};
    char tls_detail[96] = "";
    for (size_t i = 0; i < sizeof loopback_sizes / sizeof loopback_sizes[0]; i++) {
        transfer_params params = {.message_size = loopback_sizes[i],
                                  .ordered = true,
                                  .warmup_s = LOOPBACK_WARMUP_S,
                                  .window_s = window_s,
                                  .timeout_s = LOOPBACK_WARMUP_S + window_s + SETUP_ALLOWANCE_S};
        mean_rate dc[KINDS], tls;
        memset(dc, 0, sizeof dc);
        memset(&tls, 0, sizeof tls);
        for (int round = 0; round < rounds; round++) {
            transfer_result r;
            for (int kind = 0; kind < KINDS; kind++) {
                params.sctp_mtu = kind == 1 ? BROWSER_PACKET : NATIVE_PACKET;
                params.plpmtud_max = kind == 0 ? NATIVE_PACKET : 0;
                loopback_datachannel(ids, &params, &r);
                mean_add(&dc[kind], &r);
            }
            loopback_tls(ids, &params, &r);
            mean_add(&tls, &r);
            if (r.measured)
                snprintf(tls_detail, sizeof tls_detail, "%s", r.detail);
        }
        for (int kind = 0; kind < KINDS; kind++) {
            double ratio = mean_value(&tls) > 0 ? mean_value(&dc[kind]) / mean_value(&tls) : 0;
            const char *kind_name = kind == 0 ? "discovered" : kind == 1 ? "browser" : "forced";
            char packet[32], label[48], what[48];
            packet_text(&dc[kind], packet, sizeof packet);
            snprintf(label, sizeof label, "%s (%s)", packet, kind_name);
            snprintf(what, sizeof what, "SCTP/DTLS (%s)", kind_name);
            printf("%-8s %-22s %16.1f %14.1f %10.3f\n",
                   loopback_sizes[i] == 1024 ? "1 KiB" : "16 KiB", label, mean_value(&dc[kind]),
                   mean_value(&tls), ratio);
            print_failure("SCTP/DTLS", &dc[kind].failure);
            note_unmeasured(loopback_sizes[i] == 1024 ? "loopback 1 KiB" : "loopback 16 KiB", what,
                            &dc[kind]);
            if (ratio > 0) {
                log_sum[kind] += log(ratio);
                measured[kind]++;
            }
        }
        print_failure("TLS/TCP", &tls.failure);
        note_unmeasured(loopback_sizes[i] == 1024 ? "loopback 1 KiB" : "loopback 16 KiB", "TLS/TCP",
                        &tls);
    }
    if (tls_detail[0] != '\0')
        printf("  TLS: %s; DTLS 1.2: the same suite (first in the gateway's list)\n", tls_detail);
    *native_ratio = measured[0] > 0 ? exp(log_sum[0] / measured[0]) : -1;
    *browser_ratio = measured[1] > 0 ? exp(log_sum[1] / measured[1]) : -1;
}

static transfer_params link_params(unsigned rtt_ms)
{
    /* Slow start needs round trips to open the window (and the receive
     * windows grow with it), and the window should span many round trips. */
    double rtt_s = rtt_ms / 1000.0;
    transfer_params params = {.message_size = LINK_MESSAGE_SIZE,
                              .ordered = true,
                              .sctp_mtu = BROWSER_PACKET,
                              .warmup_s = LOOPBACK_WARMUP_S + 12 * rtt_s,
                              .window_s = fmax(window_s, 10 * rtt_s)};
    params.timeout_s = params.warmup_s + params.window_s + SETUP_ALLOWANCE_S;
    return params;
}

static void link_datachannel(const identities *ids, const netns_link *link,
                             const transfer_params *params, transfer_result *result)
{
    static const char *const ips[2] = {NETNS_LINK_SENDER_ADDRESS, NETNS_LINK_RECEIVER_ADDRESS};
    if (!within_budget(params, result))
        return;
    int udp[2] = {netns_link_socket(link, NETNS_LINK_SENDER, SOCK_DGRAM),
                  netns_link_socket(link, NETNS_LINK_RECEIVER, SOCK_DGRAM)};
    no_fragmentation(udp);
    if (pair_udp(udp, ips) == 0)
        run_datachannel(ids, udp, params, result);
    else
        snprintf(result->detail, sizeof result->detail, "UDP setup failed");
    close_pair(udp);
}

static void link_tls(const identities *ids, const netns_link *link, const transfer_params *params,
                     transfer_result *result)
{
    if (!within_budget(params, result))
        return;
    int client = netns_link_socket(link, NETNS_LINK_SENDER, SOCK_STREAM);
    int listener = netns_link_socket(link, NETNS_LINK_RECEIVER, SOCK_STREAM);
    run_tls(ids, client, listener, NETNS_LINK_RECEIVER_ADDRESS, params, result);
    int fds[2] = {client, listener};
    close_pair(fds);
}

/* SCTP/DTLS over TLS/TCP at this round trip, 0 when not measured; with
 * discover, the SCTP packet size comes from path MTU discovery. */
static double link_row(const identities *ids, unsigned rtt_ms, bool discover)
{
    char error[256];
    netns_link *link = netns_link_create_rated(rtt_ms, LINK_RATE_BPS, error, sizeof error);
    if (link == NULL) {
        printf("%-8u  (no link: %s)\n", rtt_ms, error);
        fprintf(stderr, "datachannel: no valid measurement: no %u ms link: %s\n", rtt_ms, error);
        unmeasured_rows++;
        return 0;
    }
    transfer_params params = link_params(rtt_ms);
    if (discover)
        params.plpmtud_max = NATIVE_PACKET;
    mean_rate dc, tls;
    memset(&dc, 0, sizeof dc);
    memset(&tls, 0, sizeof tls);
    /* Packets the emulator dropped during each kind's transfers. */
    uint64_t dropped[2] = {0, 0};
    for (int round = 0; round < rounds; round++) {
        transfer_result r;
        tun_emulator_counters before, after;
        netns_link_counters(link, &before);
        link_datachannel(ids, link, &params, &r);
        mean_add(&dc, &r);
        netns_link_counters(link, &after);
        dropped[0] += after.queue_drops + after.ring_drops + after.write_failures -
                      before.queue_drops - before.ring_drops - before.write_failures;
        link_tls(ids, link, &params, &r);
        mean_add(&tls, &r);
        netns_link_counters(link, &before);
        dropped[1] += before.queue_drops + before.ring_drops + before.write_failures -
                      after.queue_drops - after.ring_drops - after.write_failures;
    }
    double ratio = mean_value(&tls) > 0 ? mean_value(&dc) / mean_value(&tls) : 0;
    char packet[32], label[48];
    packet_text(&dc, packet, sizeof packet);
    snprintf(label, sizeof label, "%s%s", packet, discover ? " (discovered)" : "");
    printf("%-8u %-20s %16.2f %14.2f %10.3f   %s (dropped: SCTP %llu, TCP %llu packets)\n", rtt_ms,
           label, mean_value(&dc), mean_value(&tls), ratio, netns_link_method(link),
           (unsigned long long)dropped[0], (unsigned long long)dropped[1]);
    print_failure("SCTP/DTLS", &dc.failure);
    print_failure("TLS/TCP", &tls.failure);
    char row[48];
    snprintf(row, sizeof row, "%u ms link%s", rtt_ms, discover ? " (discovered)" : "");
    note_unmeasured(row, "SCTP/DTLS", &dc);
    note_unmeasured(row, "TLS/TCP", &tls);
    netns_link_destroy(link);
    return ratio;
}

/* The ratio at LONG_RTT_MS, 0 when not measured. */
static double link_part(const identities *ids)
{
    printf("\nround-trip time, %llu Mbit/s link (MTU 1500), reliable ordered channel (%d-byte "
           "SCTP packets, or discovered) against TLS/TCP, %u KiB messages (mean of %d runs)\n",
           LINK_RATE_BPS / 1000000ull, BROWSER_PACKET, LINK_MESSAGE_SIZE / 1024, rounds);
    if (geteuid() != 0) {
        printf("  skipped: creating network namespaces needs root\n");
        return 0;
    }
    printf("%-8s %-20s %16s %14s %10s   %s\n", "RTT ms", "SCTP packet", "SCTP/DTLS MB/s",
           "TLS/TCP MB/s", "SCTP/TLS", "link");
    double long_rtt = 0;
    for (size_t i = 0; i < sizeof round_trip_ms / sizeof round_trip_ms[0]; i++) {
        if (only_rtt_ms != 0 && round_trip_ms[i] != only_rtt_ms)
            continue;
        double ratio = link_row(ids, round_trip_ms[i], false);
        if (round_trip_ms[i] == LONG_RTT_MS)
            long_rtt = ratio;
        if (round_trip_ms[i] == DISCOVERY_RTT_MS)
            link_row(ids, round_trip_ms[i], true);
    }
    return long_rtt;
}

/* `one` and `one-tls`: a single loopback transfer, its MB/s on stdout. */
static int one_transfer(const identities *ids, bool tls, int argc, char **argv)
{
    int seconds_at = tls ? 3 : 4;
    if (argc < seconds_at)
        return 2;
    double window = argc > seconds_at ? strtod(argv[seconds_at], NULL) : window_s;
    transfer_params params = {.message_size = strtoul(argv[2], NULL, 10),
                              .ordered = true,
                              .sctp_mtu = tls ? 0 : strtoul(argv[3], NULL, 10),
                              .warmup_s = LOOPBACK_WARMUP_S,
                              .window_s = window,
                              .timeout_s = LOOPBACK_WARMUP_S + window + SETUP_ALLOWANCE_S};
    run_deadline_s = transfer_now_s() + params.timeout_s + 2;
    transfer_result r;
    if (tls)
        loopback_tls(ids, &params, &r);
    else
        loopback_datachannel(ids, &params, &r);
    if (!r.measured) {
        printf("not measured: %s\n", r.detail);
        return 1;
    }
    printf("%.1f\n", r.megabytes_per_second);
    return 0;
}

int main(int argc, char **argv)
{
    /* "loopback" or "link [rtt ms]": that part only. */
    bool loopback_only = argc > 1 && strcmp(argv[1], "loopback") == 0;
    bool link_only = argc > 1 && strcmp(argv[1], "link") == 0;
    if (link_only && argc > 2)
        only_rtt_ms = (unsigned)strtoul(argv[2], NULL, 10);
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* A reader that goes away (| head) must not stop the run before it has
     * removed its namespaces. */
    signal(SIGPIPE, SIG_IGN);
    if (bench_quick()) {
        /* One round of short windows, and of the emulated links the
         * shortest round trip only. */
        rounds = 1;
        window_s = 0.3;
        if (only_rtt_ms == 0)
            only_rtt_ms = DISCOVERY_RTT_MS;
    }
    run_deadline_s = transfer_now_s() + RUN_BUDGET_S;
    identities ids;
    memset(&ids, 0, sizeof ids);
    if (make_identities(&ids) != 0)
        return 1;
    if (argc > 1 && (strcmp(argv[1], "one") == 0 || strcmp(argv[1], "one-tls") == 0))
        return one_transfer(&ids, strcmp(argv[1], "one-tls") == 0, argc, argv);
    double native_ratio, browser_ratio;
    native_ratio = browser_ratio = 1;
    if (!link_only)
        loopback_part(&ids, &native_ratio, &browser_ratio);
    double long_rtt = loopback_only ? 0 : link_part(&ids);
    for (int i = 0; i < 2; i++) {
        moat_dtls_context_free(ids.context[i]);
        moat_certificate_free(ids.certificate[i]);
    }
    if (native_ratio < 0) {
        fprintf(stderr, "bench: no SCTP/DTLS against TLS/TCP figure was measured\n");
        return 1;
    }
    printf("browser_packets_ratio_vs_tls=%.3f\n", browser_ratio);
    printf("ratio_vs_tls=%.3f long_rtt_vs_tcp=%.3f\n", native_ratio, long_rtt);
    return unmeasured_rows > 0 ? 1 : 0;
}
