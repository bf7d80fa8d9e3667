/* One media worker with one session whose handshake is bypassed, fed by a
 * generator thread on another core: the packet path of the daemon, measured
 * in isolation. */
#ifndef MOAT_BENCH_FLOOD_FIXTURE_H
#define MOAT_BENCH_FLOOD_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    FLOOD_MODE_OFF,    /* prefilter off: every forged packet reaches srtp_unprotect */
    FLOOD_MODE_LEGACY, /* structural stages and budget only (no SRTP+) */
    FLOOD_MODE_PRN,    /* SRTP+ prn tags, enforcing */
    FLOOD_MODE_CHAIN,  /* SRTP+ chain tags, enforcing */
    FLOOD_MODE_BARE,   /* no session: receive and discard on the same socket path */
    FLOOD_MODE_COUNT
} flood_mode;

typedef struct {
    size_t forged_size;
    double seconds;   /* live phase */
    uint64_t backlog; /* forged packets queued for the cost phase */
    uint16_t port;
} flood_options;

typedef struct {
    /* Cost phase: a backlog of forged packets drained in full batches. */
    uint64_t worker_cpu_ns;
    uint64_t datagrams;
    /* Live phase: the generator's highest rate with a legitimate call. */
    uint64_t live_datagrams;
    uint64_t forged_sent;
    uint64_t legit_sent;
    uint64_t legit_received;
    double ns_per_packet;
    double legit_loss;
} flood_result;

const char *flood_mode_name(flood_mode mode);
/* Runs one mode; 0 or -1 with a message on stderr. */
int flood_run(flood_mode mode, const flood_options *options, flood_result *result);

#endif
