/* a=candidate values as browsers and ICE libraries write them. */
#include <glib.h>
#include <string.h>

#include "sdp/sdp.h"

static void test_parse_real(void)
{
    moat_sdp_candidate c;
    /* Chromium, as RTCIceCandidate.candidate (with the "candidate:" prefix). */
    g_assert_cmpint(moat_sdp_candidate_parse("candidate:842163049 1 udp 1677729535 203.0.113.7 "
                                             "46154 typ srflx raddr 192.168.1.2 rport 46154 "
                                             "generation 0 ufrag Vg7k network-cost 999",
                                             &c),
                    ==, 0);
    g_assert_cmpstr(c.foundation, ==, "842163049");
    g_assert_cmpuint(c.component, ==, 1);
    g_assert_cmpstr(c.transport, ==, "udp");
    g_assert_cmpuint(c.priority, ==, 1677729535u);
    g_assert_cmpstr(c.address, ==, "203.0.113.7");
    g_assert_cmpuint(c.port, ==, 46154);
    g_assert_cmpstr(c.type, ==, "srflx");

    /* Chromium's mDNS host candidate. */
    g_assert_cmpint(moat_sdp_candidate_parse("3967017353 1 udp 2122260223 "
                                             "6f1c3a6e-2b0d-4c8e-9a7f-1e2d3c4b5a69.local 54400 "
                                             "typ host generation 0 network-id 1",
                                             &c),
                    ==, 0);
    g_assert_cmpstr(c.address, ==, "6f1c3a6e-2b0d-4c8e-9a7f-1e2d3c4b5a69.local");

    /* Firefox: uppercase transport, IPv6, relay. */
    g_assert_cmpint(moat_sdp_candidate_parse("4 1 UDP 8331263 2001:db8:85a3::8a2e:370:7334 61118 "
                                             "typ relay raddr 2001:db8::1 rport 61118",
                                             &c),
                    ==, 0);
    g_assert_cmpstr(c.transport, ==, "udp");
    g_assert_cmpstr(c.address, ==, "2001:db8:85a3::8a2e:370:7334");
    g_assert_cmpstr(c.type, ==, "relay");

    /* TCP, component 2, maximum values. */
    g_assert_cmpint(moat_sdp_candidate_parse("abc+/XYZ 256 tcp 4294967295 10.0.0.1 65535 typ prflx "
                                             "tcptype passive",
                                             &c),
                    ==, 0);
    g_assert_cmpuint(c.component, ==, 256);
    g_assert_cmpuint(c.priority, ==, 4294967295u);
    g_assert_cmpuint(c.port, ==, 65535);
    g_assert_cmpstr(c.type, ==, "prflx");
}

static void test_parse_rejects(void)
{
    const char *bad[] = {
        "",
        "candidate:",
        "1 1 udp 1 10.0.0.1 5000",                   /* no typ */
        "1 1 udp 1 10.0.0.1 5000 type host",         /* misspelt keyword */
        "1 1 udp 1 10.0.0.1 5000 typ",               /* no type */
        "1 1 udp 1 10.0.0.1 5000 typ bogus",         /* unknown type */
        "1 0 udp 1 10.0.0.1 5000 typ host",          /* component 0 */
        "1 257 udp 1 10.0.0.1 5000 typ host",        /* component beyond 256 */
        "1 1 udp 4294967296 10.0.0.1 5000 typ host", /* priority overflow */
        "1 1 udp -1 10.0.0.1 5000 typ host",         /* sign */
        "1 1 udp 1 10.0.0.1 65536 typ host",         /* port overflow */
        "1 1 udp 1 10.0.0.1 +5 typ host",            /* sign */
        "1 1 udpudpudp 1 10.0.0.1 5000 typ host",    /* transport too long */
        "1 1 udp 1 10.0.0.1;rm 5000 typ host",       /* address characters */
        "1 1 udp 1 [::1] 5000 typ host",             /* brackets */
        "f*o 1 udp 1 10.0.0.1 5000 typ host",        /* foundation characters */
        "123456789012345678901234567890123 1 udp 1 10.0.0.1 5000 typ host", /* 33 chars */
        "1 1 udp 1 10.0.0.1 5000 typ host\r\na=evil",                       /* control characters */
        "1 1 udp 1 99999999999999999999999 5000 typ host\xff",
    };
    moat_sdp_candidate c;
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
        if (moat_sdp_candidate_parse(bad[i], &c) != -1)
            g_error("accepted \"%s\"", bad[i]);
    GString *huge = g_string_new("1 1 udp 1 10.0.0.1 5000 typ host");
    while (huge->len <= 4096)
        g_string_append(huge, " x y");
    g_assert_cmpint(moat_sdp_candidate_parse(huge->str, &c), ==, -1);
    g_string_free(huge, TRUE);
    g_assert_cmpint(moat_sdp_candidate_parse(NULL, &c), ==, -1);
    g_assert_cmpint(moat_sdp_candidate_parse("1 1 udp 1 10.0.0.1 5000 typ host", NULL), ==, -1);
}

static void test_format(void)
{
    moat_sdp_candidate c = {"7", 1, "udp", 2130706431u, "192.0.2.10", 40000, "host"};
    char buf[128];
    const char *expected = "7 1 udp 2130706431 192.0.2.10 40000 typ host";
    g_assert_cmpint(moat_sdp_candidate_format(&c, buf, sizeof buf), ==, (int)strlen(expected));
    g_assert_cmpstr(buf, ==, expected);

    /* Defaults for what the caller left empty. */
    moat_sdp_candidate partial = {"9", 0, "", 5, "::1", 9, ""};
    g_assert_cmpint(moat_sdp_candidate_format(&partial, buf, sizeof buf), >, 0);
    g_assert_cmpstr(buf, ==, "9 1 udp 5 ::1 9 typ host");

    /* Buffer exactly large enough, and one byte short. */
    g_assert_cmpint(moat_sdp_candidate_format(&c, buf, strlen(expected) + 1), >, 0);
    g_assert_cmpint(moat_sdp_candidate_format(&c, buf, strlen(expected)), ==, -1);
    g_assert_cmpstr(buf, ==, "");

    /* Fields that would break the line are refused. */
    moat_sdp_candidate bad = c;
    g_strlcpy(bad.address, "1.2.3.4 typ relay", sizeof bad.address);
    g_assert_cmpint(moat_sdp_candidate_format(&bad, buf, sizeof buf), ==, -1);
    bad = c;
    bad.foundation[0] = '\0';
    g_assert_cmpint(moat_sdp_candidate_format(&bad, buf, sizeof buf), ==, -1);
    bad = c;
    g_strlcpy(bad.type, "x\n", sizeof bad.type);
    g_assert_cmpint(moat_sdp_candidate_format(&bad, buf, sizeof buf), ==, -1);
    bad = c;
    memset(bad.address, 'a', sizeof bad.address); /* not terminated */
    g_assert_cmpint(moat_sdp_candidate_format(&bad, buf, sizeof buf), ==, -1);
    bad = c;
    bad.component = 300;
    g_assert_cmpint(moat_sdp_candidate_format(&bad, buf, sizeof buf), ==, -1);
    g_assert_cmpint(moat_sdp_candidate_format(NULL, buf, sizeof buf), ==, -1);
    g_assert_cmpint(moat_sdp_candidate_format(&c, NULL, 0), ==, -1);
}

static void test_round_trip(void)
{
    static const moat_sdp_candidate samples[] = {
        {"1", 1, "udp", 2130706431u, "192.0.2.10", 40000, "host"},
        {"abcdefghijklmnopqrstuvwxyz012345", 256, "tcp", 0, "2001:db8::1", 0, "relay"},
        {"x+/", 2, "udp", 4294967295u, "host-name.local", 65535, "srflx"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(samples); i++) {
        char buf[256];
        moat_sdp_candidate back;
        g_assert_cmpint(moat_sdp_candidate_format(&samples[i], buf, sizeof buf), >, 0);
        g_assert_cmpint(moat_sdp_candidate_parse(buf, &back), ==, 0);
        g_assert_cmpstr(back.foundation, ==, samples[i].foundation);
        g_assert_cmpuint(back.component, ==, samples[i].component);
        g_assert_cmpstr(back.transport, ==, samples[i].transport);
        g_assert_cmpuint(back.priority, ==, samples[i].priority);
        g_assert_cmpstr(back.address, ==, samples[i].address);
        g_assert_cmpuint(back.port, ==, samples[i].port);
        g_assert_cmpstr(back.type, ==, samples[i].type);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sdp/candidate/parse-real", test_parse_real);
    g_test_add_func("/sdp/candidate/parse-rejects", test_parse_rejects);
    g_test_add_func("/sdp/candidate/format", test_format);
    g_test_add_func("/sdp/candidate/round-trip", test_round_trip);
    return g_test_run();
}
