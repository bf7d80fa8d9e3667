/* Data channel throughput (DESIGN.md: benchmarks print ratios against a
 * baseline measured in the same run).
 *
 * 1. Loopback: one reliable ordered channel (the gateway's SCTP association
 *    over its DTLS transport over UDP) against TLS 1.2 over TCP with the same
 *    cipher suite, for 1 KiB and 16 KiB messages. Each side of a transfer is
 *    a process of its own; the receiver measures payload bytes over a fixed
 *    window after a warm-up.
 * 2. Round-trip times of 7, 71 and 196 ms between two network namespaces
 *    the bench creates (tc netem, or a TUN link emulator where the kernel has
 *    no netem): ordered against unordered reliable channels. Root only.
 *
 * The last line is ratio_vs_tls=X: SCTP/DTLS throughput over TLS/TCP
 * throughput, the geometric mean over the message sizes. */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* A hard bound on the whole run: link transfers that could end past it are
 * skipped (and said so). */
#define RUN_BUDGET_S 85.0
#define LINK_ROUNDS  2

static const size_t loopback_sizes[] = {1024, 16 * 1024};
static const unsigned round_trip_ms[] = {7, 71, 196};
static double run_deadline_s;

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

/* Returns the geometric mean of DTLS/TLS ratios, or -1 when none. */
static double loopback_part(const identities *ids)
{
    static const char *const loopback[2] = {"127.0.0.1", "127.0.0.1"};
    printf("loopback, one reliable ordered channel against TLS 1.2 over TCP, %s\n",
           TLS_TRANSFER_CIPHER);
    printf("%-9s %16s %16s %12s\n", "message", "SCTP/DTLS MB/s", "TLS/TCP MB/s", "SCTP/TLS");
    double log_sum = 0;
    int measured = 0;
    char tls_detail[96] = "";
    for (size_t i = 0; i < sizeof loopback_sizes / sizeof loopback_sizes[0]; i++) {
        transfer_params params = {.message_size = loopback_sizes[i],
                                  .ordered = true,
                                  .warmup_s = LOOPBACK_WARMUP_S,
                                  .window_s = WINDOW_S,
                                  .timeout_s = LOOPBACK_WARMUP_S + WINDOW_S + SETUP_ALLOWANCE_S};
        int udp[2] = {socket(AF_INET, SOCK_DGRAM, 0), socket(AF_INET, SOCK_DGRAM, 0)};
        transfer_result dc, tls;
        memset(&dc, 0, sizeof dc);
        if (pair_udp(udp, loopback) == 0)
            run_datachannel(ids, udp, &params, &dc);
        else
            snprintf(dc.detail, sizeof dc.detail, "UDP setup failed");
        close_pair(udp);
        int tcp[2] = {socket(AF_INET, SOCK_STREAM, 0), socket(AF_INET, SOCK_STREAM, 0)};
        run_tls(ids, tcp[0], tcp[1], "127.0.0.1", &params, &tls);
        close_pair(tcp);
        if (tls.measured)
            snprintf(tls_detail, sizeof tls_detail, "%s", tls.detail);
        bool both = dc.measured && tls.measured && tls.megabytes_per_second > 0;
        double ratio = both ? dc.megabytes_per_second / tls.megabytes_per_second : 0;
        printf("%-9s %16.1f %16.1f %12.3f\n", loopback_sizes[i] == 1024 ? "1 KiB" : "16 KiB",
               dc.megabytes_per_second, tls.megabytes_per_second, ratio);
        print_failure("SCTP/DTLS", &dc);
        print_failure("TLS/TCP", &tls);
        if (both) {
            log_sum += log(ratio);
            measured++;
        }
    }
    if (tls_detail[0] != '\0')
        printf("  TLS: %s; DTLS 1.2: the same suite (first in the gateway's list)\n", tls_detail);
    return measured > 0 ? exp(log_sum / measured) : -1;
}

/* One transfer over the link, unless it could overrun the run's budget. */
static void link_transfer(const identities *ids, const netns_link *link, unsigned rtt_ms,
                          bool ordered, transfer_result *result)
{
    static const char *const ips[2] = {NETNS_LINK_SENDER_ADDRESS, NETNS_LINK_RECEIVER_ADDRESS};
    /* Slow start needs round trips to open the window (the congestion
     * window grows by about half per round trip with delayed SACKs), and
     * the window should span many round trips. */
    double rtt_s = rtt_ms / 1000.0;
    transfer_params params = {.message_size = LINK_MESSAGE_SIZE,
                              .ordered = ordered,
                              .warmup_s = LOOPBACK_WARMUP_S + 10 * rtt_s,
                              .window_s = fmax(WINDOW_S, 10 * rtt_s)};
    params.timeout_s = params.warmup_s + params.window_s + SETUP_ALLOWANCE_S;
    memset(result, 0, sizeof *result);
    if (transfer_now_s() + params.timeout_s + 1 > run_deadline_s) {
        snprintf(result->detail, sizeof result->detail, "skipped to stay within %.0f s",
                 RUN_BUDGET_S);
        return;
    }
    int udp[2] = {netns_link_socket(link, NETNS_LINK_SENDER, SOCK_DGRAM),
                  netns_link_socket(link, NETNS_LINK_RECEIVER, SOCK_DGRAM)};
    if (pair_udp(udp, ips) == 0)
        run_datachannel(ids, udp, &params, result);
    else
        snprintf(result->detail, sizeof result->detail, "UDP setup failed");
    close_pair(udp);
}

static void link_row(const identities *ids, unsigned rtt_ms)
{
    char error[256];
    netns_link *link = netns_link_create(rtt_ms, error, sizeof error);
    if (link == NULL) {
        printf("%-8u  (no link: %s)\n", rtt_ms, error);
        return;
    }
    /* Ordered and unordered take turns, LINK_ROUNDS times each: single runs
     * vary a lot at long round trips, where usrsctp's T3-rtx timer expires
     * now and then on this loss-free link and may reset the congestion
     * window to one packet. */
    double sum[2] = {0, 0}; /* ordered, unordered */
    int measured[2] = {0, 0};
    transfer_result failure[2];
    memset(failure, 0, sizeof failure);
    for (int round = 0; round < LINK_ROUNDS; round++) {
        for (int unordered = 0; unordered < 2; unordered++) {
            transfer_result r;
            link_transfer(ids, link, rtt_ms, !unordered, &r);
            if (r.measured) {
                sum[unordered] += r.megabytes_per_second;
                measured[unordered]++;
            } else {
                failure[unordered] = r;
            }
        }
    }
    double mean[2];
    for (int i = 0; i < 2; i++)
        mean[i] = measured[i] > 0 ? sum[i] / measured[i] : 0;
    printf("%-8u %14.2f %16.2f %20.3f   %s\n", rtt_ms, mean[0], mean[1],
           mean[0] > 0 && mean[1] > 0 ? mean[1] / mean[0] : 0, netns_link_method(link));
    print_failure("ordered", &failure[0]);
    print_failure("unordered", &failure[1]);
    netns_link_destroy(link);
}

static void link_part(const identities *ids)
{
    printf("\nround-trip time, reliable channel, %u KiB messages, ordered against unordered\n",
           LINK_MESSAGE_SIZE / 1024);
    if (geteuid() != 0) {
        printf("  skipped: creating network namespaces needs root\n");
        return;
    }
    printf("%-8s %14s %16s %20s   %s\n", "RTT ms", "ordered MB/s", "unordered MB/s",
           "unordered/ordered", "link (mean of 2 runs each)");
    for (size_t i = 0; i < sizeof round_trip_ms / sizeof round_trip_ms[0]; i++)
        link_row(ids, round_trip_ms[i]);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* A reader that goes away (| head) must not stop the run before it has
     * removed its namespaces. */
    signal(SIGPIPE, SIG_IGN);
    run_deadline_s = transfer_now_s() + RUN_BUDGET_S;
    identities ids;
    memset(&ids, 0, sizeof ids);
    if (make_identities(&ids) != 0)
        return 1;
    double ratio = loopback_part(&ids);
    link_part(&ids);
    for (int i = 0; i < 2; i++) {
        moat_dtls_context_free(ids.context[i]);
        moat_certificate_free(ids.certificate[i]);
    }
    if (ratio < 0) {
        fprintf(stderr, "bench: no SCTP/DTLS against TLS/TCP figure was measured\n");
        return 1;
    }
    printf("ratio_vs_tls=%.3f\n", ratio);
    return 0;
}
