/* The pure parts of issue 20's call-leg defences: destination
 * classification (loopback, unspecified, multicast, broadcast, link-local,
 * denied networks, Moat's own sockets with or without
 * allow_loopback_destinations), endpoint learning decisions (sdp,
 * heuristic, off, asymmetric, strict-source, RTCP following RTP), and the
 * rtcp-mux of m-lines an answer lacks. */
#include <arpa/inet.h>
#include <glib.h>
#include <string.h>

#include "call/call_address.h"
#include "call/call_learning.h"
#include "call/call_registry.h"

static struct sockaddr_in6 addr(const char *text, uint16_t port)
{
    struct sockaddr_in6 out = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
    struct in_addr v4;
    if (inet_pton(AF_INET, text, &v4) == 1) {
        out.sin6_addr.s6_addr[10] = out.sin6_addr.s6_addr[11] = 0xff;
        memcpy(&out.sin6_addr.s6_addr[12], &v4, 4);
    } else {
        g_assert_cmpint(inet_pton(AF_INET6, text, &out.sin6_addr), ==, 1);
    }
    return out;
}

static void test_classify(void)
{
    struct {
        const char *text;
        moat_call_address_kind kind;
    } cases[] = {
        {"127.0.0.1", MOAT_CALL_ADDRESS_LOOPBACK},
        {"127.9.9.9", MOAT_CALL_ADDRESS_LOOPBACK},
        {"::1", MOAT_CALL_ADDRESS_LOOPBACK},
        {"0.0.0.0", MOAT_CALL_ADDRESS_UNSPECIFIED},
        {"::", MOAT_CALL_ADDRESS_UNSPECIFIED},
        {"224.0.0.1", MOAT_CALL_ADDRESS_MULTICAST},
        {"239.255.0.1", MOAT_CALL_ADDRESS_MULTICAST},
        {"ff02::1", MOAT_CALL_ADDRESS_MULTICAST},
        {"255.255.255.255", MOAT_CALL_ADDRESS_BROADCAST},
        {"169.254.3.4", MOAT_CALL_ADDRESS_LINK_LOCAL},
        {"fe80::1", MOAT_CALL_ADDRESS_LINK_LOCAL},
        {"10.1.2.3", MOAT_CALL_ADDRESS_OK},
        {"192.168.1.1", MOAT_CALL_ADDRESS_OK},
        {"172.16.0.1", MOAT_CALL_ADDRESS_OK},
        {"fd00::1", MOAT_CALL_ADDRESS_OK},
        {"198.51.100.7", MOAT_CALL_ADDRESS_OK},
        {"2001:db8::1", MOAT_CALL_ADDRESS_OK},
        /* Addresses a translator or tunnel takes to their IPv4 part. */
        {"::127.0.0.1", MOAT_CALL_ADDRESS_LOOPBACK},
        {"::224.0.0.1", MOAT_CALL_ADDRESS_MULTICAST},
        {"64:ff9b::127.0.0.1", MOAT_CALL_ADDRESS_LOOPBACK},
        {"64:ff9b::169.254.1.1", MOAT_CALL_ADDRESS_LINK_LOCAL},
        {"64:ff9b::0.0.0.0", MOAT_CALL_ADDRESS_UNSPECIFIED},
        {"64:ff9b::198.51.100.7", MOAT_CALL_ADDRESS_OK},
        {"2002:7f00:1::1", MOAT_CALL_ADDRESS_LOOPBACK},
        {"2002:c633:6407::1", MOAT_CALL_ADDRESS_OK},
        {"::10.1.2.3", MOAT_CALL_ADDRESS_OK},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        struct sockaddr_in6 a = addr(cases[i].text, 1);
        g_assert_cmpint(moat_call_address_classify(&a.sin6_addr), ==, cases[i].kind);
    }
}

static void test_networks(void)
{
    moat_call_network *networks = NULL;
    size_t n = 0;
    char error[160];
    g_assert_cmpint(moat_call_networks_parse(" 10.1.0.0/16, fd00::/8 ,192.0.2.7", &networks, &n,
                                             error, sizeof error),
                    ==, 0);
    g_assert_cmpuint(n, ==, 3);
    struct sockaddr_in6 in[] = {addr("10.1.200.3", 1), addr("fd12::5", 1), addr("192.0.2.7", 1)};
    struct sockaddr_in6 out[] = {addr("10.2.0.1", 1), addr("fe00::1", 1), addr("192.0.2.8", 1)};
    for (size_t i = 0; i < 3; i++) {
        g_assert_true(moat_call_networks_contain(networks, n, &in[i].sin6_addr));
        g_assert_false(moat_call_networks_contain(networks, n, &out[i].sin6_addr));
    }
    g_free(networks);
    const char *bad[] = {"10.0.0.0/33", "fd00::/129", "nope", "10.0.0.0/x", "10.0.0.0/-1"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_assert_cmpint(moat_call_networks_parse(bad[i], &networks, &n, error, sizeof error), ==,
                        -1);
        g_assert_nonnull(strstr(error, "denied_networks"));
    }
    g_assert_cmpint(moat_call_networks_parse("", &networks, &n, error, sizeof error), ==, 0);
    g_assert_null(networks);
}

static bool fake_own_port(void *user, uint16_t port)
{
    (void)user;
    return port == 2223 || port == 8088;
}

/* 203.0.113.9 stands for one of this host's addresses. */
static bool fake_is_host(const struct in6_addr *a)
{
    struct sockaddr_in6 host = addr("203.0.113.9", 0);
    moat_call_address_kind kind = moat_call_address_classify(a);
    return kind == MOAT_CALL_ADDRESS_LOOPBACK || kind == MOAT_CALL_ADDRESS_UNSPECIFIED ||
           memcmp(a, &host.sin6_addr, sizeof *a) == 0;
}

static void test_destinations(void)
{
    moat_call_network denied[1];
    size_t n_denied = 0;
    moat_call_network *parsed = NULL;
    char reason[160];
    g_assert_cmpint(
        moat_call_networks_parse("198.51.100.0/24", &parsed, &n_denied, reason, sizeof reason), ==,
        0);
    denied[0] = parsed[0];
    g_free(parsed);
    for (int allow = 0; allow < 2; allow++) {
        moat_call_destination_policy policy = {
            .allow_loopback = allow,
            .denied = denied,
            .n_denied = n_denied,
            .own = {fake_own_port, NULL},
            .is_host = fake_is_host,
        };
        struct sockaddr_in6 own[] = {addr("127.0.0.1", 2223),
                                     addr("127.0.0.1", 8088),
                                     addr("::1", 2223),
                                     addr("203.0.113.9", 2223),
                                     addr("::127.0.0.1", 2223),
                                     addr("::203.0.113.9", 2223),
                                     addr("64:ff9b::203.0.113.9", 2223),
                                     addr("2002:cb00:7109::1", 2223)};
        for (size_t i = 0; i < G_N_ELEMENTS(own); i++) {
            g_assert_cmpint(moat_call_destination_check(&policy, &own[i], reason, sizeof reason),
                            ==, -1);
            g_assert_nonnull(strstr(reason, "Moat's own sockets"));
        }
        struct sockaddr_in6 loop = addr("127.0.0.1", 6000);
        g_assert_cmpint(moat_call_destination_check(&policy, &loop, reason, sizeof reason), ==,
                        allow ? 0 : -1);
        if (!allow)
            g_assert_nonnull(strstr(reason, "127.0.0.1 is loopback"));
        const char *never[] = {"224.0.0.1",         "169.254.1.1",       "255.255.255.255",
                               "ff02::1",           "198.51.100.20",     "64:ff9b::198.51.100.20",
                               "2002:c633:6414::1", "64:ff9b::224.0.0.1"};
        for (size_t i = 0; i < G_N_ELEMENTS(never); i++) {
            struct sockaddr_in6 a = addr(never[i], 6000);
            g_assert_cmpint(moat_call_destination_check(&policy, &a, reason, sizeof reason), ==,
                            -1);
        }
        /* Private ranges and the host's own address on another port stay allowed. */
        const char *fine[] = {"10.0.0.5", "192.168.1.20", "fd00::7", "203.0.113.9",
                              "64:ff9b::192.0.2.80"};
        for (size_t i = 0; i < G_N_ELEMENTS(fine); i++) {
            struct sockaddr_in6 a = addr(fine[i], 6000);
            g_assert_cmpint(moat_call_destination_check(&policy, &a, reason, sizeof reason), ==, 0);
        }
    }
    /* The real host check knows loopback and unspecified. */
    struct sockaddr_in6 lo = addr("127.0.0.1", 0), any = addr("0.0.0.0", 0);
    g_assert_true(moat_call_address_is_host(&lo.sin6_addr));
    g_assert_true(moat_call_address_is_host(&any.sin6_addr));
}

static moat_call_source_verdict decide(moat_call_learning learning, bool latching, bool strict,
                                       bool rtcp, const struct sockaddr_in6 *sdp,
                                       const struct sockaddr_in6 *latched,
                                       const struct sockaddr_in6 *rtp_latched,
                                       const struct sockaddr_in6 *from)
{
    moat_call_source_rule rule = {learning, latching, strict, rtcp, sdp, latched, rtp_latched};
    return moat_call_source_decide(&rule, from);
}

static void test_learning(void)
{
    struct sockaddr_in6 sdp = addr("10.0.0.5", 6000), nat = addr("10.0.0.5", 40123),
                        other = addr("10.0.0.66", 6000), none = {0};
    /* sdp: only the SDP's IP, any port; it latches. */
    g_assert_cmpint(decide(MOAT_CALL_LEARNING_SDP, true, false, false, &sdp, NULL, NULL, &nat), ==,
                    MOAT_CALL_SOURCE_LATCH);
    g_assert_cmpint(decide(MOAT_CALL_LEARNING_SDP, true, false, false, &sdp, NULL, NULL, &other),
                    ==, MOAT_CALL_SOURCE_DROP);
    /* No SDP address yet (before the answer): nothing. */
    g_assert_cmpint(decide(MOAT_CALL_LEARNING_SDP, true, false, false, &none, NULL, NULL, &sdp), ==,
                    MOAT_CALL_SOURCE_DROP);
    /* Latched: only that address, in every mode (no re-latch without
     * signalling), except that in sdp mode the exact SDP address takes a
     * leg latched to another port of its IP over, once. */
    struct sockaddr_in6 stranger = addr("10.0.0.5", 40999);
    for (int mode = 0; mode < 3; mode++) {
        g_assert_cmpint(decide(mode, true, false, false, &sdp, &nat, NULL, &nat), ==,
                        MOAT_CALL_SOURCE_ACCEPT);
        g_assert_cmpint(decide(mode, true, false, false, &sdp, &nat, NULL, &sdp), ==,
                        mode == MOAT_CALL_LEARNING_SDP ? MOAT_CALL_SOURCE_LATCH
                                                       : MOAT_CALL_SOURCE_DROP);
        g_assert_cmpint(decide(mode, true, false, false, &sdp, &nat, NULL, &other), ==,
                        MOAT_CALL_SOURCE_DROP);
        g_assert_cmpint(decide(mode, true, false, false, &sdp, &nat, NULL, &stranger), ==,
                        MOAT_CALL_SOURCE_DROP);
        /* Latched to the exact SDP address: nobody moves it, same IP or not. */
        g_assert_cmpint(decide(mode, true, false, false, &sdp, &sdp, NULL, &nat), ==,
                        MOAT_CALL_SOURCE_DROP);
        g_assert_cmpint(decide(mode, true, false, false, &sdp, &sdp, NULL, &sdp), ==,
                        MOAT_CALL_SOURCE_ACCEPT);
        /* Asymmetric legs never latch, so never move. */
        g_assert_cmpint(decide(mode, false, false, false, &sdp, &nat, NULL, &sdp), ==,
                        MOAT_CALL_SOURCE_DROP);
    }
    /* RTCP on its own socket: the exact SDP RTCP address takes over too. */
    struct sockaddr_in6 rtcp_exact = addr("10.0.0.5", 6001), rtcp_other = addr("10.0.0.5", 41000);
    g_assert_cmpint(decide(MOAT_CALL_LEARNING_SDP, true, false, true, &rtcp_exact, &rtcp_other,
                           &nat, &rtcp_exact),
                    ==, MOAT_CALL_SOURCE_LATCH);
    /* heuristic: the first sender latches, whoever it is. */
    g_assert_cmpint(
        decide(MOAT_CALL_LEARNING_HEURISTIC, true, false, false, &sdp, NULL, NULL, &other), ==,
        MOAT_CALL_SOURCE_LATCH);
    /* off: exactly the SDP address, nothing learned. */
    g_assert_cmpint(decide(MOAT_CALL_LEARNING_OFF, true, false, false, &sdp, NULL, NULL, &sdp), ==,
                    MOAT_CALL_SOURCE_ACCEPT);
    g_assert_cmpint(decide(MOAT_CALL_LEARNING_OFF, true, false, false, &sdp, NULL, NULL, &nat), ==,
                    MOAT_CALL_SOURCE_DROP);
    /* RTCP follows RTP: only the IP RTP latched to; heuristic: nothing before RTP. */
    struct sockaddr_in6 rtcp_sdp = addr("10.0.0.5", 6001), rtcp_nat = addr("10.0.0.5", 40124);
    g_assert_cmpint(
        decide(MOAT_CALL_LEARNING_HEURISTIC, true, false, true, &rtcp_sdp, NULL, NULL, &other), ==,
        MOAT_CALL_SOURCE_DROP);
    g_assert_cmpint(
        decide(MOAT_CALL_LEARNING_HEURISTIC, true, false, true, &rtcp_sdp, NULL, &nat, &other), ==,
        MOAT_CALL_SOURCE_DROP);
    g_assert_cmpint(
        decide(MOAT_CALL_LEARNING_HEURISTIC, true, false, true, &rtcp_sdp, NULL, &nat, &rtcp_nat),
        ==, MOAT_CALL_SOURCE_LATCH);
    g_assert_cmpint(
        decide(MOAT_CALL_LEARNING_SDP, true, false, true, &rtcp_sdp, NULL, NULL, &rtcp_nat), ==,
        MOAT_CALL_SOURCE_LATCH);
    /* asymmetric (no latching): never latches; strict-source: exactly the SDP. */
    g_assert_cmpint(decide(MOAT_CALL_LEARNING_SDP, false, false, false, &sdp, NULL, NULL, &nat), ==,
                    MOAT_CALL_SOURCE_ACCEPT);
    g_assert_cmpint(decide(MOAT_CALL_LEARNING_SDP, false, false, false, &sdp, NULL, NULL, &other),
                    ==, MOAT_CALL_SOURCE_DROP);
    g_assert_cmpint(
        decide(MOAT_CALL_LEARNING_HEURISTIC, false, false, false, &sdp, NULL, NULL, &other), ==,
        MOAT_CALL_SOURCE_ACCEPT);
    g_assert_cmpint(
        decide(MOAT_CALL_LEARNING_HEURISTIC, false, true, false, &sdp, NULL, NULL, &nat), ==,
        MOAT_CALL_SOURCE_DROP);
    g_assert_cmpint(
        decide(MOAT_CALL_LEARNING_HEURISTIC, false, true, false, &sdp, NULL, NULL, &sdp), ==,
        MOAT_CALL_SOURCE_ACCEPT);
    moat_call_learning parsed;
    g_assert_cmpint(moat_call_learning_parse("heuristic", &parsed), ==, 0);
    g_assert_cmpint(parsed, ==, MOAT_CALL_LEARNING_HEURISTIC);
    g_assert_cmpint(moat_call_learning_parse("latch", &parsed), ==, -1);
}

/* An answer with fewer m-lines than its offer: the rest do not mux (they
 * were read uninitialised before). */
static void test_answer_mux(void)
{
    moat_call_sdp answer;
    memset(&answer, 0, sizeof answer);
    answer.n_media = 1;
    answer.media[0].rtcp_mux = true;
    bool offered[MOAT_CALL_SDP_MAX_MEDIA];
    for (size_t i = 0; i < MOAT_CALL_SDP_MAX_MEDIA; i++)
        offered[i] = true;
    bool out[MOAT_CALL_SDP_MAX_MEDIA];
    memset(out, 0xa5, sizeof out); /* what an uninitialised stack may hold */
    moat_call_answer_mux(&answer, offered, out);
    g_assert_true(out[0]);
    for (size_t i = 1; i < MOAT_CALL_SDP_MAX_MEDIA; i++)
        g_assert_true(out[i] == false);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/call/address/classify", test_classify);
    g_test_add_func("/call/address/networks", test_networks);
    g_test_add_func("/call/address/destinations", test_destinations);
    g_test_add_func("/call/learning/decisions", test_learning);
    g_test_add_func("/call/registry/answer-mux", test_answer_mux);
    return g_test_run();
}
