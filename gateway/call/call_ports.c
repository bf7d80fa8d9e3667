/* Owns the call legs' port range: a map of even/odd pairs, random picks
 * (getrandom) with a full scan from a random start when they miss, and the
 * binding of each pair's two sockets. */
#include "call/call_ports.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

struct moat_call_ports {
    GMutex lock;
    moat_own_sockets *own; /* not owned; NULL: none */
    struct in6_addr bind_address;
    uint16_t first; /* even */
    uint16_t last;
    size_t n_pairs;
    size_t in_use;
    uint8_t *used; /* one byte per pair; written under lock, read lock-free */
};

static int parse_bind(const char *text, struct in6_addr *out)
{
    if (inet_pton(AF_INET6, text, out) == 1)
        return 0;
    struct in_addr v4;
    if (inet_pton(AF_INET, text, &v4) != 1)
        return -1;
    memset(out, 0, sizeof *out);
    out->s6_addr[10] = 0xff;
    out->s6_addr[11] = 0xff;
    memcpy(&out->s6_addr[12], &v4, 4);
    return 0;
}

moat_call_ports *moat_call_ports_new(const char *bind_address, int port_min, int port_max,
                                     moat_own_sockets *own, char *error, size_t error_size)
{
    int first = port_min + (port_min & 1);
    if (port_min < 1024 || port_max > 65535 || first + 1 > port_max) {
        snprintf(
            error, error_size,
            "[media] port_min %d .. port_max %d: need at least one even/odd pair in 1024-65535",
            port_min, port_max);
        return NULL;
    }
    moat_call_ports *ports = g_new0(moat_call_ports, 1);
    if (parse_bind(bind_address, &ports->bind_address) != 0) {
        snprintf(error, error_size, "[media] bind = \"%s\": not an IP address", bind_address);
        g_free(ports);
        return NULL;
    }
    g_mutex_init(&ports->lock);
    ports->own = own;
    ports->first = (uint16_t)first;
    ports->n_pairs = (size_t)(port_max - first + 1) / 2;
    ports->last = (uint16_t)(first + 2 * ports->n_pairs - 1);
    ports->used = g_new0(uint8_t, ports->n_pairs);
    return ports;
}

void moat_call_ports_free(moat_call_ports *ports)
{
    if (!ports)
        return;
    g_mutex_clear(&ports->lock);
    g_free(ports->used);
    g_free(ports);
}

static int bind_one(const moat_call_ports *ports, uint16_t port)
{
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int off = 0, on = 1;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    /* Each datagram carries the socket's drop count (call_media.c counts
     * what a full queue lost). */
    setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on);
    struct sockaddr_in6 local = {
        .sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = ports->bind_address};
    if (bind(fd, (struct sockaddr *)&local, sizeof local) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Binds both sockets of pair `index`; false when either port is taken. */
static bool bind_pair(const moat_call_ports *ports, size_t index, int *rtp_fd, int *rtcp_fd)
{
    uint16_t port = (uint16_t)(ports->first + 2 * index);
    *rtp_fd = bind_one(ports, port);
    if (*rtp_fd < 0)
        return false;
    *rtcp_fd = bind_one(ports, (uint16_t)(port + 1));
    if (*rtcp_fd >= 0)
        return true;
    close(*rtp_fd);
    return false;
}

static size_t random_index(size_t n)
{
    uint64_t value = 0;
    if (getrandom(&value, sizeof value, 0) != (ssize_t)sizeof value)
        value = (uint64_t)g_random_int() << 32 | g_random_int();
    return (size_t)(value % n);
}

/* Takes pair `index` if it is free and both its ports bind. */
static bool take(moat_call_ports *ports, size_t index, int *rtp_fd, int *rtcp_fd)
{
    if (ports->used[index] || !bind_pair(ports, index, rtp_fd, rtcp_fd))
        return false;
    __atomic_store_n(&ports->used[index], 1, __ATOMIC_RELEASE);
    ports->in_use++;
    uint16_t port = (uint16_t)(ports->first + 2 * index);
    moat_own_sockets_hold(ports->own, port);
    moat_own_sockets_hold(ports->own, (uint16_t)(port + 1));
    return true;
}

#define RANDOM_PICKS 8

uint16_t moat_call_ports_allocate(moat_call_ports *ports, int *rtp_fd, int *rtcp_fd)
{
    size_t chosen = SIZE_MAX;
    g_mutex_lock(&ports->lock);
    for (int pick = 0; pick < RANDOM_PICKS && chosen == SIZE_MAX; pick++) {
        size_t index = random_index(ports->n_pairs);
        if (take(ports, index, rtp_fd, rtcp_fd))
            chosen = index;
    }
    /* A crowded range: every pair once, from a random start. */
    size_t start = random_index(ports->n_pairs);
    for (size_t tried = 0; tried < ports->n_pairs && chosen == SIZE_MAX; tried++) {
        size_t index = (start + tried) % ports->n_pairs;
        if (take(ports, index, rtp_fd, rtcp_fd))
            chosen = index;
    }
    g_mutex_unlock(&ports->lock);
    return chosen == SIZE_MAX ? 0 : (uint16_t)(ports->first + 2 * chosen);
}

uint16_t moat_call_ports_allocate_at(moat_call_ports *ports, uint16_t port, int *rtp_fd,
                                     int *rtcp_fd)
{
    if (port < ports->first || port > ports->last || (port - ports->first) % 2)
        return 0;
    size_t index = (size_t)(port - ports->first) / 2;
    g_mutex_lock(&ports->lock);
    bool taken = take(ports, index, rtp_fd, rtcp_fd);
    g_mutex_unlock(&ports->lock);
    return taken ? port : 0;
}

void moat_call_ports_release(moat_call_ports *ports, uint16_t port, int rtp_fd, int rtcp_fd)
{
    /* Unmarked before the close: once closed, another socket of Moat (an
     * ingest) may bind the port and mark it at once. */
    if (moat_call_ports_holds(ports, port)) {
        moat_own_sockets_release(ports->own, port);
        moat_own_sockets_release(ports->own, (uint16_t)(port + 1));
    }
    if (rtp_fd >= 0)
        close(rtp_fd);
    if (rtcp_fd >= 0)
        close(rtcp_fd);
    if (port < ports->first)
        return;
    size_t index = (size_t)(port - ports->first) / 2;
    g_mutex_lock(&ports->lock);
    if (index < ports->n_pairs && ports->used[index]) {
        __atomic_store_n(&ports->used[index], 0, __ATOMIC_RELEASE);
        ports->in_use--;
    }
    g_mutex_unlock(&ports->lock);
}

size_t moat_call_ports_in_use(moat_call_ports *ports)
{
    g_mutex_lock(&ports->lock);
    size_t n = ports->in_use;
    g_mutex_unlock(&ports->lock);
    return n;
}

size_t moat_call_ports_capacity(const moat_call_ports *ports)
{
    return ports->n_pairs;
}

bool moat_call_ports_holds(const moat_call_ports *ports, uint16_t port)
{
    if (port < ports->first || port > ports->last)
        return false;
    return __atomic_load_n(&ports->used[(size_t)(port - ports->first) / 2], __ATOMIC_ACQUIRE);
}

void moat_call_ports_range(const moat_call_ports *ports, uint16_t *first, uint16_t *last)
{
    *first = ports->first;
    *last = ports->last;
}
