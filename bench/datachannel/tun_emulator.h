/* A link emulator for kernels without tc netem: a thread that carries every
 * IP packet between two TUN devices (one in each network namespace) through
 * a bottleneck of a fixed rate (each direction its own) and then a fixed
 * one-way delay, in order, dropping what overflows the bottleneck's queue
 * (20 ms at the rate). */
#ifndef BENCH_DATACHANNEL_TUN_EMULATOR_H
#define BENCH_DATACHANNEL_TUN_EMULATOR_H

#include <stddef.h>
#include <stdint.h>

typedef struct tun_emulator tun_emulator;

/* tun_a and tun_b are open TUN devices (IFF_TUN | IFF_NO_PI); they are made
 * non-blocking and stay owned by the caller. rate_bps 0: no rate limit.
 * NULL with a reason in error. */
tun_emulator *tun_emulator_start(int tun_a, int tun_b, unsigned one_way_delay_us, uint64_t rate_bps,
                                 char *error, size_t error_size);

/* Drops each packet with probability loss (0..1, both directions), as a
 * lossy link would, before the bottleneck; counted in random_drops. Any
 * thread. */
void tun_emulator_set_loss(tun_emulator *emulator, double loss);

/* Packets carried and lost, both directions together. */
typedef struct {
    uint64_t carried;
    uint64_t queue_drops;    /* the bottleneck's queue was full */
    uint64_t ring_drops;     /* more packets in flight than the emulator holds */
    uint64_t write_failures; /* the destination TUN refused the packet */
    uint64_t random_drops;   /* tun_emulator_set_loss */
} tun_emulator_counters;

/* Any thread. All zero for NULL. */
void tun_emulator_read_counters(const tun_emulator *emulator, tun_emulator_counters *out);

/* Stops and joins the thread; packets still in flight are dropped. */
void tun_emulator_stop(tun_emulator *emulator);

#endif
