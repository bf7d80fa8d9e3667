/* bench/relay: the routing core's costs.
 *  1. The echo plugin's per-packet path on plugin API v2 (core demux,
 *     on_media) in ns/packet; the same source built against the tree before
 *     the routing core gives the v1 figure (README: bench/relay).
 *  2. Cross-worker relay: one producer thread fanning packets out to N
 *     targets on a consumer thread through the rings; packets delivered per
 *     second and the ring_full drops (the producer never waits).
 *  3. Cross-worker fan-out (fanout_paced): one publisher thread ("worker 0")
 *     at 200 packets/s, in bursts of 10 every 50 ms like a video frame,
 *     to N = 100, 400, 1000 subscribers through a fan-out list (one ring
 *     slot per packet per worker), gateway-sized rings (2048 slots, 1024
 *     buffers): subscribers on worker 0 itself (same_worker), on worker 1
 *     (cross_worker), and on worker 1 through the old per-target entries
 *     (per_target, relay_rtp_many before target sets). Each delivery copies
 *     and rewrites the packet (no SRTP). Prints ring drops and process CPU
 *     per delivered packet; the last line is the ratio at N = 1000.
 * Figures on a shared machine are noisy; compare within one run. No figure
 * is judged, but a part that carried nothing (the echo sent nothing back, a
 * relay or fan-out run delivered no packet) makes the bench exit 1, saying
 * so. */
#include "engine/relay.h"
#include "engine/relay_fanout.h"
#include "bench_quick.h"
#include "echo_path.h"

#include <glib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#define ECHO_PACKETS  2000000u
#define RELAY_PACKETS 200000u

typedef struct {
    atomic_uint_fast64_t delivered;
    atomic_bool done;
} sink;

static bool deliver(void *user, void *target, const uint8_t *data, size_t length)
{
    atomic_fetch_add_explicit(&((sink *)user)->delivered, 1, memory_order_relaxed);
    return true;
}

static void release_target(void *user, void *target) {}

typedef struct {
    moat_relay *relay;
    sink *sink;
} consumer_args;

static gpointer consume(gpointer data)
{
    consumer_args *a = data;
    moat_relay_set_current(1);
    while (!atomic_load(&a->sink->done))
        if (moat_relay_drain(a->relay, 1) == 0)
            g_thread_yield();
    moat_relay_drain(a->relay, 1);
    return NULL;
}

/* Packets delivered. */
static uint64_t relay_run(size_t fanout)
{
    sink s = {0};
    moat_relay_ops ops = {deliver, release_target, NULL, &s};
    moat_relay *relay = moat_relay_new(2, 512, 1024, &ops);
    consumer_args args = {relay, &s};
    GThread *consumer = g_thread_new("consumer", consume, &args);
    moat_relay_set_current(0);
    void *targets[64];
    unsigned consumers[64];
    for (size_t i = 0; i < fanout; i++) {
        targets[i] = &targets[i];
        consumers[i] = 1;
    }
    uint8_t packet[1200];
    memset(packet, 0x5a, sizeof packet);
    gint64 start = g_get_monotonic_time();
    for (unsigned i = 0; i < BENCH_SCALE(RELAY_PACKETS, RELAY_PACKETS / 20); i++) {
        moat_relay_send(relay, NULL, targets, consumers, fanout, packet, sizeof packet);
        /* Paced in bursts like a worker's batches: a full ring drops. */
        if ((i & 63) == 63)
            g_thread_yield();
    }
    atomic_store(&s.done, true);
    g_thread_join(consumer);
    double seconds = (double)(g_get_monotonic_time() - start) / 1e6;
    uint64_t delivered = atomic_load(&s.delivered);
    printf("relay fanout=%zu delivered=%" G_GUINT64_FORMAT
           " per_s=%.0f ring_full=%" G_GUINT64_FORMAT " pool_empty=%" G_GUINT64_FORMAT "\n",
           fanout, (guint64)delivered, delivered / seconds,
           (guint64)moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL),
           (guint64)moat_relay_dropped(relay, MOAT_RELAY_DROP_POOL_EMPTY));
    moat_relay_free(relay);
    moat_relay_set_current(-1);
    return delivered;
}

/* ---- 3. cross-worker fan-out, paced ---- */

#define FANOUT_RING_SLOTS   2048 /* MOAT_GATEWAY_RELAY_RING_SLOTS */
#define FANOUT_POOL_BUFFERS 1024 /* MOAT_GATEWAY_RELAY_POOL_BUFFERS */
#define FANOUT_BURST        10
#define FANOUT_BURST_US     50000 /* 10 packets / 50 ms: 200 packets/s */

typedef enum { SAME_WORKER, CROSS_WORKER, PER_TARGET } fanout_mode;
static const char *const mode_names[] = {"same_worker", "cross_worker", "per_target"};

/* A subscriber: its rewrite state (what room_forward keeps). */
typedef struct {
    uint32_t ssrc;
    uint16_t sequence_delta;
    uint64_t bytes;
} subscriber;

typedef struct {
    atomic_uint_fast64_t delivered;
    atomic_bool done;
    int event_fd; /* consumer wake-ups, as a worker's eventfd */
    moat_relay *relay;
} fanout_sink;

static bool fanout_deliver(void *user, void *target, const uint8_t *data, size_t length)
{
    subscriber *s = target;
    uint8_t copy[MOAT_RELAY_MTU];
    memcpy(copy, data, length);
    uint16_t sequence = (uint16_t)((copy[2] << 8 | copy[3]) + s->sequence_delta);
    copy[2] = (uint8_t)(sequence >> 8);
    copy[3] = (uint8_t)sequence;
    memcpy(copy + 8, &s->ssrc, 4);
    s->bytes += length + copy[length - 1];
    atomic_fetch_add_explicit(&((fanout_sink *)user)->delivered, 1, memory_order_relaxed);
    return true;
}

static void fanout_wake(void *user, unsigned consumer)
{
    uint64_t one = 1;
    if (write(((fanout_sink *)user)->event_fd, &one, sizeof one) < 0)
        return;
}

static gpointer fanout_consume(gpointer data)
{
    fanout_sink *s = data;
    moat_relay_set_current(1);
    struct pollfd p = {.fd = s->event_fd, .events = POLLIN};
    while (!atomic_load(&s->done)) {
        /* Woken by the relay (or by the end of the run), as a worker's
         * epoll wait would be: no idle polling in the CPU figure. */
        if (poll(&p, 1, 1000) > 0) {
            uint64_t n;
            if (read(s->event_fd, &n, sizeof n) < 0)
                break;
        }
        moat_relay_drain(s->relay, 1);
    }
    moat_relay_drain(s->relay, 1);
    return NULL;
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
           ((double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_usec) / 1e6;
}

typedef struct {
    uint64_t delivered, ring_full, pool_empty;
    double ns_per_delivered;
} fanout_result;

static fanout_result fanout_run(fanout_mode mode, size_t n_subs, unsigned bursts)
{
    fanout_sink s = {.event_fd = eventfd(0, EFD_NONBLOCK)};
    moat_relay_ops ops = {fanout_deliver, release_target, fanout_wake, &s};
    moat_relay *relay = moat_relay_new(2, FANOUT_RING_SLOTS, FANOUT_POOL_BUFFERS, &ops);
    s.relay = relay;
    subscriber *subs = g_new0(subscriber, n_subs);
    void **targets = g_new(void *, n_subs);
    unsigned *consumers = g_new(unsigned, n_subs);
    for (size_t i = 0; i < n_subs; i++) {
        subs[i].ssrc = (uint32_t)(0x1000 + i);
        subs[i].sequence_delta = (uint16_t)(i * 7);
        targets[i] = &subs[i];
        consumers[i] = mode == SAME_WORKER ? 0 : 1;
    }
    moat_relay_fanout *fanout = moat_relay_fanout_new(relay, NULL);
    moat_relay_fanout_publish(fanout, targets, consumers, n_subs);
    GThread *consumer = mode == SAME_WORKER ? NULL : g_thread_new("w1", fanout_consume, &s);
    moat_relay_set_current(0);
    uint8_t packet[1200];
    memset(packet, 0x5a, sizeof packet);
    packet[0] = 0x80;
    double cpu0 = cpu_seconds();
    gint64 next = g_get_monotonic_time();
    for (unsigned b = 0; b < bursts; b++) {
        for (unsigned k = 0; k < FANOUT_BURST; k++) {
            uint16_t seq = (uint16_t)(b * FANOUT_BURST + k);
            packet[2] = (uint8_t)(seq >> 8);
            packet[3] = (uint8_t)seq;
            if (mode == PER_TARGET)
                moat_relay_send(relay, NULL, targets, consumers, n_subs, packet, sizeof packet);
            else
                moat_relay_fanout_send(fanout, packet, sizeof packet);
        }
        next += FANOUT_BURST_US;
        gint64 wait = next - g_get_monotonic_time();
        if (wait > 0)
            g_usleep((gulong)wait);
    }
    /* The consumer's last drain belongs to the run. */
    atomic_store(&s.done, true);
    fanout_wake(&s, 1);
    if (consumer)
        g_thread_join(consumer);
    double cpu = cpu_seconds() - cpu0;
    fanout_result r = {
        .delivered = atomic_load(&s.delivered),
        .ring_full = moat_relay_dropped(relay, MOAT_RELAY_DROP_RING_FULL),
        .pool_empty = moat_relay_dropped(relay, MOAT_RELAY_DROP_POOL_EMPTY),
    };
    r.ns_per_delivered = r.delivered ? cpu * 1e9 / (double)r.delivered : 0;
    moat_relay_fanout_free(fanout);
    moat_relay_free(relay);
    moat_relay_set_current(-1);
    close(s.event_fd);
    g_free(subs);
    g_free(targets);
    g_free(consumers);
    return r;
}

/* The cross/same CPU ratio at the largest size; *silent counts the runs
 * that delivered nothing. */
static double fanout_compare(int *silent)
{
    static const size_t sizes[] = {100, 400, 1000};
    unsigned bursts = BENCH_SCALE(100u, 6u); /* 5 s, quick 0.3 s */
    double ratio = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        fanout_result r[3];
        for (int m = 0; m < 3; m++) {
            r[m] = fanout_run((fanout_mode)m, sizes[i], bursts);
            if (r[m].delivered == 0) {
                fprintf(stderr,
                        "relay: no valid measurement: fanout_paced subscribers=%zu mode=%s "
                        "delivered nothing\n",
                        sizes[i], mode_names[m]);
                (*silent)++;
            }
            uint64_t expected = (uint64_t)bursts * FANOUT_BURST * sizes[i];
            printf("fanout_paced subscribers=%zu mode=%s pps=200 delivered=%" G_GUINT64_FORMAT
                   "/%" G_GUINT64_FORMAT " ring_drops=%" G_GUINT64_FORMAT
                   " pool_empty=%" G_GUINT64_FORMAT " cpu_ns_per_delivered=%.0f\n",
                   sizes[i], mode_names[m], (guint64)r[m].delivered, (guint64)expected,
                   (guint64)r[m].ring_full, (guint64)r[m].pool_empty, r[m].ns_per_delivered);
        }
        ratio = r[SAME_WORKER].ns_per_delivered > 0
                    ? r[CROSS_WORKER].ns_per_delivered / r[SAME_WORKER].ns_per_delivered
                    : 0;
        printf(
            "fanout_paced subscribers=%zu cross_over_same_cpu=%.2f "
            "cross_ring_drops=%" G_GUINT64_FORMAT " per_target_ring_drops=%" G_GUINT64_FORMAT "\n",
            sizes[i], ratio, (guint64)r[CROSS_WORKER].ring_full, (guint64)r[PER_TARGET].ring_full);
    }
    return ratio;
}

int main(void)
{
    double best = 1e9;
    for (int i = 0; i < 5; i++) {
        double ns = echo_path_ns(BENCH_SCALE(ECHO_PACKETS, ECHO_PACKETS / 20));
        if (ns < best)
            best = ns;
    }
    printf("echo_path api=v2 ns_per_packet=%.1f (best of 5)\n", best);
    int silent = 0;
    if (best < 0) { /* echo_path_ns: the echo plugin sent nothing back */
        fprintf(stderr, "relay: no valid measurement: the echo plugin sent nothing back\n");
        silent++;
    }
    static const size_t fanouts[] = {1, 8, 32};
    for (size_t i = 0; i < G_N_ELEMENTS(fanouts); i++) {
        if (relay_run(fanouts[i]) == 0) {
            fprintf(stderr, "relay: no valid measurement: fanout=%zu delivered nothing\n",
                    fanouts[i]);
            silent++;
        }
    }
    double ratio = fanout_compare(&silent);
    printf("relay fanout cross_worker subscribers=1000 cpu_per_delivered_vs_same_worker=%.2f "
           "(aim <= 1.2, 0 ring drops)\n",
           ratio);
    return silent ? 1 : 0;
}
