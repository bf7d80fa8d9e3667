/* A link emulator for kernels without tc netem: a thread carrying IP packets
 * between two TUN devices through a rate-limited bottleneck queue and a fixed
 * one-way delay, counting what it drops. */
#include "tun_emulator.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* Packets in flight per direction. At 1 Gbit/s a direction holds about
 * 12 000 packets of 1200 bytes in 98 ms of one-way delay plus the queue. The
 * TUN devices keep their default MTU (1500). */
#define RING_SLOTS  16384
#define PACKET_SIZE 1536
/* The bottleneck's queue, in time at the link rate: past it, packets are
 * dropped (tail drop), as a router's buffer would. */
#define QUEUE_LIMIT_NS (20ull * 1000000ull)

typedef struct {
    uint64_t due_ns;
    uint16_t length;
    uint8_t data[PACKET_SIZE];
} in_flight_packet;

/* One direction: a FIFO, since with one rate and one delay departure order
 * is arrival order. */
typedef struct {
    in_flight_packet *ring;
    size_t head, count;
    uint64_t link_free_ns; /* when the last packet taken finishes serialising */
    int destination;
    tun_emulator_counters counters; /* written by the thread, read atomically */
} direction;

struct tun_emulator {
    int tun[2];
    int stop_fd, timer_fd, epoll_fd;
    uint64_t delay_ns;
    uint64_t rate_bps; /* 0: unlimited */
    direction way[2];  /* by the TUN packets are read from */
    pthread_t thread;
    bool started;
    uint32_t loss_ppm;     /* atomic: tun_emulator_set_loss */
    uint64_t random_state; /* the emulator thread's */
};

void tun_emulator_set_loss(tun_emulator *e, double loss)
{
    if (e)
        __atomic_store_n(&e->loss_ppm, (uint32_t)(loss * 1e6), __ATOMIC_RELAXED);
}

/* xorshift64*: whether this packet is lost. Emulator thread. */
static bool lost(tun_emulator *e)
{
    uint32_t ppm = __atomic_load_n(&e->loss_ppm, __ATOMIC_RELAXED);
    if (ppm == 0)
        return false;
    uint64_t x = e->random_state ? e->random_state : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    e->random_state = x;
    return (x * 0x2545F4914F6CDD1Dull >> 32) % 1000000u < ppm;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void arm_timer(tun_emulator *e)
{
    struct itimerspec when;
    memset(&when, 0, sizeof when);
    uint64_t due = 0;
    for (int i = 0; i < 2; i++) {
        const direction *d = &e->way[i];
        if (d->count > 0 && (due == 0 || d->ring[d->head].due_ns < due))
            due = d->ring[d->head].due_ns;
    }
    if (due != 0) {
        when.it_value.tv_sec = (time_t)(due / 1000000000ull);
        when.it_value.tv_nsec = (long)(due % 1000000000ull);
    }
    timerfd_settime(e->timer_fd, TFD_TIMER_ABSTIME, &when, NULL);
}

static void deliver_due(tun_emulator *e)
{
    uint64_t now = now_ns();
    for (int i = 0; i < 2; i++) {
        direction *d = &e->way[i];
        while (d->count > 0 && d->ring[d->head].due_ns <= now) {
            in_flight_packet *p = &d->ring[d->head];
            /* A failed write is a lost packet, as on a wire. */
            if (write(d->destination, p->data, p->length) != (ssize_t)p->length)
                __atomic_add_fetch(&d->counters.write_failures, 1, __ATOMIC_RELAXED);
            d->head = (d->head + 1) % RING_SLOTS;
            d->count--;
        }
    }
}

/* When a packet of length bytes taken now leaves the bottleneck, or 0 when
 * the queue is full. */
static uint64_t departure(tun_emulator *e, direction *d, uint64_t now, size_t length)
{
    if (e->rate_bps == 0)
        return now;
    uint64_t start = d->link_free_ns > now ? d->link_free_ns : now;
    if (start - now > QUEUE_LIMIT_NS)
        return 0;
    d->link_free_ns = start + (uint64_t)length * 8ull * 1000000000ull / e->rate_bps;
    return d->link_free_ns;
}

static void take_packets(tun_emulator *e, int from)
{
    uint8_t overflow[PACKET_SIZE];
    direction *d = &e->way[from];
    for (;;) {
        bool room = d->count < RING_SLOTS;
        in_flight_packet *p = room ? &d->ring[(d->head + d->count) % RING_SLOTS] : NULL;
        ssize_t n = read(e->tun[from], room ? p->data : overflow, PACKET_SIZE);
        if (n <= 0)
            return;
        if (!room) {
            __atomic_add_fetch(&d->counters.ring_drops, 1, __ATOMIC_RELAXED);
            continue; /* ring overflow: dropped */
        }
        if (lost(e)) {
            __atomic_add_fetch(&d->counters.random_drops, 1, __ATOMIC_RELAXED);
            continue;
        }
        uint64_t leaves = departure(e, d, now_ns(), (size_t)n);
        if (leaves == 0) {
            __atomic_add_fetch(&d->counters.queue_drops, 1, __ATOMIC_RELAXED);
            continue; /* the bottleneck's queue is full: dropped */
        }
        __atomic_add_fetch(&d->counters.carried, 1, __ATOMIC_RELAXED);
        p->length = (uint16_t)n;
        p->due_ns = leaves + e->delay_ns;
        d->count++;
    }
}

static void *carry(void *arg)
{
    tun_emulator *e = arg;
    struct epoll_event events[4];
    for (;;) {
        arm_timer(e);
        int n = epoll_wait(e->epoll_fd, events, 4, -1);
        if (n < 0 && errno != EINTR)
            return NULL;
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == e->stop_fd)
                return NULL;
            if (fd == e->timer_fd) {
                /* Only clears the expiry count: deliver_due reads the clock.
                 * EAGAIN is a wake-up another read already cleared. */
                uint64_t expirations;
                if (read(e->timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN &&
                    errno != EINTR)
                    return NULL;
            } else {
                take_packets(e, fd == e->tun[0] ? 0 : 1);
            }
        }
        deliver_due(e);
    }
}

static int watch(int epoll_fd, int fd)
{
    struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};
    return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
}

tun_emulator *tun_emulator_start(int tun_a, int tun_b, unsigned one_way_delay_us, uint64_t rate_bps,
                                 char *error, size_t error_size)
{
    tun_emulator *e = calloc(1, sizeof *e);
    if (e == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    e->tun[0] = tun_a;
    e->tun[1] = tun_b;
    e->delay_ns = (uint64_t)one_way_delay_us * 1000ull;
    e->rate_bps = rate_bps;
    for (int i = 0; i < 2; i++) {
        e->way[i].ring = malloc(sizeof(in_flight_packet) * RING_SLOTS);
        e->way[i].destination = e->tun[1 - i];
    }
    e->stop_fd = eventfd(0, EFD_NONBLOCK);
    e->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    e->epoll_fd = epoll_create1(0);
    bool ok = e->way[0].ring != NULL && e->way[1].ring != NULL && e->stop_fd >= 0 &&
              e->timer_fd >= 0 && e->epoll_fd >= 0;
    for (int i = 0; ok && i < 2; i++)
        ok = fcntl(e->tun[i], F_SETFL, fcntl(e->tun[i], F_GETFL) | O_NONBLOCK) == 0 &&
             watch(e->epoll_fd, e->tun[i]) == 0;
    ok = ok && watch(e->epoll_fd, e->stop_fd) == 0 && watch(e->epoll_fd, e->timer_fd) == 0;
    ok = ok && pthread_create(&e->thread, NULL, carry, e) == 0;
    if (!ok) {
        snprintf(error, error_size, "link emulator setup failed: %s", strerror(errno));
        tun_emulator_stop(e);
        return NULL;
    }
    e->started = true;
    return e;
}

void tun_emulator_read_counters(const tun_emulator *e, tun_emulator_counters *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; e != NULL && i < 2; i++) {
        const tun_emulator_counters *c = &e->way[i].counters;
        out->carried += __atomic_load_n(&c->carried, __ATOMIC_RELAXED);
        out->queue_drops += __atomic_load_n(&c->queue_drops, __ATOMIC_RELAXED);
        out->ring_drops += __atomic_load_n(&c->ring_drops, __ATOMIC_RELAXED);
        out->write_failures += __atomic_load_n(&c->write_failures, __ATOMIC_RELAXED);
        out->random_drops += __atomic_load_n(&c->random_drops, __ATOMIC_RELAXED);
    }
}

void tun_emulator_stop(tun_emulator *e)
{
    if (e == NULL)
        return;
    if (e->started) {
        /* The carrier thread waits in epoll_wait, a cancellation point: if
         * the eventfd cannot be written, cancel it rather than join forever. */
        uint64_t one = 1;
        ssize_t n;
        do
            n = write(e->stop_fd, &one, sizeof one);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof one)
            pthread_cancel(e->thread);
        pthread_join(e->thread, NULL);
    }
    int fds[] = {e->stop_fd, e->timer_fd, e->epoll_fd};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(e->way[0].ring);
    free(e->way[1].ring);
    free(e);
}
