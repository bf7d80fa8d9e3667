/* The WHIP client helpers moat-flood and moat-tunnel share (whip_address.h):
 * numeric candidates become dual-stack addresses (IPv4 mapped), names and
 * port 0 are refused; an ICE restart fragment's values are found, and
 * empty or oversized ones refused. */
#include "whip_address.h"

#include <arpa/inet.h>
#include <glib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static moat_sdp_candidate candidate(const char *address, uint16_t port)
{
    moat_sdp_candidate c;
    memset(&c, 0, sizeof c);
    g_strlcpy(c.address, address, sizeof c.address);
    g_strlcpy(c.transport, "udp", sizeof c.transport);
    c.port = port;
    return c;
}

static void test_candidate_address(void)
{
    struct sockaddr_in6 a;
    moat_sdp_candidate c = candidate("192.0.2.7", 5000);
    g_assert_true(whip_candidate_address(&c, &a));
    g_assert_cmpint(a.sin6_family, ==, AF_INET6);
    g_assert_cmpuint(ntohs(a.sin6_port), ==, 5000);
    g_assert_true(IN6_IS_ADDR_V4MAPPED(&a.sin6_addr));
    g_assert_cmpuint(a.sin6_addr.s6_addr[12], ==, 192);
    g_assert_cmpuint(a.sin6_addr.s6_addr[15], ==, 7);
    c = candidate("2001:db8::1", 9);
    g_assert_true(whip_candidate_address(&c, &a));
    g_assert_cmpuint(a.sin6_addr.s6_addr[0], ==, 0x20);
    c = candidate("192.0.2.7", 0);
    g_assert_false(whip_candidate_address(&c, &a));
    c = candidate("gateway.example", 5000);
    g_assert_false(whip_candidate_address(&c, &a));
}

static void test_fragment_value(void)
{
    const char *fragment = "a=ice-ufrag:abcd\r\na=ice-pwd:0123456789abcdefghijkl\r\n";
    char out[32];
    g_assert_true(whip_fragment_value(fragment, "a=ice-ufrag:", out, sizeof out));
    g_assert_cmpstr(out, ==, "abcd");
    g_assert_true(whip_fragment_value(fragment, "a=ice-pwd:", out, sizeof out));
    g_assert_cmpstr(out, ==, "0123456789abcdefghijkl");
    g_assert_false(whip_fragment_value(fragment, "a=ice-pwd:", out, 8));
    g_assert_false(whip_fragment_value(fragment, "a=ice-options:", out, sizeof out));
    g_assert_false(whip_fragment_value("a=ice-ufrag:\r\n", "a=ice-ufrag:", out, sizeof out));
}

/* Without a resolvable host only the bound port is known. */
static void test_same_origin(void)
{
    const char *whip = "http://127.0.0.1:8088/whip/echo";
    g_assert_true(whip_same_origin(whip, "http://127.0.0.1:8088/whip/resource/abc"));
    g_assert_true(whip_same_origin("http://GW.example/whip/x", "HTTP://gw.example:80/r/1"));
    g_assert_true(whip_same_origin("https://gw.example/whip/x", "https://gw.example:443/r/1"));
    g_assert_true(whip_same_origin("http://[::1]:8088/whip/x", "http://[::1]:8088/r/1"));
    /* Another port, host or scheme (http after https), or no URL at all. */
    g_assert_false(whip_same_origin(whip, "http://127.0.0.1:18331/stolen"));
    g_assert_false(whip_same_origin(whip, "http://127.0.0.2:8088/whip/resource/abc"));
    g_assert_false(whip_same_origin(whip, "https://127.0.0.1:8088/whip/resource/abc"));
    g_assert_false(whip_same_origin("https://gw.example/whip/x", "http://gw.example/r/1"));
    g_assert_false(whip_same_origin("https://gw.example/whip/x", "http://gw.example:443/r/1"));
    g_assert_false(whip_same_origin("http://gw.example/whip/x", "http://gw.example.evil/r/1"));
    g_assert_false(whip_same_origin(whip, "/whip/resource/abc"));
    g_assert_false(whip_same_origin(whip, "file:///etc/passwd"));
    g_assert_false(whip_same_origin("ftp://gw/x", "ftp://gw/y"));
    g_assert_false(whip_same_origin(whip, "http://127.0.0.1:8088@evil:80/r"));
}

static void test_local_address_port(void)
{
    int fd = socket(AF_INET6, SOCK_DGRAM, 0);
    g_assert_cmpint(fd, >=, 0);
    struct sockaddr_in6 any = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT};
    g_assert_cmpint(bind(fd, (struct sockaddr *)&any, sizeof any), ==, 0);
    struct sockaddr_in6 local;
    memset(&local, 0, sizeof local);
    whip_learn_local_address("not a url", fd, &local);
    g_assert_cmpint(local.sin6_family, ==, AF_INET6);
    g_assert_cmpuint(local.sin6_port, !=, 0);
    close(fd);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/whip_address/candidate", test_candidate_address);
    g_test_add_func("/whip_address/fragment", test_fragment_value);
    g_test_add_func("/whip_address/local_port", test_local_address_port);
    g_test_add_func("/whip_address/same_origin", test_same_origin);
    return g_test_run();
}
