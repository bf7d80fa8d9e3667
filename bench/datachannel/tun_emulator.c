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

/* Packets in flight, both directions together: with one delay for both,
 * arrival order is due order, so one FIFO ring serves. 16 K slots hold
 * more than a 1 MiB SCTP window each way in 1200-byte packets. */
#define RING_SLOTS  16384
#define PACKET_SIZE 2048

typedef struct {
    uint64_t due_ns;
    int destination;
    uint16_t length;
    uint8_t data[PACKET_SIZE];
} in_flight_packet;

struct tun_emulator {
    int tun[2];
    int stop_fd, timer_fd, epoll_fd;
    uint64_t delay_ns;
    in_flight_packet *ring;
    size_t head, count;
    pthread_t thread;
    bool started;
};

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
    if (e->count > 0) {
        uint64_t due = e->ring[e->head].due_ns;
        when.it_value.tv_sec = (time_t)(due / 1000000000ull);
        when.it_value.tv_nsec = (long)(due % 1000000000ull);
    }
    timerfd_settime(e->timer_fd, TFD_TIMER_ABSTIME, &when, NULL);
}

static void deliver_due(tun_emulator *e)
{
    uint64_t now = now_ns();
    while (e->count > 0 && e->ring[e->head].due_ns <= now) {
        in_flight_packet *p = &e->ring[e->head];
        /* A failed write is a lost packet, as on a wire. */
        (void)write(p->destination, p->data, p->length);
        e->head = (e->head + 1) % RING_SLOTS;
        e->count--;
    }
}

static void take_packets(tun_emulator *e, int from)
{
    uint8_t overflow[PACKET_SIZE];
    for (;;) {
        bool room = e->count < RING_SLOTS;
        in_flight_packet *p = room ? &e->ring[(e->head + e->count) % RING_SLOTS] : NULL;
        ssize_t n = read(e->tun[from], room ? p->data : overflow, PACKET_SIZE);
        if (n <= 0)
            return;
        if (!room)
            continue; /* queue overflow: dropped */
        p->length = (uint16_t)n;
        p->destination = e->tun[1 - from];
        p->due_ns = now_ns() + e->delay_ns;
        e->count++;
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
                uint64_t expirations;
                (void)read(e->timer_fd, &expirations, sizeof expirations);
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

tun_emulator *tun_emulator_start(int tun_a, int tun_b, unsigned one_way_delay_us, char *error,
                                 size_t error_size)
{
    tun_emulator *e = calloc(1, sizeof *e);
    if (e == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    e->tun[0] = tun_a;
    e->tun[1] = tun_b;
    e->delay_ns = (uint64_t)one_way_delay_us * 1000ull;
    e->ring = malloc(sizeof(in_flight_packet) * RING_SLOTS);
    e->stop_fd = eventfd(0, EFD_NONBLOCK);
    e->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    e->epoll_fd = epoll_create1(0);
    bool ok = e->ring != NULL && e->stop_fd >= 0 && e->timer_fd >= 0 && e->epoll_fd >= 0;
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

void tun_emulator_stop(tun_emulator *e)
{
    if (e == NULL)
        return;
    if (e->started) {
        uint64_t one = 1;
        (void)write(e->stop_fd, &one, sizeof one);
        pthread_join(e->thread, NULL);
    }
    int fds[] = {e->stop_fd, e->timer_fd, e->epoll_fd};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(e->ring);
    free(e);
}
