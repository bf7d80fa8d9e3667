/* SRTP+ against srtp_unprotect on one core (DESIGN.md: benchmarks print ratios against a
 * baseline measured in the same run). 172-octet G.711 RTP packets (12-octet header,
 * 160-octet payload), AES_CM_128_HMAC_SHA1_80, libsrtp on OpenSSL. Measures, as the
 * median of several rounds:
 *   - ns per forged packet rejected by srtp_unprotect, by the prn check, by the chain check;
 *   - the receive overhead on legitimate packets when enforcing (check + confirm +
 *     window maintenance, relative to srtp_unprotect), and the sender overhead (prepare +
 *     tag, relative to srtp_protect);
 *   - what the chain block costs SRTP itself (12 more octets to encrypt and authenticate);
 *   - the same overheads measured end to end (with and without SRTP+ around libsrtp),
 *     as a cross-check of the isolated figures. */
#include "bench_srtpplus_fixture.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ROUNDS = 15, FORGED_PASSES = 256, UNPROTECT_PASSES = 16 };

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

/* The rows of the table: one sample per round each. */
enum metric {
    FORGED_UNPROTECT,
    FORGED_PRN,
    FORGED_CHAIN,
    FORGED_CHAIN_UNLEARNED,
    LEGIT_UNPROTECT,
    LEGIT_UNPROTECT_CHAIN_PACKET,
    LEGIT_PRN_WORK,
    LEGIT_CHAIN_WORK,
    LEGIT_PRN_END_TO_END,
    LEGIT_CHAIN_END_TO_END,
    SEND_PROTECT,
    SEND_PROTECT_CHAIN_PACKET,
    SEND_PRN_WORK,
    SEND_CHAIN_WORK,
    METRIC_COUNT,
};

static double samples[METRIC_COUNT][ROUNDS];

/* The gateway handles datagrams in recvmmsg batches of 64 that are hot in cache, and
 * so do the timed loops: each batch is copied into a small buffer untimed, then the
 * work on it is timed; the cost of reading the clock is measured and taken off. */
enum { BATCH = 64 };

static double clock_cost_ns;

static void measure_clock_cost(void)
{
    double v[101];
    for (int r = 0; r < 101; r++) {
        uint64_t t0 = now_ns();
        for (int i = 0; i < 1000; i++) {
            uint64_t a = now_ns();
            uint64_t b = now_ns();
            __asm__ volatile("" : : "r"(a), "r"(b));
        }
        v[r] = (double)(now_ns() - t0) / 1000 / 2;
    }
    clock_cost_ns = median(v, 101);
}

struct batch {
    struct bench_packet wire[BATCH];  /* packets as they arrive (or leave) */
    struct bench_packet plain[BATCH]; /* the same packets after srtp_unprotect */
};

static struct batch hot;

typedef void (*batch_work)(void *ctx, size_t first, size_t count);

/* Runs work over packets [from, to) of a stream in batches; returns ns per timed packet
 * (packets before timed_from warm the state up untimed). */
static double run_batches(const struct bench_packet *wire, const struct bench_packet *plain,
                          size_t timed_from, size_t to, batch_work work, void *ctx)
{
    double total = 0;
    for (size_t first = 0; first < to; first += BATCH) {
        size_t count = to - first < BATCH ? to - first : BATCH;
        if (wire)
            bench_copy_packets(hot.wire, wire + first, count);
        if (plain)
            bench_copy_packets(hot.plain, plain + first, count);
        uint64_t t0 = now_ns();
        work(ctx, first, count);
        uint64_t t1 = now_ns();
        if (first >= timed_from)
            total += (double)(t1 - t0) - clock_cost_ns;
    }
    return to > timed_from ? total / (double)(to - timed_from) : 0;
}

static void unprotect_work(void *ctx, size_t first, size_t count)
{
    for (size_t i = 0; i < count; i++)
        bench_unprotect(ctx, &hot.wire[i]);
}

static void protect_work(void *ctx, size_t first, size_t count)
{
    for (size_t i = 0; i < count; i++)
        bench_protect(ctx, &hot.wire[i]);
}

static double time_forged_unprotect(struct bench_fixture *b)
{
    srtp_t srtp = bench_rx_session(b);
    run_batches(b->prn.srtp, NULL, BENCH_WARMUP, BENCH_WARMUP, unprotect_work, srtp);
    bench_copy_packets(hot.wire, b->forged_srtp, BENCH_FORGED);
    uint64_t t0 = now_ns();
    for (int pass = 0; pass < UNPROTECT_PASSES; pass++) {
        for (size_t i = 0; i < BENCH_FORGED; i++) {
            int len = (int)hot.wire[i].len;
            if (srtp_unprotect(srtp, hot.wire[i].data, &len) == srtp_err_status_ok)
                bench_fail("srtp_unprotect accepted a forged packet");
        }
    }
    double ns = (double)(now_ns() - t0) / (UNPROTECT_PASSES * BENCH_FORGED);
    srtp_dealloc(srtp);
    return ns;
}

static double time_forged_check(struct srtpplus_receiver *rx, const struct bench_packet *forged,
                                enum srtpplus_verdict expected)
{
    bench_copy_packets(hot.wire, forged, BENCH_FORGED);
    uint64_t t0 = now_ns();
    for (int pass = 0; pass < FORGED_PASSES; pass++) {
        for (size_t i = 0; i < BENCH_FORGED; i++) {
            struct srtpplus_check chk;
            if (srtpplus_receiver_check_rtp(rx, hot.wire[i].data, hot.wire[i].len, true, 0,
                                            &chk) != expected)
                bench_fail("unexpected verdict on a forged packet");
        }
    }
    return (double)(now_ns() - t0) / ((double)FORGED_PASSES * BENCH_FORGED);
}

static double time_legit_unprotect(struct bench_fixture *b, const struct bench_stream *s)
{
    srtp_t srtp = bench_rx_session(b);
    double ns =
        run_batches(s->srtp, NULL, BENCH_WARMUP, BENCH_WARMUP + BENCH_PACKETS, unprotect_work, srtp);
    srtp_dealloc(srtp);
    return ns;
}

/* What SRTP+ adds to the receive path of a legitimate packet, on its own: the check on
 * the wire packet, the confirm on its plaintext, and the window refill after each
 * batch, as the gateway runs them. */
static void receive_work(void *ctx, size_t first, size_t count)
{
    struct srtpplus_receiver *rx = ctx;
    for (size_t i = 0; i < count; i++) {
        struct srtpplus_check chk;
        if (srtpplus_receiver_check_rtp(rx, hot.wire[i].data, hot.wire[i].len, true, 0, &chk) !=
            SRTPPLUS_PASS)
            bench_fail("legitimate packet not passed");
        if (srtpplus_receiver_confirm_rtp(rx, hot.plain[i].data, &hot.plain[i].len, chk.index) !=
            SRTPPLUS_CONFIRMED)
            bench_fail("legitimate packet not confirmed");
    }
    srtpplus_receiver_maintain(rx);
}

static double time_receive_work(struct bench_fixture *b, const struct bench_stream *s)
{
    struct srtpplus_receiver *rx = bench_receiver(b, s->scheme);
    double ns = run_batches(s->wire, s->plain_after_protect, BENCH_WARMUP,
                            BENCH_WARMUP + BENCH_PACKETS, receive_work, rx);
    srtpplus_receiver_free(rx);
    return ns;
}

struct end_to_end {
    struct srtpplus_receiver *rx;
    srtp_t srtp;
};

static void receive_end_to_end(void *ctx, size_t first, size_t count)
{
    struct end_to_end *e = ctx;
    for (size_t i = 0; i < count; i++) {
        struct bench_packet *p = &hot.wire[i];
        struct srtpplus_check chk;
        if (srtpplus_receiver_check_rtp(e->rx, p->data, p->len, true, 0, &chk) != SRTPPLUS_PASS)
            bench_fail("legitimate packet not passed");
        p->len = chk.len;
        bench_unprotect(e->srtp, p);
        if (srtpplus_receiver_confirm_rtp(e->rx, p->data, &p->len, chk.index) != SRTPPLUS_CONFIRMED)
            bench_fail("legitimate packet not confirmed");
    }
    srtpplus_receiver_maintain(e->rx);
}

static double time_receive_end_to_end(struct bench_fixture *b, const struct bench_stream *s)
{
    struct end_to_end e = {bench_receiver(b, s->scheme), bench_rx_session(b)};
    double ns = run_batches(s->wire, NULL, BENCH_WARMUP, BENCH_WARMUP + BENCH_PACKETS,
                            receive_end_to_end, &e);
    srtpplus_receiver_free(e.rx);
    srtp_dealloc(e.srtp);
    return ns;
}

static double time_protect(struct bench_fixture *b, const struct bench_packet *plain)
{
    srtp_t srtp = bench_tx_session(b);
    double ns =
        run_batches(plain, NULL, BENCH_WARMUP, BENCH_WARMUP + BENCH_PACKETS, protect_work, srtp);
    srtp_dealloc(srtp);
    return ns;
}

/* What SRTP+ adds to sending: prepare before srtp_protect and the tag after it. The tag
 * only reads the clear header, so the work runs on the plaintext here. */
static void send_work(void *ctx, size_t first, size_t count)
{
    struct srtpplus_sender *tx = ctx;
    for (size_t i = 0; i < count; i++) {
        struct bench_packet *p = &hot.wire[i];
        if (srtpplus_sender_prepare_rtp(tx, p->data, &p->len, BENCH_PACKET_CAPACITY) !=
                SRTPPLUS_OK ||
            srtpplus_sender_append_tag_rtp(tx, p->data, &p->len, BENCH_PACKET_CAPACITY) !=
                SRTPPLUS_OK)
            bench_fail("sender failed");
    }
}

static double time_send_work(struct bench_fixture *b, enum srtpplus_scheme scheme)
{
    struct srtpplus_sender *tx = bench_sender(b, scheme);
    double ns =
        run_batches(b->plain, NULL, BENCH_WARMUP, BENCH_WARMUP + BENCH_PACKETS, send_work, tx);
    srtpplus_sender_free(tx);
    return ns;
}

static void run_round(struct bench_fixture *b, int round)
{
    samples[FORGED_UNPROTECT][round] = time_forged_unprotect(b);
    samples[FORGED_PRN][round] = time_forged_check(b->prn_rx, b->forged_prn, SRTPPLUS_DROP_TAG);
    samples[FORGED_CHAIN][round] =
        time_forged_check(b->chain_rx, b->forged_chain, SRTPPLUS_DROP_TAG);
    samples[FORGED_CHAIN_UNLEARNED][round] =
        time_forged_check(b->chain_rx, b->forged_chain_unlearned, SRTPPLUS_DROP_BUDGET);
    samples[LEGIT_UNPROTECT][round] = time_legit_unprotect(b, &b->prn);
    samples[LEGIT_UNPROTECT_CHAIN_PACKET][round] = time_legit_unprotect(b, &b->chain);
    samples[LEGIT_PRN_WORK][round] = time_receive_work(b, &b->prn);
    samples[LEGIT_CHAIN_WORK][round] = time_receive_work(b, &b->chain);
    samples[LEGIT_PRN_END_TO_END][round] = time_receive_end_to_end(b, &b->prn);
    samples[LEGIT_CHAIN_END_TO_END][round] = time_receive_end_to_end(b, &b->chain);
    samples[SEND_PROTECT][round] = time_protect(b, b->plain);
    samples[SEND_PROTECT_CHAIN_PACKET][round] = time_protect(b, b->chain.plain_before_protect);
    samples[SEND_PRN_WORK][round] = time_send_work(b, SRTPPLUS_SCHEME_PRN);
    samples[SEND_CHAIN_WORK][round] = time_send_work(b, SRTPPLUS_SCHEME_CHAIN);
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

int main(void)
{
    pin_to_one_core();
    measure_clock_cost();
    struct bench_fixture *b = bench_fixture_new();
    for (int round = 0; round < ROUNDS; round++)
        run_round(b, round);
    double m[METRIC_COUNT];
    for (int i = 0; i < METRIC_COUNT; i++)
        m[i] = median(samples[i], ROUNDS);

    double speedup_prn = m[FORGED_UNPROTECT] / m[FORGED_PRN];
    double speedup_chain = m[FORGED_UNPROTECT] / m[FORGED_CHAIN];
    double rx_prn = 100 * m[LEGIT_PRN_WORK] / m[LEGIT_UNPROTECT];
    double rx_chain = 100 * m[LEGIT_CHAIN_WORK] / m[LEGIT_UNPROTECT_CHAIN_PACKET];
    double tx_prn = 100 * m[SEND_PRN_WORK] / m[SEND_PROTECT];
    double tx_chain = 100 * m[SEND_CHAIN_WORK] / m[SEND_PROTECT_CHAIN_PACKET];
    double block_rx = m[LEGIT_UNPROTECT_CHAIN_PACKET] - m[LEGIT_UNPROTECT];
    double block_tx = m[SEND_PROTECT_CHAIN_PACKET] - m[SEND_PROTECT];

    printf("SRTP+ v1 bench: 172-octet G.711 RTP, AES_CM_128_HMAC_SHA1_80, libsrtp %s (OpenSSL),\n"
           "one core, median of %d rounds; chain D=%d r=%d; %d legitimate packets per round\n\n",
           srtp_get_version_string(), ROUNDS, BENCH_CHAIN_DEPTH, BENCH_CHAIN_COPIES, BENCH_PACKETS);
    printf("%-52s %10s %9s %9s\n", "", "ns/packet", "speedup", "overhead");
    printf("%-52s %10.1f %9.1f\n", "forged, rejected by srtp_unprotect (HMAC-SHA1)",
           m[FORGED_UNPROTECT], 1.0);
    printf("%-52s %10.1f %9.1f\n", "forged, rejected by prn check (tag)", m[FORGED_PRN],
           speedup_prn);
    printf("%-52s %10.1f %9.1f\n", "forged, rejected by chain check (tag)", m[FORGED_CHAIN],
           speedup_chain);
    printf("%-52s %10.1f %9.1f\n", "forged, chain, no tag learned yet (budget)",
           m[FORGED_CHAIN_UNLEARNED], m[FORGED_UNPROTECT] / m[FORGED_CHAIN_UNLEARNED]);
    printf("%-52s %10.1f\n", "legit receive: srtp_unprotect", m[LEGIT_UNPROTECT]);
    printf("%-52s %10.1f %9s %8.2f%%\n", "legit receive: + prn check/confirm/refill",
           m[LEGIT_PRN_WORK], "", rx_prn);
    printf("%-52s %10.1f %9s %8.2f%%\n", "legit receive: + chain check/confirm (vs its unprotect)",
           m[LEGIT_CHAIN_WORK], "", rx_chain);
    printf("%-52s %10.1f\n", "legit send: srtp_protect", m[SEND_PROTECT]);
    printf("%-52s %10.1f %9s %8.2f%%\n", "legit send: + prn prepare/tag", m[SEND_PRN_WORK], "",
           tx_prn);
    printf("%-52s %10.1f %9s %8.2f%%\n", "legit send: + chain prepare/tag (vs its protect)",
           m[SEND_CHAIN_WORK], "", tx_chain);
    printf("%-52s %+10.1f %9s %+8.2f%%\n", "chain block's 12 octets in srtp_unprotect", block_rx,
           "", 100 * block_rx / m[LEGIT_UNPROTECT]);
    printf("%-52s %+10.1f %9s %+8.2f%%\n", "chain block's 12 octets in srtp_protect", block_tx, "",
           100 * block_tx / m[SEND_PROTECT]);
    printf("%-52s %10.1f %9s %+8.2f%%\n", "cross-check: prn receive end to end",
           m[LEGIT_PRN_END_TO_END], "",
           100 * (m[LEGIT_PRN_END_TO_END] - m[LEGIT_UNPROTECT]) / m[LEGIT_UNPROTECT]);
    printf("%-52s %10.1f %9s %+8.2f%%\n", "cross-check: chain receive end to end (vs its unprotect)",
           m[LEGIT_CHAIN_END_TO_END], "",
           100 * (m[LEGIT_CHAIN_END_TO_END] - m[LEGIT_UNPROTECT_CHAIN_PACKET]) /
               m[LEGIT_UNPROTECT_CHAIN_PACKET]);
    printf("\nPaper (Garg, Singh, Tsai), Table 1: speedup prn=3.8 chain=16.5, overhead 26%% / 6%%.\n");
    printf("overhead = SRTP+ receive work per legitimate packet / srtp_unprotect of that packet\n");
    printf("speedup prn=%.1f chain=%.1f overhead_prn=%.2f%% overhead_chain=%.2f%%\n", speedup_prn,
           speedup_chain, rx_prn, rx_chain);
    bench_fixture_free(b);
    return 0;
}
