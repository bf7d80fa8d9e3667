/* bench/flood: worker CPU nanoseconds per forged packet, one worker on one
 * core and the generator on the other, for the prefilter off, the structural
 * stages and budget only (legacy), SRTP+ prn and chain, and a bare receive
 * and discard loop on the same socket path as the floor, all in one run. The
 * kernel_* modes add the eBPF socket filter to the worker socket: their
 * ns/packet is worker CPU per forged packet sent, since the kernel drops most
 * before the worker sees them. On loopback the kernel's receive work runs on
 * the sender's CPU, so a paced phase also measures whole-machine CPU per
 * forged packet (/proc/stat, every CPU, irq and softirq included) minus the
 * generator's own cost (the same paced generator sending into a veth whose
 * peer is down). The last lines are what CI and people compare:
 *   flood cost_ns off=A legacy=B prn=C chain=D bare=E kernel_legacy=F
 *     kernel_prn=G kernel_chain=H size=N
 *   flood machine_ns bare=.. prn=.. kernel_prn=.. ... generator=.. pps=..
 * No figure is judged, but a mode that measured nothing (no forged packet
 * sent, none read by the worker outside the kernel modes, or no packet of
 * the live call reaching the session) makes the bench exit 1, saying so. */
#include "flood_fixture.h"
#include "bench_quick.h"
#include "srtp/srtp_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(void)
{
    printf("Usage: flood [--size N] [--seconds S] [--rounds R] [--port P]\n"
           "  --size N      forged packet size in bytes (default 1200)\n"
           "  --seconds S   flood duration per mode and round (default 1.5)\n"
           "  --rounds R    rounds over all modes; the median is reported (default 3)\n"
           "  --port P      UDP port of the worker on 127.0.0.1 (default 27900)\n"
           "  --paced-pps R forged packets/s of the paced machine-CPU phase (default 100000;\n"
           "                0: skip it)\n"
           "  --paced-seconds S  its duration per mode and round (default 2)\n");
}

/* What one mode carried over every round. */
typedef struct {
    uint64_t datagrams; /* forged backlog read by the worker */
    uint64_t forged_sent, legit_sent, legit_received;
} mode_traffic;

static void traffic_add(mode_traffic *t, const flood_result *r)
{
    t->datagrams += r->datagrams;
    t->forged_sent += r->forged_sent;
    t->legit_sent += r->legit_sent;
    t->legit_received += r->legit_received;
}

/* Why a mode measured nothing, NULL when it measured: with the kernel
 * filter the worker may read no forged packet at all; bare has no call. */
static const char *unmeasured(flood_mode mode, const mode_traffic *t)
{
    bool kernel = mode == FLOOD_MODE_KERNEL_LEGACY || mode == FLOOD_MODE_KERNEL_PRN ||
                  mode == FLOOD_MODE_KERNEL_CHAIN;
    if (t->forged_sent == 0)
        return "the generator sent no forged packet";
    if (!kernel && t->datagrams == 0)
        return "the worker read none of the forged backlog";
    if (mode != FLOOD_MODE_BARE && (t->legit_sent == 0 || t->legit_received == 0))
        return "no packet of the live call reached the session's plugin";
    return NULL;
}

/* 0, or 1 with the reasons on stderr when a mode measured nothing. */
static int report_unmeasured(const bool *unavailable, const mode_traffic *traffic)
{
    int status = 0;
    for (int mode = 0; mode < FLOOD_MODE_COUNT; mode++) {
        const char *why = unavailable[mode] ? NULL : unmeasured((flood_mode)mode, &traffic[mode]);
        if (why) {
            fprintf(stderr, "flood: no valid measurement: %s: %s\n",
                    flood_mode_name((flood_mode)mode), why);
            status = 1;
        }
    }
    return status;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    flood_options options = {.forged_size = 1200,
                             .seconds = 1.5,
                             .backlog = 60000,
                             .port = 27900,
                             .paced_pps = 100000,
                             .paced_seconds = 2};
    int rounds = 3;
    if (bench_quick()) {
        options.seconds = 0.3;
        options.backlog = 6000;
        options.paced_seconds = 0.5;
        rounds = 1;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            usage();
            return 0;
        } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            options.forged_size = (size_t)atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
            options.seconds = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--paced-pps") && i + 1 < argc) {
            options.paced_pps = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--paced-seconds") && i + 1 < argc) {
            options.paced_seconds = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--port") && i + 1 < argc) {
            options.port = (uint16_t)atoi(argv[++i]);
        } else {
            usage();
            return 2;
        }
    }
    if (options.forged_size < 28 || options.forged_size > 1400 || rounds < 1 || rounds > 15 ||
        options.seconds <= 0 || options.seconds > 30) {
        fprintf(stderr, "flood: size must be 28..1400, rounds 1..15, seconds in (0, 30]\n");
        return 2;
    }
    bool own_netns = options.paced_pps > 0 && flood_enter_netns() == 0;
    if (options.paced_pps > 0 && !own_netns) {
        fprintf(stderr,
                "flood: no network namespace of its own (needs root): paced phase skipped\n");
        options.paced_pps = 0;
    }
    moat_srtp_library_init();
    double cost[FLOOD_MODE_COUNT][15];
    double loss[FLOOD_MODE_COUNT][15];
    double machine[FLOOD_MODE_COUNT][15], own[FLOOD_MODE_COUNT][15];
    double generator[15], generator_own[15], idle_max = 0;
    bool unavailable[FLOOD_MODE_COUNT] = {false};
    mode_traffic traffic[FLOOD_MODE_COUNT];
    memset(traffic, 0, sizeof traffic);
    for (int round = 0; round < rounds; round++) {
        flood_result baseline;
        if (options.paced_pps > 0 && flood_paced_baseline(&options, &baseline) != 0) {
            fprintf(stderr, "flood: paced baseline failed\n");
            return 1;
        }
        generator[round] = baseline.machine_ns_per_packet;
        generator_own[round] = baseline.own_ns_per_packet;
        for (int mode = 0; mode < FLOOD_MODE_COUNT; mode++) {
            flood_result result;
            if (flood_run((flood_mode)mode, &options, &result) != 0)
                return 1;
            unavailable[mode] = result.unavailable;
            cost[mode][round] = result.ns_per_packet;
            loss[mode][round] = result.legit_loss;
            machine[mode][round] = result.machine_ns_per_packet;
            own[mode][round] = result.own_ns_per_packet;
            idle_max = result.idle_share > idle_max ? result.idle_share : idle_max;
            traffic_add(&traffic[mode], &result);
            if (result.unavailable)
                continue;
            fprintf(stderr,
                    "round %d %-6s %7.1f ns/packet over %llu queued; live: %8.0f pkt/s "
                    "received, legit loss %.2f%%\n",
                    round + 1, flood_mode_name((flood_mode)mode), result.ns_per_packet,
                    (unsigned long long)result.datagrams, result.live_datagrams / options.seconds,
                    100.0 * result.legit_loss);
            if (options.paced_pps > 0)
                fprintf(stderr,
                        "round %d %-13s paced %.0f pkt/s: machine %.1f ns/forged packet "
                        "(generator alone %.1f), own %.1f (generator alone %.1f), idle %.0f%%\n",
                        round + 1, flood_mode_name((flood_mode)mode), options.paced_pps,
                        result.machine_ns_per_packet, generator[round], result.own_ns_per_packet,
                        generator_own[round], 100.0 * result.idle_share);
        }
    }
    int status = report_unmeasured(unavailable, traffic);
    double median[FLOOD_MODE_COUNT], worst_loss[FLOOD_MODE_COUNT];
    double machine_median[FLOOD_MODE_COUNT], own_median[FLOOD_MODE_COUNT];
    qsort(generator, (size_t)rounds, sizeof(double), compare);
    qsort(generator_own, (size_t)rounds, sizeof(double), compare);
    double generator_median = generator[rounds / 2],
           generator_own_median = generator_own[rounds / 2];
    for (int mode = 0; mode < FLOOD_MODE_COUNT; mode++) {
        qsort(cost[mode], (size_t)rounds, sizeof(double), compare);
        median[mode] = cost[mode][rounds / 2];
        qsort(machine[mode], (size_t)rounds, sizeof(double), compare);
        machine_median[mode] = machine[mode][rounds / 2] - generator_median;
        qsort(own[mode], (size_t)rounds, sizeof(double), compare);
        own_median[mode] = own[mode][rounds / 2] - generator_own_median;
        worst_loss[mode] = 0;
        for (int r = 0; r < rounds; r++)
            worst_loss[mode] = loss[mode][r] > worst_loss[mode] ? loss[mode][r] : worst_loss[mode];
    }
    printf("\nbench/flood: %zu-byte forged SRTP, worker on CPU 0, generator on CPU 1, "
           "median of %d rounds of %.1f s\n",
           options.forged_size, rounds, options.seconds);
    printf("%-13s %14s %16s %14s %20s\n", "mode", "ns/packet", "vs bare", "vs off",
           "legit loss (worst)");
    for (int mode = 0; mode < FLOOD_MODE_COUNT; mode++) {
        if (unavailable[mode]) {
            printf("%-13s %14s (no BPF: see the message above)\n",
                   flood_mode_name((flood_mode)mode), "-");
            continue;
        }
        printf("%-13s %14.1f %15.2fx %13.2fx %19.2f%%\n", flood_mode_name((flood_mode)mode),
               median[mode], median[mode] / median[FLOOD_MODE_BARE],
               median[mode] / median[FLOOD_MODE_OFF], 100.0 * worst_loss[mode]);
    }
    printf("ratios: off/prn=%.2f (need >= 2)  prn/bare=%.2f (need <= 1.25)  off/chain=%.2f\n",
           median[FLOOD_MODE_OFF] / median[FLOOD_MODE_PRN],
           median[FLOOD_MODE_PRN] / median[FLOOD_MODE_BARE],
           median[FLOOD_MODE_OFF] / median[FLOOD_MODE_CHAIN]);
    printf("flood cost_ns off=%.0f legacy=%.0f prn=%.0f chain=%.0f bare=%.0f kernel_legacy=%.0f "
           "kernel_prn=%.0f kernel_chain=%.0f size=%zu\n",
           median[FLOOD_MODE_OFF], median[FLOOD_MODE_LEGACY], median[FLOOD_MODE_PRN],
           median[FLOOD_MODE_CHAIN], median[FLOOD_MODE_BARE], median[FLOOD_MODE_KERNEL_LEGACY],
           median[FLOOD_MODE_KERNEL_PRN], median[FLOOD_MODE_KERNEL_CHAIN], options.forged_size);
    if (options.paced_pps <= 0)
        return status;
    printf(
        "\nCPU per forged packet, paced at %.0f pkt/s for %.1f s per mode, median of %d rounds,\n"
        "the generator's own cost subtracted (the same paced generator sending into a veth\n"
        "whose peer is down, so nothing receives its packets).\n"
        "  machine: busy time of every CPU from /proc/stat (user, system, irq, softirq,\n"
        "    steal) per forged packet sent; includes every other process on the machine\n"
        "    (most idle share seen: %.0f%%; near 0 means the machine was saturated by other\n"
        "    work and this column is noise). Generator alone: %.1f ns.\n"
        "  own: this process's CPU (all threads, with the softirq work the kernel charged to\n"
        "    them; on loopback the receive path runs in the sender's context) plus every\n"
        "    ksoftirqd thread. Generator alone: %.1f ns.\n",
        options.paced_pps, options.paced_seconds, rounds, 100.0 * idle_max, generator_median,
        generator_own_median);
    printf("%-13s %14s %10s %14s %10s\n", "mode", "machine ns", "vs bare", "own ns", "vs bare");
    for (int mode = 0; mode < FLOOD_MODE_COUNT; mode++) {
        if (unavailable[mode])
            continue;
        printf("%-13s %14.1f %9.2fx %14.1f %9.2fx\n", flood_mode_name((flood_mode)mode),
               machine_median[mode], machine_median[mode] / machine_median[FLOOD_MODE_BARE],
               own_median[mode], own_median[mode] / own_median[FLOOD_MODE_BARE]);
    }
    printf("aim (own): kernel_prn/bare=%.2f kernel_chain/bare=%.2f kernel_legacy/bare=%.2f "
           "(need <= 0.5)\n",
           own_median[FLOOD_MODE_KERNEL_PRN] / own_median[FLOOD_MODE_BARE],
           own_median[FLOOD_MODE_KERNEL_CHAIN] / own_median[FLOOD_MODE_BARE],
           own_median[FLOOD_MODE_KERNEL_LEGACY] / own_median[FLOOD_MODE_BARE]);
    printf("flood machine_ns bare=%.0f prn=%.0f kernel_legacy=%.0f kernel_prn=%.0f "
           "kernel_chain=%.0f generator=%.0f idle_max=%.2f pps=%.0f\n",
           machine_median[FLOOD_MODE_BARE], machine_median[FLOOD_MODE_PRN],
           machine_median[FLOOD_MODE_KERNEL_LEGACY], machine_median[FLOOD_MODE_KERNEL_PRN],
           machine_median[FLOOD_MODE_KERNEL_CHAIN], generator_median, idle_max, options.paced_pps);
    printf("flood own_ns bare=%.0f prn=%.0f kernel_legacy=%.0f kernel_prn=%.0f kernel_chain=%.0f "
           "generator=%.0f pps=%.0f\n",
           own_median[FLOOD_MODE_BARE], own_median[FLOOD_MODE_PRN],
           own_median[FLOOD_MODE_KERNEL_LEGACY], own_median[FLOOD_MODE_KERNEL_PRN],
           own_median[FLOOD_MODE_KERNEL_CHAIN], generator_own_median, options.paced_pps);
    return status;
}
