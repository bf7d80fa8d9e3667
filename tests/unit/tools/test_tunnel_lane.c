/* moat-tunnel's lane of a packet (tunnel_lane.h): the same lane for every
 * packet of a TCP or UDP flow, both ways, over IPv4 and IPv6; flows spread
 * over the lanes; fragments, other protocols, IPv6 extension headers and
 * truncated packets on lane 0. */
#include "tunnel_lane.h"

#include <glib.h>
#include <string.h>

/* An IPv4 packet of `protocol` from 10.0.0.a:sport to 10.0.0.b:dport. */
static size_t ipv4(uint8_t *p, uint8_t protocol, uint8_t a, uint16_t sport, uint8_t b,
                   uint16_t dport)
{
    memset(p, 0, 60);
    p[0] = 0x45;
    p[9] = protocol;
    p[12] = 10, p[15] = a;
    p[16] = 10, p[19] = b;
    p[20] = (uint8_t)(sport >> 8), p[21] = (uint8_t)sport;
    p[22] = (uint8_t)(dport >> 8), p[23] = (uint8_t)dport;
    return 60;
}

static size_t ipv6(uint8_t *p, uint8_t next, uint8_t a, uint16_t sport, uint8_t b, uint16_t dport)
{
    memset(p, 0, 80);
    p[0] = 0x60;
    p[6] = next;
    p[8] = 0xfd, p[23] = a;
    p[24] = 0xfd, p[39] = b;
    p[40] = (uint8_t)(sport >> 8), p[41] = (uint8_t)sport;
    p[42] = (uint8_t)(dport >> 8), p[43] = (uint8_t)dport;
    return 80;
}

static void test_flows_keep_their_lane(void)
{
    uint8_t p[80], q[80];
    unsigned used[4] = {0};
    for (uint16_t port = 40000; port < 40064; port++) {
        size_t n = ipv4(p, 6, 1, port, 2, 5201);
        unsigned lane = tunnel_lane_of(p, n, 4);
        g_assert_cmpuint(lane, <, 4);
        used[lane]++;
        /* The payload changes nothing; the reply takes the same lane. */
        p[40] = 0xff;
        g_assert_cmpuint(tunnel_lane_of(p, n, 4), ==, lane);
        n = ipv4(q, 6, 2, 5201, 1, port);
        g_assert_cmpuint(tunnel_lane_of(q, n, 4), ==, lane);
        n = ipv6(p, 17, 1, port, 2, 53);
        lane = tunnel_lane_of(p, n, 4);
        n = ipv6(q, 17, 2, 53, 1, port);
        g_assert_cmpuint(tunnel_lane_of(q, n, 4), ==, lane);
    }
    /* 64 flows spread over all four lanes. */
    for (int i = 0; i < 4; i++)
        g_assert_cmpuint(used[i], >, 4);
}

/* Linux gives connect() even ports: flows from one host to one port
 * differ in even source ports alone, and still use every one of 8 lanes
 * (FNV-1a's low bits alone used half of them). */
static void test_even_ports_use_every_lane(void)
{
    uint8_t p[80];
    unsigned used[8] = {0};
    for (uint16_t port = 40000; port < 40000 + 2 * 64; port += 2)
        used[tunnel_lane_of(p, ipv4(p, 6, 1, port, 2, 5201), 8)]++;
    for (int i = 0; i < 8; i++)
        g_assert_cmpuint(used[i], >, 2);
}

static void test_lane_zero(void)
{
    uint8_t p[80];
    size_t n;
    /* One lane, or nothing to read. */
    n = ipv4(p, 6, 1, 1234, 2, 80);
    g_assert_cmpuint(tunnel_lane_of(p, n, 1), ==, 0);
    g_assert_cmpuint(tunnel_lane_of(p, n, 0), ==, 0);
    g_assert_cmpuint(tunnel_lane_of(NULL, 0, 4), ==, 0);
    /* Find a flow off lane 0, then make it what must go to lane 0. */
    uint16_t port = 1000;
    while (tunnel_lane_of(p, ipv4(p, 6, 1, port, 2, 80), 4) == 0)
        port++;
    n = ipv4(p, 6, 1, port, 2, 80);
    p[6] = 0x20; /* more fragments */
    g_assert_cmpuint(tunnel_lane_of(p, n, 4), ==, 0);
    n = ipv4(p, 6, 1, port, 2, 80);
    p[7] = 0x10; /* a later fragment */
    g_assert_cmpuint(tunnel_lane_of(p, n, 4), ==, 0);
    n = ipv4(p, 1, 1, port, 2, 80); /* ICMP */
    g_assert_cmpuint(tunnel_lane_of(p, n, 4), ==, 0);
    n = ipv4(p, 6, 1, port, 2, 80);
    g_assert_cmpuint(tunnel_lane_of(p, 22, 4), ==, 0); /* truncated ports */
    p[0] = 0x4f;                                       /* a 60-byte header: ports past the end */
    g_assert_cmpuint(tunnel_lane_of(p, n, 4), ==, 0);
    p[0] = 0x44; /* a header shorter than 20 bytes */
    g_assert_cmpuint(tunnel_lane_of(p, n, 4), ==, 0);
    p[0] = 0x55; /* not IPv4 or IPv6 */
    g_assert_cmpuint(tunnel_lane_of(p, n, 4), ==, 0);
    port = 1000;
    while (tunnel_lane_of(p, ipv6(p, 6, 1, port, 2, 80), 4) == 0)
        port++;
    n = ipv6(p, 44, 1, port, 2, 80); /* a fragment header */
    g_assert_cmpuint(tunnel_lane_of(p, n, 4), ==, 0);
    n = ipv6(p, 6, 1, port, 2, 80);
    g_assert_cmpuint(tunnel_lane_of(p, 43, 4), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tunnel-lane/even-ports", test_even_ports_use_every_lane);
    g_test_add_func("/tunnel/lane/flows_keep_their_lane", test_flows_keep_their_lane);
    g_test_add_func("/tunnel/lane/lane_zero", test_lane_zero);
    return g_test_run();
}
