/* SRTP+ against libsrtp on one core (DESIGN.md: benchmarks print ratios against a
 * baseline measured in the same run). 172-octet G.711 RTP packets (12-octet header,
 * 160-octet payload), AES_CM_128_HMAC_SHA1_80, libsrtp on OpenSSL.
 *
 * Every figure is a "lane": a loop of work over 64-packet batches, the size of the
 * gateway's recvmmsg batches. Each batch is copied into a small buffer untimed, so it
 * is hot in cache as a just-received batch is, and then the lane's work on it is timed
 * (the clock's own cost taken off). A baseline and the SRTP+ figures compared with it
 * run interleaved, batch after batch, so both share whatever else the machine is doing;
 * each round gives one figure per lane and the table shows the median of the rounds. */
#include "bench_srtpplus_fixture.h"
#include "bench_quick.h"

#include <sched.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ROUNDS = 15, BATCH = 64, FORGED_PASSES = 16 };

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), compare_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double clock_cost_ns;

static void measure_clock_cost(void)
{
    double v[101];
    for (int r = 0; r < 101; r++) {
        uint64_t t0 = now_ns();
        for (int i = 0; i < 1000; i++) {
            uint64_t a = now_ns();
            __asm__ volatile("" : : "r"(a));
        }
        v[r] = (double)(now_ns() - t0) / 1000;
    }
    clock_cost_ns = median(v, 101);
}

/* The batch a lane works on: packets as they arrive (or leave), and for the receive
 * work the same packets as srtp_unprotect gives them back. */
static struct bench_packet hot_wire[BATCH], hot_plain[BATCH];

/* Per-round state of the lanes: fresh sessions, receivers and senders. */
struct round_state {
    const struct bench_fixture *b;
    srtp_t rx_prn, rx_chain, rx_forged, rx_e2e_prn, rx_e2e_chain, tx_plain, tx_chain;
    struct srtpplus_receiver *work_prn, *work_chain, *e2e_prn, *e2e_chain;
    struct srtpplus_sender *send_prn, *send_chain;
};

struct lane {
    const char *label;
    /* Where the batches come from: stream packets [first, first + BATCH), or (fixed) the
     * same BENCH_FORGED packets every time, processed `passes` times. */
    const struct bench_packet *(*wire)(const struct bench_fixture *b);
    const struct bench_packet *(*plain)(const struct bench_fixture *b);
    bool fixed;
    void (*work)(struct round_state *st, size_t count);
    double samples[ROUNDS];
    double total_ns;
    size_t packets;
    size_t batches, preempted;
};

static void unprotect_batch(srtp_t srtp, size_t count)
{
    for (size_t i = 0; i < count; i++)
        bench_unprotect(srtp, &hot_wire[i]);
}

static void protect_batch(srtp_t srtp, size_t count)
{
    for (size_t i = 0; i < count; i++)
        bench_protect(srtp, &hot_wire[i]);
}

static void forged_unprotect_batch(srtp_t srtp, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        int len = (int)hot_wire[i].len;
        if (srtp_unprotect(srtp, hot_wire[i].data, &len) == srtp_err_status_ok)
            bench_fail("srtp_unprotect accepted a forged packet");
    }
}

static void forged_check_batch(struct srtpplus_receiver *rx, size_t count,
                               enum srtpplus_verdict expected)
{
    for (int pass = 0; pass < FORGED_PASSES; pass++) {
        for (size_t i = 0; i < count; i++) {
            struct srtpplus_check chk;
            if (srtpplus_receiver_check_rtp(rx, hot_wire[i].data, hot_wire[i].len, true, 0, &chk) !=
                expected)
                bench_fail("unexpected verdict on a forged packet");
        }
    }
}

/* What SRTP+ adds to the receive path of a legitimate packet, on its own: the check on
 * the wire packet, the confirm on its plaintext, the window refill after the batch. */
static void receive_work_batch(struct srtpplus_receiver *rx, size_t count, bool enforcing)
{
    for (size_t i = 0; i < count; i++) {
        struct srtpplus_check chk;
        if (srtpplus_receiver_check_rtp(rx, hot_wire[i].data, hot_wire[i].len, enforcing, 0,
                                        &chk) != SRTPPLUS_PASS)
            bench_fail("legitimate packet not passed");
        if (srtpplus_receiver_confirm_rtp(rx, hot_plain[i].data, &hot_plain[i].len, chk.index) !=
            SRTPPLUS_CONFIRMED)
            bench_fail("legitimate packet not confirmed");
    }
    srtpplus_receiver_maintain(rx);
}

static void receive_end_to_end_batch(struct srtpplus_receiver *rx, srtp_t srtp, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        struct bench_packet *p = &hot_wire[i];
        struct srtpplus_check chk;
        if (srtpplus_receiver_check_rtp(rx, p->data, p->len, true, 0, &chk) != SRTPPLUS_PASS)
            bench_fail("legitimate packet not passed");
        p->len = chk.len;
        bench_unprotect(srtp, p);
        if (srtpplus_receiver_confirm_rtp(rx, p->data, &p->len, chk.index) != SRTPPLUS_CONFIRMED)
            bench_fail("legitimate packet not confirmed");
    }
    srtpplus_receiver_maintain(rx);
}

/* What SRTP+ adds to sending: prepare before srtp_protect, the tag after it. The tag
 * reads only the clear header, so here both run on the plaintext. */
static void send_work_batch(struct srtpplus_sender *tx, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        struct bench_packet *p = &hot_wire[i];
        if (srtpplus_sender_prepare_rtp(tx, p->data, &p->len, BENCH_PACKET_CAPACITY) !=
                SRTPPLUS_OK ||
            srtpplus_sender_append_tag_rtp(tx, p->data, &p->len, BENCH_PACKET_CAPACITY) !=
                SRTPPLUS_OK)
            bench_fail("sender failed");
    }
}

static void w_forged_unprotect(struct round_state *st, size_t n)
{
    forged_unprotect_batch(st->rx_forged, n);
}
static void w_forged_prn(struct round_state *st, size_t n)
{
    forged_check_batch(st->b->prn_rx, n, SRTPPLUS_DROP_TAG);
}
static void w_forged_chain(struct round_state *st, size_t n)
{
    forged_check_batch(st->b->chain_rx, n, SRTPPLUS_DROP_TAG);
}
static void w_forged_chain_unlearned(struct round_state *st, size_t n)
{
    forged_check_batch(st->b->chain_rx, n, SRTPPLUS_DROP_BUDGET);
}
static void w_unprotect_prn(struct round_state *st, size_t n)
{
    unprotect_batch(st->rx_prn, n);
}
static void w_unprotect_chain(struct round_state *st, size_t n)
{
    unprotect_batch(st->rx_chain, n);
}
static void w_receive_prn(struct round_state *st, size_t n)
{
    receive_work_batch(st->work_prn, n, true);
}
static void w_receive_chain(struct round_state *st, size_t n)
{
    receive_work_batch(st->work_chain, n, true);
}
static void w_e2e_prn(struct round_state *st, size_t n)
{
    receive_end_to_end_batch(st->e2e_prn, st->rx_e2e_prn, n);
}
static void w_e2e_chain(struct round_state *st, size_t n)
{
    receive_end_to_end_batch(st->e2e_chain, st->rx_e2e_chain, n);
}
static void w_protect_plain(struct round_state *st, size_t n)
{
    protect_batch(st->tx_plain, n);
}
static void w_protect_chain(struct round_state *st, size_t n)
{
    protect_batch(st->tx_chain, n);
}
static void w_send_prn(struct round_state *st, size_t n)
{
    send_work_batch(st->send_prn, n);
}
static void w_send_chain(struct round_state *st, size_t n)
{
    send_work_batch(st->send_chain, n);
}

static const struct bench_packet *s_forged_srtp(const struct bench_fixture *b)
{
    return b->forged_srtp;
}
static const struct bench_packet *s_forged_prn(const struct bench_fixture *b)
{
    return b->forged_prn;
}
static const struct bench_packet *s_forged_chain(const struct bench_fixture *b)
{
    return b->forged_chain;
}
static const struct bench_packet *s_forged_chain_unlearned(const struct bench_fixture *b)
{
    return b->forged_chain_unlearned;
}
static const struct bench_packet *s_prn_srtp(const struct bench_fixture *b)
{
    return b->prn.srtp;
}
static const struct bench_packet *s_chain_srtp(const struct bench_fixture *b)
{
    return b->chain.srtp;
}
static const struct bench_packet *s_prn_wire(const struct bench_fixture *b)
{
    return b->prn.wire;
}
static const struct bench_packet *s_chain_wire(const struct bench_fixture *b)
{
    return b->chain.wire;
}
static const struct bench_packet *s_prn_plain(const struct bench_fixture *b)
{
    return b->prn.plain_after_protect;
}
static const struct bench_packet *s_chain_plain(const struct bench_fixture *b)
{
    return b->chain.plain_after_protect;
}
static const struct bench_packet *s_plain(const struct bench_fixture *b)
{
    return b->plain;
}
static const struct bench_packet *s_chain_prepared(const struct bench_fixture *b)
{
    return b->chain.plain_before_protect;
}

enum lane_id {
    FORGED_UNPROTECT,
    FORGED_PRN,
    FORGED_CHAIN,
    FORGED_CHAIN_UNLEARNED,
    UNPROTECT_PRN,
    UNPROTECT_CHAIN,
    RECEIVE_PRN,
    RECEIVE_CHAIN,
    E2E_PRN,
    E2E_CHAIN,
    PROTECT_PLAIN,
    PROTECT_CHAIN,
    SEND_PRN,
    SEND_CHAIN,
    LANE_COUNT,
};

static struct lane lanes[LANE_COUNT] = {
    [FORGED_UNPROTECT] = {"forged, rejected by srtp_unprotect (HMAC-SHA1)", s_forged_srtp, NULL,
                          true, w_forged_unprotect},
    [FORGED_PRN] = {"forged, rejected by prn check (tag)", s_forged_prn, NULL, true, w_forged_prn},
    [FORGED_CHAIN] = {"forged, rejected by chain check (tag)", s_forged_chain, NULL, true,
                      w_forged_chain},
    [FORGED_CHAIN_UNLEARNED] = {"forged, chain, no tag learned yet (budget)",
                                s_forged_chain_unlearned, NULL, true, w_forged_chain_unlearned},
    [UNPROTECT_PRN] = {"legit receive: srtp_unprotect", s_prn_srtp, NULL, false, w_unprotect_prn},
    [UNPROTECT_CHAIN] = {"legit receive: srtp_unprotect, chain packet (+12 B)", s_chain_srtp, NULL,
                         false, w_unprotect_chain},
    [RECEIVE_PRN] = {"legit receive: prn check + confirm + refill", s_prn_wire, s_prn_plain, false,
                     w_receive_prn},
    [RECEIVE_CHAIN] = {"legit receive: chain check + confirm", s_chain_wire, s_chain_plain, false,
                       w_receive_chain},
    [E2E_PRN] = {"legit receive end to end: prn + srtp_unprotect", s_prn_wire, NULL, false,
                 w_e2e_prn},
    [E2E_CHAIN] = {"legit receive end to end: chain + srtp_unprotect", s_chain_wire, NULL, false,
                   w_e2e_chain},
    [PROTECT_PLAIN] = {"legit send: srtp_protect", s_plain, NULL, false, w_protect_plain},
    [PROTECT_CHAIN] = {"legit send: srtp_protect, chain packet (+12 B)", s_chain_prepared, NULL,
                       false, w_protect_chain},
    [SEND_PRN] = {"legit send: prn prepare + tag", s_plain, NULL, false, w_send_prn},
    [SEND_CHAIN] = {"legit send: chain prepare + tag", s_plain, NULL, false, w_send_chain},
};

static void round_open(struct round_state *st, const struct bench_fixture *b)
{
    st->b = b;
    st->rx_prn = bench_session(b);
    st->rx_chain = bench_session(b);
    st->rx_forged = bench_session(b);
    st->rx_e2e_prn = bench_session(b);
    st->rx_e2e_chain = bench_session(b);
    st->tx_plain = bench_session(b);
    st->tx_chain = bench_session(b);
    st->work_prn = bench_receiver(b, SRTPPLUS_SCHEME_PRN);
    st->work_chain = bench_receiver(b, SRTPPLUS_SCHEME_CHAIN);
    st->e2e_prn = bench_receiver(b, SRTPPLUS_SCHEME_PRN);
    st->e2e_chain = bench_receiver(b, SRTPPLUS_SCHEME_CHAIN);
    st->send_prn = bench_sender(b, SRTPPLUS_SCHEME_PRN);
    st->send_chain = bench_sender(b, SRTPPLUS_SCHEME_CHAIN);
    /* The forged packets claim indexes ahead of what this session has seen. */
    for (size_t i = 0; i < BENCH_WARMUP; i++) {
        struct bench_packet p = b->prn.srtp[i];
        bench_unprotect(st->rx_forged, &p);
    }
}

static void round_close(struct round_state *st)
{
    srtp_t sessions[] = {st->rx_prn,       st->rx_chain, st->rx_forged, st->rx_e2e_prn,
                         st->rx_e2e_chain, st->tx_plain, st->tx_chain};
    for (size_t i = 0; i < sizeof(sessions) / sizeof(sessions[0]); i++)
        srtp_dealloc(sessions[i]);
    srtpplus_receiver_free(st->work_prn);
    srtpplus_receiver_free(st->work_chain);
    srtpplus_receiver_free(st->e2e_prn);
    srtpplus_receiver_free(st->e2e_chain);
    srtpplus_sender_free(st->send_prn);
    srtpplus_sender_free(st->send_chain);
}

static long context_switches(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* A batch during which the thread was switched out timed someone else's work too; it is
 * left out (the machine this runs on is shared). */
static void run_lane_batch(struct round_state *st, struct lane *lane, size_t first, bool timed)
{
    const struct bench_fixture *b = st->b;
    size_t total = BENCH_WARMUP + BENCH_PACKETS;
    size_t count = lane->fixed ? BENCH_FORGED : (total - first < BATCH ? total - first : BATCH);
    /* Read before the copy, so the copy brings the batch back into cache after the
     * system call. */
    long switches = context_switches();
    bench_copy_packets(hot_wire, lane->wire(b) + (lane->fixed ? 0 : first), count);
    if (lane->plain)
        bench_copy_packets(hot_plain, lane->plain(b) + first, count);
    uint64_t t0 = now_ns();
    lane->work(st, count);
    uint64_t t1 = now_ns();
    if (!timed)
        return;
    lane->batches++;
    if (context_switches() != switches) {
        lane->preempted++;
        return;
    }
    lane->total_ns += (double)(t1 - t0) - clock_cost_ns;
    lane->packets +=
        lane->work == w_forged_unprotect || !lane->fixed ? count : count * FORGED_PASSES;
}

/* Lanes compared with each other run interleaved; groups run one after the other, so
 * that few lanes share the cache at a time, as a worker busy with one transport. */
static const enum lane_id groups[][LANE_COUNT + 1] = {
    {FORGED_UNPROTECT, FORGED_PRN, FORGED_CHAIN, FORGED_CHAIN_UNLEARNED, LANE_COUNT},
    {UNPROTECT_PRN, UNPROTECT_CHAIN, RECEIVE_PRN, RECEIVE_CHAIN, E2E_PRN, E2E_CHAIN, LANE_COUNT},
    {PROTECT_PLAIN, PROTECT_CHAIN, SEND_PRN, SEND_CHAIN, LANE_COUNT},
};

static void run_group(struct round_state *st, const enum lane_id *group)
{
    size_t n = 0;
    while (group[n] != LANE_COUNT)
        n++;
    size_t total = BENCH_WARMUP + BENCH_PACKETS;
    size_t step = 0;
    for (size_t first = 0; first < total; first += BATCH, step++) {
        /* Rotating which lane goes first keeps order effects out of the comparison. */
        for (size_t k = 0; k < n; k++)
            run_lane_batch(st, &lanes[group[(k + step) % n]], first, first >= BENCH_WARMUP);
    }
}

static void run_round(const struct bench_fixture *b, int round)
{
    struct round_state st;
    round_open(&st, b);
    for (int l = 0; l < LANE_COUNT; l++) {
        lanes[l].total_ns = 0;
        lanes[l].packets = 0;
    }
    for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
        run_group(&st, groups[g]);
    for (int l = 0; l < LANE_COUNT; l++)
        lanes[l].samples[round] = lanes[l].total_ns / (double)lanes[l].packets;
    round_close(&st);
}

static void pin_to_one_core(void)
{
    int cpu = sched_getcpu();
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

static void row(const char *label, double ns, const char *ratio_label, double ratio)
{
    if (ratio_label)
        printf("%-52s %9.1f  %s %.1f\n", label, ns, ratio_label, ratio);
    else
        printf("%-52s %9.1f\n", label, ns);
}

static void row_pct(const char *label, double ns, double pct)
{
    printf("%-52s %9.1f  %+.2f%%\n", label, ns, pct);
}

int main(void)
{
    pin_to_one_core();
    measure_clock_cost();
    struct bench_fixture *b = bench_fixture_new();
    int rounds = BENCH_SCALE(ROUNDS, 3);
    for (int round = 0; round < rounds; round++)
        run_round(b, round);
    double m[LANE_COUNT];
    for (int l = 0; l < LANE_COUNT; l++)
        m[l] = median(lanes[l].samples, (size_t)rounds);

    double speedup_prn = m[FORGED_UNPROTECT] / m[FORGED_PRN];
    double speedup_chain = m[FORGED_UNPROTECT] / m[FORGED_CHAIN];
    double rx_prn = 100 * m[RECEIVE_PRN] / m[UNPROTECT_PRN];
    double rx_chain = 100 * m[RECEIVE_CHAIN] / m[UNPROTECT_CHAIN];
    double tx_prn = 100 * m[SEND_PRN] / m[PROTECT_PLAIN];
    double tx_chain = 100 * m[SEND_CHAIN] / m[PROTECT_CHAIN];

    printf("SRTP+ v1 bench: 172-octet G.711 RTP packets, AES_CM_128_HMAC_SHA1_80, %s (OpenSSL)\n"
           "one core, median of %d rounds of %d packets in batches of %d; chain D=%d r=%d\n\n",
           srtp_get_version_string(), rounds, BENCH_PACKETS, BATCH, BENCH_CHAIN_DEPTH,
           BENCH_CHAIN_COPIES);
    printf("%-52s %9s  %s\n", "", "ns/packet", "vs baseline");
    row(lanes[FORGED_UNPROTECT].label, m[FORGED_UNPROTECT], NULL, 0);
    row(lanes[FORGED_PRN].label, m[FORGED_PRN], "speedup", speedup_prn);
    row(lanes[FORGED_CHAIN].label, m[FORGED_CHAIN], "speedup", speedup_chain);
    row(lanes[FORGED_CHAIN_UNLEARNED].label, m[FORGED_CHAIN_UNLEARNED], "speedup",
        m[FORGED_UNPROTECT] / m[FORGED_CHAIN_UNLEARNED]);
    row(lanes[UNPROTECT_PRN].label, m[UNPROTECT_PRN], NULL, 0);
    row_pct(lanes[RECEIVE_PRN].label, m[RECEIVE_PRN], rx_prn);
    row(lanes[UNPROTECT_CHAIN].label, m[UNPROTECT_CHAIN], NULL, 0);
    row_pct(lanes[RECEIVE_CHAIN].label, m[RECEIVE_CHAIN], rx_chain);
    row(lanes[PROTECT_PLAIN].label, m[PROTECT_PLAIN], NULL, 0);
    row_pct(lanes[SEND_PRN].label, m[SEND_PRN], tx_prn);
    row(lanes[PROTECT_CHAIN].label, m[PROTECT_CHAIN], NULL, 0);
    row_pct(lanes[SEND_CHAIN].label, m[SEND_CHAIN], tx_chain);
    printf("\ncross-check, whole receive path against srtp_unprotect of the same packets:\n");
    row_pct(lanes[E2E_PRN].label, m[E2E_PRN],
            100 * (m[E2E_PRN] - m[UNPROTECT_PRN]) / m[UNPROTECT_PRN]);
    row_pct(lanes[E2E_CHAIN].label, m[E2E_CHAIN],
            100 * (m[E2E_CHAIN] - m[UNPROTECT_CHAIN]) / m[UNPROTECT_CHAIN]);
    printf("chain's 12-octet block costs SRTP itself %+.2f%% (unprotect), %+.2f%% (protect):\n"
           "one more SHA-1 block for HMAC over 188 instead of 176 octets.\n",
           100 * (m[UNPROTECT_CHAIN] - m[UNPROTECT_PRN]) / m[UNPROTECT_PRN],
           100 * (m[PROTECT_CHAIN] - m[PROTECT_PLAIN]) / m[PROTECT_PLAIN]);
    size_t batches = 0, preempted = 0;
    for (int l = 0; l < LANE_COUNT; l++) {
        batches += lanes[l].batches;
        preempted += lanes[l].preempted;
    }
    printf("(%zu of %zu timed batches were left out: the thread was switched out during them)\n",
           preempted, batches);
    printf(
        "\nPaper (Garg, Singh, Tsai), Table 1: speedup prn 3.8, chain 16.5; overhead 26%%, 6%%.\n"
        "Here: overhead = SRTP+ work on a legitimate packet, receive (send) side, relative to\n"
        "srtp_unprotect (srtp_protect) of the same packet: receive %.2f%% / %.2f%%, send %.2f%% "
        "/ %.2f%% (prn / chain).\n",
        rx_prn, rx_chain, tx_prn, tx_chain);
    printf("speedup prn=%.1f chain=%.1f overhead_prn=%.2f%% overhead_chain=%.2f%%\n", speedup_prn,
           speedup_chain, rx_prn > tx_prn ? rx_prn : tx_prn,
           rx_chain > tx_chain ? rx_chain : tx_chain);
    bench_fixture_free(b);
    return 0;
}
