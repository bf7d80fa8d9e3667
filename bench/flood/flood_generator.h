/* The attacker and the legitimate caller of bench/flood, on one socket: forged
 * SRTP at the highest rate sendmmsg allows, and a legitimate 50 packet/s
 * stream protected with the session's real keys (and SRTP+ when negotiated). */
#ifndef MOAT_BENCH_FLOOD_GENERATOR_H
#define MOAT_BENCH_FLOOD_GENERATOR_H

#include "srtp/srtp_keying.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct srtpplus_sender;

typedef struct {
    int fd; /* connected to the worker */
    size_t forged_size;
    double seconds;
    uint32_t ssrc;
    const moat_srtp_keying *keys;     /* the gateway's view: remote = what we send with */
    struct srtpplus_sender *srtpplus; /* NULL without SRTP+ */
    uint64_t forged_sent;
    uint64_t legit_sent;
    uint16_t next_sequence; /* of the legitimate stream, kept across calls (0: start) */
} flood_generator;

/* The live run: forged packets at the highest rate plus the legitimate
 * stream, for `seconds`, on the calling thread. */
int flood_generator_run(flood_generator *generator);
/* Exactly `count` forged packets as fast as possible, nothing else. */
int flood_generator_burst(flood_generator *generator, uint64_t count);
/* The legitimate stream alone for `seconds`, so the gateway authenticates it
 * (and a kernel filter learns its index window and tags). */
int flood_generator_warm(flood_generator *generator, double seconds);
/* Forged packets only, at `pps` in small batches on an absolute-time pace. */
int flood_generator_paced(flood_generator *generator, double pps, double seconds);

#endif
