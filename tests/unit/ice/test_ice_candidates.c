/* Host addresses from getifaddrs and RFC 8445 host priorities. */
#include "ice/ice_candidates.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include <glib.h>

#define MAX_ADDRESSES 64

static bool listed(const moat_ice_address *list, int count, const char *text)
{
    for (int i = 0; i < count; i++) {
        if (strcmp(list[i].text, text) == 0)
            return true;
    }
    return false;
}

static void assert_consistent(const moat_ice_address *a)
{
    char text[INET6_ADDRSTRLEN];
    g_assert_cmpint(a->address.ss_family, ==,
                    a->length == sizeof(struct sockaddr_in) ? AF_INET : AF_INET6);
    if (a->address.ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)&a->address;
        g_assert_cmpuint(v4->sin_port, ==, 0);
        g_assert_nonnull(inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text));
    } else {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&a->address;
        g_assert_cmpuint(a->length, ==, sizeof *v6);
        g_assert_cmpuint(v6->sin6_port, ==, 0);
        g_assert_false(IN6_IS_ADDR_LINKLOCAL(&v6->sin6_addr));
        g_assert_nonnull(inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text));
    }
    g_assert_cmpstr(a->text, ==, text);
}

static void test_loopback_included(void)
{
    moat_ice_address list[MAX_ADDRESSES];
    int count = moat_ice_host_addresses(list, MAX_ADDRESSES, true, true);
    g_assert_cmpint(count, >=, 1);
    g_assert_true(listed(list, count, "127.0.0.1"));
    for (int i = 0; i < count; i++) {
        assert_consistent(&list[i]);
        for (int k = 0; k < i; k++)
            g_assert_cmpstr(list[k].text, !=, list[i].text);
    }
}

static void test_loopback_excluded(void)
{
    moat_ice_address list[MAX_ADDRESSES];
    int count = moat_ice_host_addresses(list, MAX_ADDRESSES, false, true);
    g_assert_cmpint(count, >=, 0);
    for (int i = 0; i < count; i++) {
        assert_consistent(&list[i]);
        g_assert_false(g_str_has_prefix(list[i].text, "127."));
        g_assert_cmpstr(list[i].text, !=, "::1");
    }
}

static void test_ipv4_only(void)
{
    moat_ice_address list[MAX_ADDRESSES];
    int count = moat_ice_host_addresses(list, MAX_ADDRESSES, true, false);
    g_assert_cmpint(count, >=, 1);
    for (int i = 0; i < count; i++)
        g_assert_cmpint(list[i].address.ss_family, ==, AF_INET);
}

static void test_capacity(void)
{
    moat_ice_address list[MAX_ADDRESSES];
    int all = moat_ice_host_addresses(list, MAX_ADDRESSES, true, true);
    g_assert_cmpint(moat_ice_host_addresses(list, 0, true, true), ==, 0);
    moat_ice_address guarded[2];
    memset(&guarded[1], 0x77, sizeof guarded[1]);
    g_assert_cmpint(moat_ice_host_addresses(guarded, 1, true, true), ==, all > 0 ? 1 : 0);
    const uint8_t *tail = (const uint8_t *)&guarded[1];
    for (size_t i = 0; i < sizeof guarded[1]; i++)
        g_assert_cmpuint(tail[i], ==, 0x77);
}

static void test_priority(void)
{
    /* (2^24)*126 + (2^8)*65535 + (256 - 1), the value RFC 8445 implementations
     * agree on for a host candidate's RTP component. */
    g_assert_cmpuint(moat_ice_host_priority(65535, 1), ==, 2130706431u);
    g_assert_cmpuint(moat_ice_host_priority(65535, 2), ==, 2130706430u);
    g_assert_cmpuint(moat_ice_host_priority(0, 1), ==, 126u << 24 | 255u);
    g_assert_cmpuint(moat_ice_host_priority(10, 1), ==, (126u << 24) + (10u << 8) + 255u);
    g_assert_cmpuint(moat_ice_host_priority(1u << 20, 1), ==, moat_ice_host_priority(65535, 1));
    g_assert_cmpuint(moat_ice_host_priority(100, 0), ==, moat_ice_host_priority(100, 1));
    g_assert_cmpuint(moat_ice_host_priority(100, 999), ==, moat_ice_host_priority(100, 256));
    g_assert_cmpuint(moat_ice_host_priority(65535, 256) >> 24, ==, 126);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ice/candidates/loopback-included", test_loopback_included);
    g_test_add_func("/ice/candidates/loopback-excluded", test_loopback_excluded);
    g_test_add_func("/ice/candidates/ipv4-only", test_ipv4_only);
    g_test_add_func("/ice/candidates/capacity", test_capacity);
    g_test_add_func("/ice/candidates/priority", test_priority);
    return g_test_run();
}
