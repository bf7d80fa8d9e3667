/* One media worker with one session whose handshake is bypassed, fed by a
 * generator thread on another core: the packet path of the daemon, measured
 * in isolation. */
#ifndef MOAT_BENCH_FLOOD_FIXTURE_H
#define MOAT_BENCH_FLOOD_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    FLOOD_MODE_OFF,    /* prefilter off: every forged packet reaches srtp_unprotect */
    FLOOD_MODE_LEGACY, /* structural stages and budget only (no SRTP+) */
    FLOOD_MODE_PRN,    /* SRTP+ prn tags, enforcing */
    FLOOD_MODE_CHAIN,  /* SRTP+ chain tags, enforcing */
    FLOOD_MODE_BARE,   /* no session: receive and discard on the same socket path */
    /* The same as legacy, prn and chain with the eBPF socket filter on the
     * worker socket (the call runs alone for 0.3 s first, so the filter
     * knows its index window and tags). */
    FLOOD_MODE_KERNEL_LEGACY,
    FLOOD_MODE_KERNEL_PRN,
    FLOOD_MODE_KERNEL_CHAIN,
    FLOOD_MODE_COUNT
} flood_mode;

typedef struct {
    size_t forged_size;
    double seconds;   /* live phase */
    uint64_t backlog; /* forged packets queued for the cost phase */
    uint16_t port;
    /* Paced phase (0: none): forged packets only, at this rate, while
     * /proc/stat measures the whole machine's CPU. */
    double paced_pps;
    double paced_seconds;
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
    bool unavailable; /* kernel modes without BPF */
    /* Paced phase: busy CPU time of all CPUs (user, system, irq, softirq,
     * steal from /proc/stat) per forged packet sent. */
    uint64_t paced_sent;
    double machine_ns_per_packet;
    /* The same phase, counting only this process (every thread, with the
     * softirq work the tick charges to them) and the ksoftirqd threads:
     * what the flood costs, without the other processes on the machine. */
    double own_ns_per_packet;
    double idle_share; /* idle share of all CPUs during the phase */
} flood_result;

/* CPU time so far: all CPUs busy and idle (/proc/stat, user + nice + system +
 * irq + softirq + steal, and idle + iowait), this process, ksoftirqd. */
typedef struct {
    uint64_t busy_ns, idle_ns, process_ns, ksoftirqd_ns;
} flood_cpu_sample;
void flood_cpu_sample_take(flood_cpu_sample *sample);
/* Fills the paced fields of `result` from two samples. */
void flood_cpu_account(const flood_cpu_sample *before, const flood_cpu_sample *after, uint64_t sent,
                       flood_result *result);
/* The generator alone at the paced rate, its packets dropped by a veth whose
 * peer is down (nothing receives them): its paced fields. Needs the bench's
 * own network namespace (flood_enter_netns); -1 without it. */
int flood_paced_baseline(const flood_options *options, flood_result *result);
/* Moves the process into a network namespace of its own with loopback and
 * that veth; before any thread starts. -1 when not permitted. */
int flood_enter_netns(void);

const char *flood_mode_name(flood_mode mode);
/* Runs one mode; 0 or -1 with a message on stderr. */
int flood_run(flood_mode mode, const flood_options *options, flood_result *result);

#endif
