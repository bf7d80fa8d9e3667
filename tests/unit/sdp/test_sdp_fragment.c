/* Trickle-ICE fragments: WHIP PATCH bodies in, ICE-restart replies out. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "offers.h"
#include "sdp/sdp.h"
#include "sdp_test_text.h"

static void parse_ok(const char *text, moat_sdp_fragment *f)
{
    char error[256] = "";
    if (moat_sdp_fragment_parse(text, strlen(text), f, error, sizeof error) != 0)
        g_error("fragment parse failed: %s", error);
    g_assert_cmpstr(error, ==, "");
}

static void parse_fails(char *text, const char *expected)
{
    moat_sdp_fragment f;
    char error[256] = "";
    g_assert_cmpint(moat_sdp_fragment_parse(text, strlen(text), &f, error, sizeof error), ==, -1);
    if (strstr(error, expected) == NULL)
        g_error("error \"%s\" does not contain \"%s\"", error, expected);
    g_assert_cmpuint(f.n_candidates, ==, 0); /* nothing half-parsed is left */
    g_free(text);
}

static void test_whip_patch(void)
{
    moat_sdp_fragment f;
    parse_ok(moat_test_fragment_whip, &f);
    g_assert_cmpstr(f.ice_ufrag, ==, "EsAw");
    g_assert_cmpstr(f.ice_pwd, ==, "P2uYro0UCOQ4zxjKXaWCBui1");
    g_assert_cmpuint(f.n_bundle_mids, ==, 2);
    g_assert_cmpstr(f.bundle_mids[1], ==, "1");
    g_assert_cmpuint(f.n_media, ==, 1);
    g_assert_cmpstr(f.mids[0], ==, "0");
    g_assert_cmpuint(f.n_candidates, ==, 4);
    g_assert_true(f.end_of_candidates);
    const moat_sdp_fragment_candidate *c = &f.candidates[0];
    g_assert_cmpstr(c->mid, ==, "0");
    g_assert_cmpuint(c->media_index, ==, 0);
    g_assert_cmpstr(c->candidate.foundation, ==, "1387637174");
    g_assert_cmpuint(c->candidate.priority, ==, 2122260223u);
    g_assert_cmpstr(c->candidate.address, ==, "192.0.2.1");
    g_assert_cmpuint(c->candidate.port, ==, 61764);
    g_assert_cmpstr(f.candidates[2].candidate.transport, ==, "tcp");
    g_assert_cmpuint(f.candidates[2].candidate.port, ==, 9);
    g_assert_cmpstr(f.candidates[3].candidate.address, ==, "198.51.100.2");

    char *lf = moat_test_replace(moat_test_fragment_whip, "\r\n", "\n");
    moat_sdp_fragment g;
    parse_ok(lf, &g);
    g_assert_cmpint(memcmp(&f, &g, sizeof f), ==, 0);
    g_free(lf);
}

static void test_shapes(void)
{
    moat_sdp_fragment f;
    /* An ICE restart request: credentials only. */
    parse_ok("a=ice-ufrag:ZZyy\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\n", &f);
    g_assert_cmpstr(f.ice_ufrag, ==, "ZZyy");
    g_assert_cmpuint(f.n_candidates, ==, 0);
    g_assert_false(f.end_of_candidates);

    /* Candidates without any m= section, as some clients send them. */
    parse_ok("a=candidate:1 1 UDP 2130706431 10.0.0.1 5000 typ host\n"
             "a=end-of-candidates\n",
             &f);
    g_assert_cmpuint(f.n_candidates, ==, 1);
    g_assert_cmpuint(f.candidates[0].media_index, ==, SIZE_MAX);
    g_assert_cmpstr(f.candidates[0].mid, ==, "");
    g_assert_cmpstr(f.candidates[0].candidate.transport, ==, "udp");
    g_assert_true(f.end_of_candidates);

    /* a=mid after the candidates of its section; two sections; repeated
     * identical credentials. */
    parse_ok("a=ice-ufrag:EsAw\r\na=ice-pwd:P2uYro0UCOQ4zxjKXaWCBui1\r\n"
             "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"
             "a=candidate:1 1 udp 1 192.0.2.1 1000 typ host\r\n"
             "a=mid:a\r\n"
             "a=ice-ufrag:EsAw\r\n"
             "m=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
             "a=mid:v\r\n"
             "a=candidate:2 1 udp 1 192.0.2.1 1002 typ host\r\n",
             &f);
    g_assert_cmpuint(f.n_media, ==, 2);
    g_assert_cmpstr(f.candidates[0].mid, ==, "a");
    g_assert_cmpstr(f.candidates[1].mid, ==, "v");
    g_assert_cmpuint(f.candidates[1].media_index, ==, 1);

    /* Empty body. */
    parse_ok("", &f);
    g_assert_cmpuint(f.n_media, ==, 0);
}

static void test_errors(void)
{
    parse_fails(g_strdup("a=ice-ufrag:EsAw\r\na=ice-ufrag:Other\r\n"),
                "line 2: a=ice-ufrag: conflicting values");
    parse_fails(g_strdup("a=ice-pwd:short\r\n"), "a=ice-pwd: invalid");
    parse_fails(g_strdup("m=audio 9 RTP/AVP 0\r\na=candidate:1 1 udp x 1.2.3.4 1 typ host\r\n"),
                "line 2: a=candidate: bad priority");
    parse_fails(g_strdup("m=audio 9 RTP/AVP 0\r\na=mid:0\r\nm=audio 9 RTP/AVP 0\r\na=mid:0\r\n"),
                "a=mid: used by two");
    parse_fails(g_strdup("garbage\r\n"), "line 1: expected <type>=<value>");
    parse_fails(g_strdup("a=candidate:1 1 udp 1 1.2.3.4 1 typ host\xff\r\n"), "not valid UTF-8");
    GString *many = g_string_new(NULL);
    for (int i = 0; i <= MOAT_SDP_FRAGMENT_MAX_CANDIDATES; i++)
        g_string_append_printf(many, "a=candidate:%d 1 udp 1 10.0.0.1 %d typ host\r\n", i, i + 1);
    parse_fails(g_string_free(many, FALSE), "too many candidates");
    many = g_string_new(NULL);
    for (int i = 0; i <= MOAT_SDP_MAX_MEDIA; i++)
        g_string_append(many, "m=audio 9 RTP/AVP 0\r\n");
    parse_fails(g_string_free(many, FALSE), "too many m= lines");
    GString *longline = g_string_new("a=candidate:");
    while (longline->len <= MOAT_SDP_MAX_LINE)
        g_string_append_c(longline, '1');
    parse_fails(g_string_free(longline, FALSE), "longer than 4096 bytes");

    moat_sdp_fragment f;
    char error[64];
    g_assert_cmpint(moat_sdp_fragment_parse("x", 1, NULL, error, sizeof error), ==, -1);
    g_assert_cmpint(moat_sdp_fragment_parse(NULL, 5, &f, NULL, 0), ==, -1);
}

static const moat_sdp_candidate gateway_candidates[] = {
    {"1", 1, "udp", 2130706431u, "198.51.100.1", 39132, "host"},
    {"2", 0, "", 2130706175u, "2001:db8::1", 39132, ""},
};

static void test_build(void)
{
    const char *const mids[] = {"0", "1"};
    char *body = moat_sdp_fragment_build("289b31b7", "0b66f472495ef0ccac7bda65", gateway_candidates,
                                         2, mids, 2);
    g_assert_cmpstr(body, ==,
                    "a=ice-lite\r\n"
                    "a=ice-ufrag:289b31b7\r\n"
                    "a=ice-pwd:0b66f472495ef0ccac7bda65\r\n"
                    "a=group:BUNDLE 0 1\r\n"
                    "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\n"
                    "a=mid:0\r\n"
                    "a=candidate:1 1 udp 2130706431 198.51.100.1 39132 typ host\r\n"
                    "a=candidate:2 1 udp 2130706175 2001:db8::1 39132 typ host\r\n"
                    "a=end-of-candidates\r\n"
                    "m=audio 9 UDP/TLS/RTP/SAVPF 0\r\n"
                    "a=mid:1\r\n");
    /* What the gateway writes, the gateway (and so a peer) reads back. */
    moat_sdp_fragment f;
    parse_ok(body, &f);
    g_assert_cmpstr(f.ice_ufrag, ==, "289b31b7");
    g_assert_cmpstr(f.ice_pwd, ==, "0b66f472495ef0ccac7bda65");
    g_assert_cmpuint(f.n_bundle_mids, ==, 2);
    g_assert_cmpuint(f.n_candidates, ==, 2);
    g_assert_cmpstr(f.candidates[1].mid, ==, "0");
    g_assert_cmpstr(f.candidates[1].candidate.address, ==, "2001:db8::1");
    g_assert_cmpstr(f.candidates[1].candidate.type, ==, "host");
    g_assert_true(f.end_of_candidates);
    g_free(body);

    /* Without mids: credentials and candidates at session level. */
    body = moat_sdp_fragment_build("289b31b7", "0b66f472495ef0ccac7bda65", gateway_candidates, 1,
                                   NULL, 0);
    g_assert_cmpstr(body, ==,
                    "a=ice-lite\r\na=ice-ufrag:289b31b7\r\na=ice-pwd:0b66f472495ef0ccac7bda65\r\n"
                    "a=candidate:1 1 udp 2130706431 198.51.100.1 39132 typ host\r\n"
                    "a=end-of-candidates\r\n");
    g_free(body);
}

static void test_build_refuses(void)
{
    const char *pwd = "0b66f472495ef0ccac7bda65";
    const char *const mids[] = {"0", "0"};
    const char *const bad_mid[] = {"a b"};
    const char *const null_mid[] = {NULL};
    moat_sdp_candidate broken = gateway_candidates[0];
    g_strlcpy(broken.type, "evil", sizeof broken.type);
    g_assert_null(moat_sdp_fragment_build(NULL, pwd, NULL, 0, NULL, 0));
    g_assert_null(moat_sdp_fragment_build("abc", pwd, NULL, 0, NULL, 0));
    g_assert_null(moat_sdp_fragment_build("abcd\r\n", pwd, NULL, 0, NULL, 0));
    g_assert_null(moat_sdp_fragment_build("abcd", "short", NULL, 0, NULL, 0));
    g_assert_null(moat_sdp_fragment_build("abcd", pwd, NULL, 1, NULL, 0));
    g_assert_null(moat_sdp_fragment_build("abcd", pwd, &broken, 1, NULL, 0));
    g_assert_null(moat_sdp_fragment_build("abcd", pwd, NULL, 0, mids, 2));
    g_assert_null(moat_sdp_fragment_build("abcd", pwd, NULL, 0, bad_mid, 1));
    g_assert_null(moat_sdp_fragment_build("abcd", pwd, NULL, 0, null_mid, 1));
    g_assert_null(moat_sdp_fragment_build("abcd", pwd, NULL, 0, NULL, 1));
    char *ok = moat_sdp_fragment_build("abcd", pwd, NULL, 0, NULL, 0);
    g_assert_cmpstr(ok, ==,
                    "a=ice-lite\r\na=ice-ufrag:abcd\r\na=ice-pwd:"
                    "0b66f472495ef0ccac7bda65"
                    "\r\na=end-of-candidates\r\n");
    g_free(ok);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sdp/fragment/whip-patch", test_whip_patch);
    g_test_add_func("/sdp/fragment/shapes", test_shapes);
    g_test_add_func("/sdp/fragment/errors", test_errors);
    g_test_add_func("/sdp/fragment/build", test_build);
    g_test_add_func("/sdp/fragment/build-refuses", test_build_refuses);
    return g_test_run();
}
