/* moat-tunnel's lane per flow (tunnel_flows.h): new flows go to the lane
 * with the fewest, keep it, and are forgotten when idle; what is no flow
 * goes to lane 0; a crowded table falls back to the flow key's lane. */
#include "tunnel_flows.h"

#include <glib.h>
#include <string.h>

/* A TCP packet from 10.0.0.1:sport to 10.0.0.2:dport. */
static size_t tcp(uint8_t *p, uint16_t sport, uint16_t dport)
{
    memset(p, 0, 60);
    p[0] = 0x45;
    p[9] = 6;
    p[12] = 10, p[15] = 1;
    p[16] = 10, p[19] = 2;
    p[20] = (uint8_t)(sport >> 8), p[21] = (uint8_t)sport;
    p[22] = (uint8_t)(dport >> 8), p[23] = (uint8_t)dport;
    return 60;
}

static void test_new_flows_fill_every_lane(void)
{
    static tunnel_flows flows;
    tunnel_flows_init(&flows, 0);
    uint8_t p[60];
    unsigned used[8] = {0}, lane_of[10];
    /* Ten flows with even source ports (Linux's connect()), as bench/tunnel's. */
    for (unsigned i = 0; i < 10; i++) {
        lane_of[i] = tunnel_flows_lane(&flows, p, tcp(p, (uint16_t)(40000 + 2 * i), 5201), 8, 1);
        g_assert_cmpuint(lane_of[i], <, 8);
        used[lane_of[i]]++;
    }
    for (unsigned l = 0; l < 8; l++)
        g_assert_cmpuint(used[l], >=, 1);
    for (unsigned l = 0; l < 8; l++)
        g_assert_cmpuint(used[l], <=, 2);
    /* Every later packet of a flow takes its lane. */
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned i = 0; i < 10; i++)
            g_assert_cmpuint(
                tunnel_flows_lane(&flows, p, tcp(p, (uint16_t)(40000 + 2 * i), 5201), 8, 2 + round),
                ==, lane_of[i]);
    }
}

static void test_idle_flows_are_forgotten(void)
{
    static tunnel_flows flows;
    tunnel_flows_init(&flows, 0);
    uint8_t p[60];
    unsigned a = tunnel_flows_lane(&flows, p, tcp(p, 1000, 80), 2, 0);
    unsigned b = tunnel_flows_lane(&flows, p, tcp(p, 1002, 80), 2, 0);
    g_assert_cmpuint(a, !=, b);
    /* b keeps sending, a goes quiet past the idle time. */
    for (double t = 5; t < TUNNEL_FLOW_IDLE_S + 10; t += 5)
        g_assert_cmpuint(tunnel_flows_lane(&flows, p, tcp(p, 1002, 80), 2, t), ==, b);
    g_assert_cmpuint(flows.live[a], ==, 0);
    g_assert_cmpuint(flows.live[b], ==, 1);
    /* A new flow takes the lane a left. */
    g_assert_cmpuint(tunnel_flows_lane(&flows, p, tcp(p, 1004, 80), 2, TUNNEL_FLOW_IDLE_S + 11), ==,
                     a);
}

static void test_no_flow_and_one_lane(void)
{
    static tunnel_flows flows;
    tunnel_flows_init(&flows, 0);
    uint8_t p[60];
    size_t n = tcp(p, 1000, 80);
    p[9] = 1; /* ICMP */
    g_assert_cmpuint(tunnel_flows_lane(&flows, p, n, 8, 0), ==, 0);
    g_assert_cmpuint(tunnel_flows_lane(&flows, p, 3, 8, 0), ==, 0); /* truncated */
    g_assert_cmpuint(tunnel_flows_lane(&flows, NULL, 0, 8, 0), ==, 0);
    n = tcp(p, 1000, 80);
    g_assert_cmpuint(tunnel_flows_lane(&flows, p, n, 1, 0), ==, 0);
    g_assert_cmpuint(tunnel_flows_lane(&flows, p, n, 0, 0), ==, 0);
    /* More lanes than the tool has: capped. */
    g_assert_cmpuint(tunnel_flows_lane(&flows, p, n, 1000, 0), <, TUNNEL_MAX_LANES);
}

static void test_crowded_table(void)
{
    static tunnel_flows flows;
    tunnel_flows_init(&flows, 0);
    uint8_t p[60];
    /* Twice the slots in flows: the later ones fall back to their key's
     * lane; every answer is a lane, and the first flow keeps its own. */
    unsigned first = tunnel_flows_lane(&flows, p, tcp(p, 1, 80), 8, 0);
    for (unsigned i = 0; i < 2 * TUNNEL_FLOW_SLOTS; i++) {
        size_t n = tcp(p, (uint16_t)(2 + i % 60000), (uint16_t)(81 + i / 60000));
        g_assert_cmpuint(tunnel_flows_lane(&flows, p, n, 8, 0), <, 8);
    }
    g_assert_cmpuint(tunnel_flows_lane(&flows, p, tcp(p, 1, 80), 8, 0), ==, first);
    unsigned total = 0;
    for (unsigned l = 0; l < 8; l++)
        total += flows.live[l];
    g_assert_cmpuint(total, <=, TUNNEL_FLOW_SLOTS);
    /* All idle: the sweep empties the table. */
    tunnel_flows_lane(&flows, p, tcp(p, 1, 80), 8, TUNNEL_FLOW_IDLE_S + 2);
    total = 0;
    for (unsigned l = 0; l < 8; l++)
        total += flows.live[l];
    g_assert_cmpuint(total, ==, 1);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tunnel-flows/fill-every-lane", test_new_flows_fill_every_lane);
    g_test_add_func("/tunnel-flows/idle", test_idle_flows_are_forgotten);
    g_test_add_func("/tunnel-flows/no-flow", test_no_flow_and_one_lane);
    g_test_add_func("/tunnel-flows/crowded", test_crowded_table);
    return g_test_run();
}
