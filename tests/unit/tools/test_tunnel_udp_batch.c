/* moat-tunnel's UDP batch over loopback: datagrams queued past the batch's
 * size, one over a slot's size in the middle, and a shorter last one leave
 * in order and byte-exact, with GSO (when the kernel knows it) and
 * without; tunnel_udp_read returns them in order with their source. */
#include "tunnel_udp_batch.h"

#include <arpa/inet.h>
#include <glib.h>
#include <string.h>
#include <unistd.h>

#define COUNT 70

static int bound(struct sockaddr_in6 *address)
{
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    g_assert_cmpint(fd, >=, 0);
    int buffer = 1 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    struct sockaddr_in6 any = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    g_assert_cmpint(bind(fd, (struct sockaddr *)&any, sizeof any), ==, 0);
    socklen_t length = sizeof *address;
    g_assert_cmpint(getsockname(fd, (struct sockaddr *)address, &length), ==, 0);
    return fd;
}

static size_t length_of(unsigned i)
{
    if (i == COUNT / 2)
        return 3000; /* over a slot: leaves at once, after what waits */
    return i == COUNT - 1 ? 700 : 1229;
}

static void fill(uint8_t *data, unsigned i, size_t length)
{
    for (size_t k = 0; k < length; k++)
        data[k] = (uint8_t)(i * 7 + k);
}

static void run(bool gso)
{
    struct sockaddr_in6 from_address, to_address;
    int sender = bound(&from_address), receiver = bound(&to_address);
    tunnel_udp_batch *b = tunnel_udp_batch_new(sender);
    if (!gso)
        b->gso = false;
    uint8_t data[3000];
    for (unsigned i = 0; i < COUNT; i++) {
        fill(data, i, length_of(i));
        tunnel_udp_batch_add(b, data, length_of(i), &to_address);
    }
    g_assert_cmpuint(b->count, >, 0); /* the last ones wait for the flush */
    tunnel_udp_batch_flush(b);
    g_assert_cmpuint(b->count, ==, 0);
    g_assert_cmpuint(b->dropped, ==, 0);

    tunnel_udp_reads *r = g_malloc(sizeof *r);
    unsigned got = 0;
    while (got < COUNT) {
        unsigned n = tunnel_udp_read(receiver, r, 0);
        g_assert_cmpuint(n, >, 0);
        g_assert_cmpuint(n, <=, TUNNEL_UDP_READ_BATCH);
        for (unsigned k = 0; k < n; k++, got++) {
            g_assert_cmpuint(r->headers[k].msg_len, ==, length_of(got));
            fill(data, got, length_of(got));
            g_assert_cmpmem(r->data[k], r->headers[k].msg_len, data, length_of(got));
            g_assert_cmpint(r->from[k].sin6_port, ==, from_address.sin6_port);
        }
    }
    g_assert_cmpuint(tunnel_udp_read(receiver, r, 1), ==, 0); /* nothing more */
    g_free(r);
    g_free(b);
    close(sender);
    close(receiver);
}

static void test_gso(void)
{
    run(true);
}

static void test_plain(void)
{
    run(false);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tunnel/udp_batch/gso", test_gso);
    g_test_add_func("/tunnel/udp_batch/plain", test_plain);
    return g_test_run();
}
