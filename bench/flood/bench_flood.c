/* bench/flood: worker CPU nanoseconds per forged packet, one worker on one
 * core and the generator on the other, for the prefilter off, the structural
 * stages and budget only (legacy), SRTP+ prn and chain, and a bare receive
 * and discard loop on the same socket path as the floor, all in one run. The
 * last line is what CI and people compare:
 *   flood cost_ns off=A legacy=B prn=C chain=D bare=E size=N */
#include "flood_fixture.h"
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
           "  --port P      UDP port of the worker on 127.0.0.1 (default 27900)\n");
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    flood_options options = {.forged_size = 1200, .seconds = 1.5, .backlog = 60000, .port = 27900};
    int rounds = 3;
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
    moat_srtp_library_init();
    double cost[FLOOD_MODE_COUNT][15];
    double loss[FLOOD_MODE_COUNT][15];
    uint64_t datagrams[FLOOD_MODE_COUNT] = {0};
    for (int round = 0; round < rounds; round++) {
        for (int mode = 0; mode < FLOOD_MODE_COUNT; mode++) {
            flood_result result;
            if (flood_run((flood_mode)mode, &options, &result) != 0)
                return 1;
            cost[mode][round] = result.ns_per_packet;
            loss[mode][round] = result.legit_loss;
            datagrams[mode] += result.datagrams;
            fprintf(stderr,
                    "round %d %-6s %7.1f ns/packet over %llu queued; live: %8.0f pkt/s "
                    "received, legit loss %.2f%%\n",
                    round + 1, flood_mode_name((flood_mode)mode), result.ns_per_packet,
                    (unsigned long long)result.datagrams, result.live_datagrams / options.seconds,
                    100.0 * result.legit_loss);
        }
    }
    double median[FLOOD_MODE_COUNT], worst_loss[FLOOD_MODE_COUNT];
    for (int mode = 0; mode < FLOOD_MODE_COUNT; mode++) {
        qsort(cost[mode], (size_t)rounds, sizeof(double), compare);
        median[mode] = cost[mode][rounds / 2];
        worst_loss[mode] = 0;
        for (int r = 0; r < rounds; r++)
            worst_loss[mode] = loss[mode][r] > worst_loss[mode] ? loss[mode][r] : worst_loss[mode];
    }
    printf("\nbench/flood: %zu-byte forged SRTP, worker on CPU 0, generator on CPU 1, "
           "median of %d rounds of %.1f s\n",
           options.forged_size, rounds, options.seconds);
    printf("%-8s %14s %16s %14s %20s\n", "mode", "ns/packet", "vs bare", "vs off",
           "legit loss (worst)");
    for (int mode = 0; mode < FLOOD_MODE_COUNT; mode++) {
        printf("%-8s %14.1f %15.2fx %13.2fx %19.2f%%\n", flood_mode_name((flood_mode)mode),
               median[mode], median[mode] / median[FLOOD_MODE_BARE],
               median[mode] / median[FLOOD_MODE_OFF], 100.0 * worst_loss[mode]);
    }
    printf("ratios: off/prn=%.2f (need >= 2)  prn/bare=%.2f (need <= 1.25)  off/chain=%.2f\n",
           median[FLOOD_MODE_OFF] / median[FLOOD_MODE_PRN],
           median[FLOOD_MODE_PRN] / median[FLOOD_MODE_BARE],
           median[FLOOD_MODE_OFF] / median[FLOOD_MODE_CHAIN]);
    printf("flood cost_ns off=%.0f legacy=%.0f prn=%.0f chain=%.0f bare=%.0f size=%zu\n",
           median[FLOOD_MODE_OFF], median[FLOOD_MODE_LEGACY], median[FLOOD_MODE_PRN],
           median[FLOOD_MODE_CHAIN], median[FLOOD_MODE_BARE], options.forged_size);
    return 0;
}
