/* bench/voip's ng wire format (bench/voip/ng_wire.c) and call addressing
 * (voip_load.h): commands it writes read back, replies from a relay are
 * split without reading past their end, hostile replies are refused. */
#include "ng_wire.h"
#include "voip_load.h"

#include <arpa/inet.h>
#include <string.h>

#include <glib.h>

static ng_text text(const char *s)
{
    return (ng_text){s, strlen(s)};
}

static int equals(ng_text t, const char *s)
{
    return t.len == strlen(s) && memcmp(t.data, s, t.len) == 0;
}

static void test_offer_reads_back(void)
{
    char datagram[2048];
    size_t len = ng_encode(datagram, sizeof datagram, NG_OFFER, "r42", 251, 19000);
    g_assert_cmpuint(len, >, 0);
    ng_reply reply;
    g_assert_cmpint(ng_decode(datagram, len, &reply), ==, 0);
    g_assert_true(equals(reply.cookie, "r42_251_o"));
    g_assert_cmpuint(reply.result.len, ==, 0);
    struct sockaddr_in where;
    g_assert_cmpint(ng_sdp_media(reply.sdp, &where), ==, 0);
    g_assert_cmpuint(ntohs(where.sin_port), ==, 19000);
    g_assert_cmpuint(where.sin_addr.s_addr, ==, voip_side_address(251, 0).s_addr);
    unsigned index = 0;
    ng_command command;
    g_assert_cmpint(ng_cookie_parse(reply.cookie, "r42", &index, &command), ==, 0);
    g_assert_cmpuint(index, ==, 251);
    g_assert_cmpint(command, ==, NG_OFFER);
    g_assert_cmpint(ng_cookie_parse(reply.cookie, "r4", &index, &command), ==, -1);
}

static void test_answer_and_delete(void)
{
    char datagram[2048];
    size_t len = ng_encode(datagram, sizeof datagram, NG_ANSWER, "r1", 0, 4000);
    g_assert_nonnull(g_strstr_len(datagram, (gssize)len, "6:to-tag6:callee"));
    g_assert_nonnull(g_strstr_len(datagram, (gssize)len, "c=IN IP4 127.2.0.1"));
    len = ng_encode(datagram, sizeof datagram, NG_DELETE, "r1", 7, 4000);
    g_assert_nonnull(g_strstr_len(datagram, (gssize)len, "12:delete-delayi0e"));
    g_assert_null(g_strstr_len(datagram, (gssize)len, "3:sdp"));
    g_assert_cmpuint(ng_encode(datagram, 40, NG_OFFER, "r1", 7, 4000), ==, 0);
}

static void test_reply_with_nested_values(void)
{
    const char *raw = "c1 d4:SSRCd1:ali1ei2eee7:createdi17e3:sdp13:v=0\r\nm=audio 6:result2:ok"
                      "6:totalsd3:RTPd7:packetsi0eeee";
    ng_reply reply;
    g_assert_cmpint(ng_decode(raw, strlen(raw), &reply), ==, 0);
    g_assert_true(equals(reply.result, "ok"));
    g_assert_true(equals(reply.sdp, "v=0\r\nm=audio "));
}

static void test_hostile_replies(void)
{
    const char *bad[] = {"",           "nocookie",      " d6:result2:oke",
                         "c1 l2:oke",  "c1 d6:result",  "c1 d6:result99:ok",
                         "c1 d3:sdpd", "c1 d4:SSRCi12", "c1 d1:ai1e"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        ng_reply reply;
        g_assert_cmpint(ng_decode(bad[i], strlen(bad[i]), &reply), ==, -1);
    }
    /* A length that overflows is refused, not wrapped. */
    const char *huge = "c1 d99999999999999999999:x";
    ng_reply reply;
    g_assert_cmpint(ng_decode(huge, strlen(huge), &reply), ==, -1);
}

static void test_sdp_media_address(void)
{
    struct sockaddr_in where;
    const char *session = "v=0\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 30000 RTP/AVP 0\r\n";
    g_assert_cmpint(ng_sdp_media(text(session), &where), ==, 0);
    g_assert_cmpuint(ntohs(where.sin_port), ==, 30000);
    const char *media = "c=IN IP4 10.0.0.1\r\nm=video 5 RTP/AVP 96\r\nc=IN IP4 10.0.0.9\r\n"
                        "m=audio 40000 RTP/AVP 0\r\nc=IN IP4 10.0.0.2/127\r\n";
    g_assert_cmpint(ng_sdp_media(text(media), &where), ==, 0);
    g_assert_cmpuint(ntohs(where.sin_port), ==, 40000);
    g_assert_cmpuint(where.sin_addr.s_addr, ==, inet_addr("10.0.0.2"));
    const char *refused[] = {"m=audio 4000 RTP/AVP 0\r\n", "c=IN IP4 1.2.3.4\nm=audio 0 RTP/AVP 0",
                             "c=IN IP4 1.2.3.4\nm=video 4000 RTP/AVP 96",
                             "c=IN IP4 not-an-address\nm=audio 4000 RTP/AVP 0",
                             "c=IN IP4 1.2.3.4\nm=audio 70000 RTP/AVP 0"};
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++)
        g_assert_cmpint(ng_sdp_media(text(refused[i]), &where), ==, -1);
}

static void test_side_addresses(void)
{
    const unsigned indexes[] = {0, 249, 250, VOIP_MAX_CALLS - 1};
    for (size_t i = 0; i < G_N_ELEMENTS(indexes); i++) {
        for (unsigned side = 0; side < 2; side++) {
            unsigned index = ~0u, got_side = ~0u;
            struct in_addr a = voip_side_address(indexes[i], side);
            g_assert_cmpint(voip_address_side(a, VOIP_MAX_CALLS, &index, &got_side), ==, 0);
            g_assert_cmpuint(index, ==, indexes[i]);
            g_assert_cmpuint(got_side, ==, side);
        }
    }
    unsigned index = 0, side = 0;
    struct in_addr local = {.s_addr = inet_addr("127.0.0.1")};
    g_assert_cmpint(voip_address_side(local, 10, &index, &side), ==, -1);
    g_assert_cmpint(voip_address_side(voip_side_address(10, 1), 10, &index, &side), ==, -1);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/voip/offer-reads-back", test_offer_reads_back);
    g_test_add_func("/voip/answer-and-delete", test_answer_and_delete);
    g_test_add_func("/voip/reply-with-nested-values", test_reply_with_nested_values);
    g_test_add_func("/voip/hostile-replies", test_hostile_replies);
    g_test_add_func("/voip/sdp-media-address", test_sdp_media_address);
    g_test_add_func("/voip/side-addresses", test_side_addresses);
    return g_test_run();
}
