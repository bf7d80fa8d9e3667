/* moat-tunnel's rule for packets from the peer (tunnel_source.h): IPv4 from
 * --address's subnet (not ours, not its network or broadcast address) and
 * link-local or unspecified IPv6 pass; other sources, other versions and
 * headers that do not fit the message are refused; --allow-any-source lifts
 * the source rule only. */
#include "tunnel_source.h"

#include <glib.h>
#include <string.h>

/* A 28-byte IPv4 UDP packet from a.b.c.d to 10.77.0.1. */
static size_t ipv4_from(uint8_t *p, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    memset(p, 0, 28);
    p[0] = 0x45;
    p[3] = 28;
    p[8] = 64;
    p[9] = 17;
    p[12] = a, p[13] = b, p[14] = c, p[15] = d;
    p[16] = 10, p[17] = 77, p[19] = 1;
    return 28;
}

/* A 48-byte IPv6 packet from first:..:last (8 bytes of payload). */
static size_t ipv6_from(uint8_t *p, uint8_t first, uint8_t second, uint8_t last)
{
    memset(p, 0, 48);
    p[0] = 0x60;
    p[5] = 8;
    p[6] = 17;
    p[8] = first, p[9] = second, p[23] = last;
    p[24] = 0xfe, p[25] = 0x80, p[39] = 1;
    return 48;
}

static tunnel_source_rule rule_for(const char *cidr, bool any)
{
    tunnel_source_rule r;
    g_assert_cmpint(tunnel_source_rule_init(&r, cidr, any), ==, 0);
    return r;
}

static void test_ipv4_sources(void)
{
    tunnel_source_rule r = rule_for("10.77.0.1/24", false);
    uint8_t p[28];
    g_assert_cmpint(tunnel_source_check(&r, p, ipv4_from(p, 10, 77, 0, 2)), ==,
                    TUNNEL_SOURCE_ALLOWED);
    g_assert_cmpint(tunnel_source_check(&r, p, ipv4_from(p, 10, 77, 0, 254)), ==,
                    TUNNEL_SOURCE_ALLOWED);
    /* Ours, the subnet's network and broadcast addresses, other networks. */
    g_assert_cmpint(tunnel_source_check(&r, p, ipv4_from(p, 10, 77, 0, 1)), ==,
                    TUNNEL_SOURCE_FOREIGN);
    g_assert_cmpint(tunnel_source_check(&r, p, ipv4_from(p, 10, 77, 0, 0)), ==,
                    TUNNEL_SOURCE_FOREIGN);
    g_assert_cmpint(tunnel_source_check(&r, p, ipv4_from(p, 10, 77, 0, 255)), ==,
                    TUNNEL_SOURCE_FOREIGN);
    g_assert_cmpint(tunnel_source_check(&r, p, ipv4_from(p, 10, 77, 1, 2)), ==,
                    TUNNEL_SOURCE_FOREIGN);
    g_assert_cmpint(tunnel_source_check(&r, p, ipv4_from(p, 192, 168, 77, 50)), ==,
                    TUNNEL_SOURCE_FOREIGN);
    g_assert_cmpint(tunnel_source_check(&r, p, ipv4_from(p, 127, 0, 0, 1)), ==,
                    TUNNEL_SOURCE_FOREIGN);
    tunnel_source_rule any = rule_for("10.77.0.1/24", true);
    g_assert_cmpint(tunnel_source_check(&any, p, ipv4_from(p, 192, 168, 77, 50)), ==,
                    TUNNEL_SOURCE_ALLOWED);
}

static void test_point_to_point_subnets(void)
{
    uint8_t p[28];
    tunnel_source_rule r31 = rule_for("10.0.0.0/31", false);
    g_assert_cmpint(tunnel_source_check(&r31, p, ipv4_from(p, 10, 0, 0, 1)), ==,
                    TUNNEL_SOURCE_ALLOWED);
    g_assert_cmpint(tunnel_source_check(&r31, p, ipv4_from(p, 10, 0, 0, 0)), ==,
                    TUNNEL_SOURCE_FOREIGN);
    tunnel_source_rule r30 = rule_for("10.0.0.1/30", false);
    g_assert_cmpint(tunnel_source_check(&r30, p, ipv4_from(p, 10, 0, 0, 2)), ==,
                    TUNNEL_SOURCE_ALLOWED);
    g_assert_cmpint(tunnel_source_check(&r30, p, ipv4_from(p, 10, 0, 0, 3)), ==,
                    TUNNEL_SOURCE_FOREIGN);
    tunnel_source_rule r32 = rule_for("10.0.0.1", false);
    g_assert_cmpint(tunnel_source_check(&r32, p, ipv4_from(p, 10, 0, 0, 2)), ==,
                    TUNNEL_SOURCE_FOREIGN);
}

static void test_ipv6_sources(void)
{
    tunnel_source_rule r = rule_for("10.77.0.1/24", false);
    uint8_t p[48];
    g_assert_cmpint(tunnel_source_check(&r, p, ipv6_from(p, 0xfe, 0x80, 2)), ==,
                    TUNNEL_SOURCE_ALLOWED);
    g_assert_cmpint(tunnel_source_check(&r, p, ipv6_from(p, 0, 0, 0)), ==, TUNNEL_SOURCE_ALLOWED);
    g_assert_cmpint(tunnel_source_check(&r, p, ipv6_from(p, 0x20, 0x01, 2)), ==,
                    TUNNEL_SOURCE_FOREIGN);
    g_assert_cmpint(tunnel_source_check(&r, p, ipv6_from(p, 0xfd, 0, 2)), ==,
                    TUNNEL_SOURCE_FOREIGN);
    g_assert_cmpint(tunnel_source_check(&r, p, ipv6_from(p, 0, 0, 1)), ==, /* ::1 */
                    TUNNEL_SOURCE_FOREIGN);
    tunnel_source_rule any = rule_for("10.77.0.1/24", true);
    g_assert_cmpint(tunnel_source_check(&any, p, ipv6_from(p, 0x20, 0x01, 2)), ==,
                    TUNNEL_SOURCE_ALLOWED);
}

static void test_headers_must_fit(void)
{
    tunnel_source_rule any = rule_for("10.77.0.1/24", true);
    uint8_t p[64];
    g_assert_cmpint(tunnel_source_check(&any, p, 0), ==, TUNNEL_SOURCE_NOT_IP);
    p[0] = 0x00;
    g_assert_cmpint(tunnel_source_check(&any, p, 1), ==, TUNNEL_SOURCE_NOT_IP);
    memset(p, 'x', sizeof p);
    p[0] = 0x70;
    g_assert_cmpint(tunnel_source_check(&any, p, 41), ==, TUNNEL_SOURCE_NOT_IP);
    size_t n = ipv4_from(p, 10, 77, 0, 2);
    g_assert_cmpint(tunnel_source_check(&any, p, 19), ==, TUNNEL_SOURCE_NOT_IP);
    p[0] = 0x44; /* a 16-byte header */
    g_assert_cmpint(tunnel_source_check(&any, p, n), ==, TUNNEL_SOURCE_NOT_IP);
    p[0] = 0x48; /* a 32-byte header in 28 bytes */
    g_assert_cmpint(tunnel_source_check(&any, p, n), ==, TUNNEL_SOURCE_NOT_IP);
    p[0] = 0x45;
    p[2] = 0x03, p[3] = 0xe8; /* total length 1000 */
    g_assert_cmpint(tunnel_source_check(&any, p, n), ==, TUNNEL_SOURCE_NOT_IP);
    p[2] = 0, p[3] = 16; /* shorter than its header */
    g_assert_cmpint(tunnel_source_check(&any, p, n), ==, TUNNEL_SOURCE_NOT_IP);
    p[3] = 20; /* a header alone; the rest of the message is padding */
    g_assert_cmpint(tunnel_source_check(&any, p, n), ==, TUNNEL_SOURCE_ALLOWED);
    n = ipv6_from(p, 0xfe, 0x80, 2);
    g_assert_cmpint(tunnel_source_check(&any, p, 39), ==, TUNNEL_SOURCE_NOT_IP);
    g_assert_cmpint(tunnel_source_check(&any, p, n - 1), ==, TUNNEL_SOURCE_NOT_IP);
    g_assert_cmpint(tunnel_source_check(&any, p, n), ==, TUNNEL_SOURCE_ALLOWED);
}

static void test_bad_addresses(void)
{
    tunnel_source_rule r;
    g_assert_cmpint(tunnel_source_rule_init(&r, "10.77.0.1/33", false), ==, -1);
    g_assert_cmpint(tunnel_source_rule_init(&r, "10.77.0.1/0", false), ==, -1);
    g_assert_cmpint(tunnel_source_rule_init(&r, "fd00::1/64", false), ==, -1);
    g_assert_cmpint(tunnel_source_rule_init(&r, "/24", false), ==, -1);
    g_assert_cmpint(tunnel_source_rule_init(&r, NULL, false), ==, -1);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tunnel_source/ipv4_sources", test_ipv4_sources);
    g_test_add_func("/tunnel_source/point_to_point_subnets", test_point_to_point_subnets);
    g_test_add_func("/tunnel_source/ipv6_sources", test_ipv6_sources);
    g_test_add_func("/tunnel_source/headers_must_fit", test_headers_must_fit);
    g_test_add_func("/tunnel_source/bad_addresses", test_bad_addresses);
    return g_test_run();
}
