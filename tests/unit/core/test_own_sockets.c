/* Moat's own sockets (engine/own_sockets.h): a source is Moat's only on a
 * port Moat holds and on an address one of its binds covers. A wildcard
 * bind covers loopback and this host's addresses; a bind on one address
 * covers only that one, so another process on the same port number of
 * another local address (a second Moat, a TURN relay) is not a loop. */
#include "engine/own_sockets.h"

#include <arpa/inet.h>
#include <glib.h>
#include <string.h>

static struct sockaddr_in6 source(const char *address, uint16_t port)
{
    struct sockaddr_in6 s = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
    struct in_addr v4;
    if (inet_pton(AF_INET, address, &v4) == 1) {
        s.sin6_addr.s6_addr[10] = s.sin6_addr.s6_addr[11] = 0xff;
        memcpy(&s.sin6_addr.s6_addr[12], &v4, 4);
    } else {
        g_assert_cmpint(inet_pton(AF_INET6, address, &s.sin6_addr), ==, 1);
    }
    return s;
}

static bool own(const moat_own_sockets *o, const char *address, uint16_t port)
{
    struct sockaddr_in6 s = source(address, port);
    return moat_own_sockets_is_source(o, &s);
}

static void test_one_address_bind(void)
{
    const char *binds[] = {"127.0.0.1", "127.0.0.1"};
    moat_own_sockets *o = moat_own_sockets_new_for_binds(binds, G_N_ELEMENTS(binds));
    moat_own_sockets_hold(o, 21500);
    g_assert_true(own(o, "127.0.0.1", 21500));
    g_assert_false(own(o, "127.0.0.2", 21500)); /* another process's address */
    g_assert_false(own(o, "::1", 21500));
    g_assert_false(own(o, "127.0.0.1", 21501)); /* a port Moat does not hold */
    moat_own_sockets_release(o, 21500);
    g_assert_false(own(o, "127.0.0.1", 21500));
    moat_own_sockets_free(o);
}

static void test_wildcard_bind(void)
{
    const char *binds[] = {"::", "127.0.0.1"};
    moat_own_sockets *o = moat_own_sockets_new_for_binds(binds, G_N_ELEMENTS(binds));
    moat_own_sockets_hold(o, 21500);
    g_assert_true(own(o, "127.0.0.1", 21500));
    g_assert_true(own(o, "127.0.0.2", 21500));
    g_assert_true(own(o, "::1", 21500));
    g_assert_false(own(o, "192.0.2.200", 21500)); /* TEST-NET: not this host's */
    moat_own_sockets_free(o);
    const char *v4_any[] = {"0.0.0.0"};
    o = moat_own_sockets_new_for_binds(v4_any, 1);
    moat_own_sockets_hold(o, 21500);
    g_assert_true(own(o, "127.0.0.5", 21500));
    moat_own_sockets_free(o);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/own-sockets/one-address-bind", test_one_address_bind);
    g_test_add_func("/own-sockets/wildcard-bind", test_wildcard_bind);
    return g_test_run();
}
