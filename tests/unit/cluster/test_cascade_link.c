/* gateway/cluster/cascade_link.c: the link request an edge sends a room's
 * owner (round trip, hostile bodies refused), the synthetic offers, the
 * owner's SSRCs from its answer, and the edge's decision per poll. */
#include "cluster/cascade_link.h"
#include "sdp/sdp.h"

#include <glib.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static moat_cascade_request sample(void)
{
    moat_cascade_request r = {.port = 40000};
    strcpy(r.plugin, "room");
    strcpy(r.room, "lobby");
    strcpy(r.edge, "n1:8088");
    strcpy(r.media, "192.0.2.7");
    r.ssrc = 0xdeadbeefu;
    for (size_t i = 0; i < MOAT_CASCADE_KEYING; i++) {
        r.to_edge[i] = (uint8_t)i;
        r.to_owner[i] = (uint8_t)(255 - i);
    }
    return r;
}

static void test_request_round_trip(void)
{
    moat_cascade_request r = sample(), back;
    char *json = moat_cascade_request_to_json(&r);
    char why[96];
    g_assert_true(moat_cascade_request_parse(json, strlen(json), &back, why, sizeof why));
    g_assert_cmpmem(&r, sizeof r, &back, sizeof back);
    g_free(json);
}

static void expect_refused(const char *body, const char *reason_part)
{
    moat_cascade_request out;
    char why[96] = "";
    g_assert_false(moat_cascade_request_parse(body, strlen(body), &out, why, sizeof why));
    g_assert_nonnull(strstr(why, reason_part));
    /* Nothing of a refused request is kept. */
    moat_cascade_request zero = {0};
    g_assert_cmpmem(&out, sizeof out, &zero, sizeof zero);
}

/* "ssrc" (the edge leg's, for the owner's routes) is optional. */
static void test_request_ssrc_optional(void)
{
    moat_cascade_request r = sample(), back;
    r.ssrc = 0;
    char *json = moat_cascade_request_to_json(&r);
    g_assert_null(strstr(json, "ssrc"));
    char why[96];
    g_assert_true(moat_cascade_request_parse(json, strlen(json), &back, why, sizeof why));
    g_assert_cmpuint(back.ssrc, ==, 0);
    g_free(json);
}

static void test_request_refuses_hostile(void)
{
    const char *key = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw=="; /* 28 bytes */
    char body[1024];
    const char *ssrcs[] = {"0", "4294967296", "-1", "\"1\""};
    for (size_t i = 0; i < G_N_ELEMENTS(ssrcs); i++) {
        snprintf(body, sizeof body,
                 "{\"plugin\":\"room\",\"room\":\"r\",\"edge\":\"n1\",\"media\":\"::1\","
                 "\"port\":9,\"to_edge\":\"%s\",\"to_owner\":\"%s\",\"ssrc\":%s}",
                 key, key, ssrcs[i]);
        expect_refused(body, "ssrc");
    }
    expect_refused("[]", "not a JSON object");
    expect_refused("{", "not a JSON object");
    snprintf(body, sizeof body,
             "{\"plugin\":\"room\",\"room\":\"a:b\",\"edge\":\"n1\",\"media\":\"127.0.0.1\","
             "\"port\":1,\"to_edge\":\"%s\",\"to_owner\":\"%s\"}",
             key, key);
    expect_refused(body, "room");
    snprintf(body, sizeof body,
             "{\"plugin\":\"room\",\"room\":\"r\",\"edge\":\"n 1\",\"media\":\"127.0.0.1\","
             "\"port\":1,\"to_edge\":\"%s\",\"to_owner\":\"%s\"}",
             key, key);
    expect_refused(body, "edge");
    snprintf(body, sizeof body,
             "{\"plugin\":\"room\",\"room\":\"r\",\"edge\":\"n1\",\"media\":\"evil.example\","
             "\"port\":1,\"to_edge\":\"%s\",\"to_owner\":\"%s\"}",
             key, key);
    expect_refused(body, "media");
    snprintf(body, sizeof body,
             "{\"plugin\":\"room\",\"room\":\"r\",\"edge\":\"n1\",\"media\":\"::1\","
             "\"port\":65536,\"to_edge\":\"%s\",\"to_owner\":\"%s\"}",
             key, key);
    expect_refused(body, "port");
    snprintf(body, sizeof body,
             "{\"plugin\":\"room\",\"room\":\"r\",\"edge\":\"n1\",\"media\":\"::1\","
             "\"port\":9,\"to_edge\":\"%.36s\",\"to_owner\":\"%s\"}",
             key, key);
    expect_refused(body, "base64");
    snprintf(body, sizeof body,
             "{\"plugin\":\"room\",\"room\":\"r\",\"edge\":\"n1\",\"media\":\"::1\","
             "\"port\":9,\"to_edge\":\"%s\",\"to_owner\":\"%.20s=%s\"}",
             key, key, key + 21);
    expect_refused(body, "base64"); /* padding inside */
    snprintf(body, sizeof body,
             "{\"plugin\":\"room\",\"room\":\"r\",\"edge\":\"n1\",\"media\":\"::1\","
             "\"port\":9,\"to_edge\":\"%s\",\"to_owner\":\"%s\"}",
             key, "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd");
    expect_refused(body, "base64"); /* 30 bytes: the old SHA1_80 keying */
    /* Duplicate names are refused, not resolved either way. */
    snprintf(body, sizeof body,
             "{\"plugin\":\"room\",\"room\":\"r\",\"room\":\"s\",\"edge\":\"n1\",\"media\":\"::1\","
             "\"port\":9,\"to_edge\":\"%s\",\"to_owner\":\"%s\"}",
             key, key);
    expect_refused(body, "not a JSON object");
    char big[MOAT_CASCADE_REQUEST_MAX + 2];
    memset(big, ' ', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    expect_refused(big, "over");
}

static void test_offers(void)
{
    char *publisher = moat_cascade_offer(true);
    char *subscriber = moat_cascade_offer(false);
    g_assert_nonnull(strstr(publisher, "a=sendonly"));
    g_assert_null(strstr(publisher, "a=recvonly"));
    g_assert_nonnull(strstr(subscriber, "a=recvonly"));
    /* Both ends agree on the payload types and ask for NACK, PLI and REMB. */
    g_assert_nonnull(strstr(publisher, "a=rtpmap:111 opus/48000/2"));
    g_assert_nonnull(strstr(subscriber, "a=rtpmap:111 opus/48000/2"));
    g_assert_nonnull(strstr(publisher, "a=rtpmap:96 VP8/90000"));
    g_assert_nonnull(strstr(subscriber, "a=rtcp-fb:96 nack pli"));
    g_assert_nonnull(strstr(subscriber, "a=rtcp-fb:96 goog-remb"));
    /* RTX on both ends; layers declared by the edge's (sending) side only. */
    g_assert_nonnull(strstr(publisher, "a=fmtp:97 apt=96"));
    g_assert_nonnull(strstr(subscriber, "a=fmtp:97 apt=96"));
    g_assert_nonnull(strstr(publisher, "a=simulcast:send s0;s1;s2"));
    g_assert_null(strstr(subscriber, "a=simulcast"));
    g_free(publisher);
    g_free(subscriber);
}

/* The edge leg's offer declares the link's simulcast layers (s0, s1, s2)
 * and the negotiation keeps them: the edge's copy of the room sees a
 * simulcast publisher. */
static void test_publisher_offer_negotiates_layers(void)
{
    char *offer_text = moat_cascade_offer(true);
    char error[256] = "";
    moat_sdp *offer = moat_sdp_parse(offer_text, strlen(offer_text), error, sizeof error);
    g_assert_nonnull(offer);
    moat_sdp_answer_params params = {
        .ice_ufrag = "abcd",
        .ice_pwd = "abcdefghijklmnopqrstuvwx",
        .fingerprint_sha256 = "00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:"
                              "00:00:00:00:00:00:00:00:00:00:00:00",
        .setup = MOAT_SDP_SETUP_PASSIVE,
        .cname = "moat",
    };
    moat_sdp_negotiation *negotiation = g_new0(moat_sdp_negotiation, 1);
    char *answer = NULL;
    int created = moat_sdp_answer_create(offer, &params, negotiation, &answer, error, sizeof error);
    if (created != 0)
        g_printerr("%s\n", error);
    g_assert_cmpint(created, ==, 0);
    g_assert_cmpuint(negotiation->n_media, ==, 2);
    const moat_sdp_negotiated_media *video = &negotiation->media[1];
    g_assert_true(video->peer_sends);
    g_assert_cmpuint(video->rid_extension_id, ==, MOAT_CASCADE_RID_EXTENSION);
    g_assert_cmpuint(video->n_rids, ==, MOAT_CASCADE_LINK_LAYERS);
    for (size_t l = 0; l < MOAT_CASCADE_LINK_LAYERS; l++)
        g_assert_cmpstr(video->rids[l], ==, moat_cascade_layer_rids[l]);
    g_assert_cmpuint(negotiation->media[0].n_rids, ==, 0);
    g_assert_cmpuint(video->rtx_payload_types[0], ==, MOAT_CASCADE_PT_RTX);
    moat_sdp_free(offer);
    g_free(answer);
    g_free(negotiation);
    g_free(offer_text);
}

static void test_layer_ssrcs_parse(void)
{
    uint32_t out[3];
    json_t *good = json_loads("[1, 4294967295, 7]", 0, NULL);
    g_assert_cmpuint(moat_cascade_layer_ssrcs_parse(good, out, 3), ==, 3);
    g_assert_cmpuint(out[1], ==, 4294967295u);
    const char *bad[] = {"[0]", "[4294967296]", "[1,2,3,4]", "[\"1\"]", "{}", "-1"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        json_t *value = json_loads(bad[i], JSON_DECODE_ANY, NULL);
        g_assert_cmpuint(moat_cascade_layer_ssrcs_parse(value, out, 3), ==, 0);
        json_decref(value);
    }
    g_assert_cmpuint(moat_cascade_layer_ssrcs_parse(NULL, out, 3), ==, 0);
    json_decref(good);
}

static void test_answer_ssrcs(void)
{
    uint32_t ssrcs[2];
    moat_cascade_answer_ssrcs("v=0\r\nm=audio 9 X 111\r\na=ssrc:11 cname:x\r\na=ssrc:12 "
                              "msid:y\r\nm=video 9 X 96\r\na=ssrc:22 cname:x\r\n",
                              ssrcs);
    g_assert_cmpuint(ssrcs[0], ==, 11);
    g_assert_cmpuint(ssrcs[1], ==, 22);
    moat_cascade_answer_ssrcs("a=ssrc:5\r\nm=audio 9 X 111\r\n", ssrcs);
    g_assert_cmpuint(ssrcs[0], ==, 0);
    g_assert_cmpuint(ssrcs[1], ==, 0);
}

static void test_decide(void)
{
    g_assert_cmpint(moat_cascade_link_decide(true, false, 0, 0), ==, MOAT_CASCADE_KEEP);
    g_assert_cmpint(moat_cascade_link_decide(false, true, 2, 0), ==, MOAT_CASCADE_KEEP);
    g_assert_cmpint(moat_cascade_link_decide(false, true, 0, 1), ==, MOAT_CASCADE_KEEP);
    g_assert_cmpint(moat_cascade_link_decide(false, true, 0, 0), ==, MOAT_CASCADE_CLOSE_IDLE);
    /* A leg gone while subscribers are left: the owner went quiet. */
    g_assert_cmpint(moat_cascade_link_decide(false, false, 3, 0), ==, MOAT_CASCADE_OWNER_LOST);
    g_assert_cmpint(moat_cascade_link_decide(false, false, 0, 0), ==, MOAT_CASCADE_OWNER_LOST);
}

static void test_address(void)
{
    struct sockaddr_in6 a;
    g_assert_true(moat_cascade_address("127.0.0.1", 5000, &a));
    g_assert_cmpuint(a.sin6_addr.s6_addr[10], ==, 0xff);
    g_assert_cmpuint(a.sin6_addr.s6_addr[15], ==, 1);
    g_assert_cmpuint(ntohs(a.sin6_port), ==, 5000);
    g_assert_true(moat_cascade_address("2001:db8::1", 1, &a));
    g_assert_false(moat_cascade_address("localhost", 1, &a));
    g_assert_false(moat_cascade_address("", 1, &a));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cascade/request/round-trip", test_request_round_trip);
    g_test_add_func("/cascade/request/hostile", test_request_refuses_hostile);
    g_test_add_func("/cascade/offers", test_offers);
    g_test_add_func("/cascade/answer-ssrcs", test_answer_ssrcs);
    g_test_add_func("/cascade/publisher-offer-layers", test_publisher_offer_negotiates_layers);
    g_test_add_func("/cascade/layer-ssrcs", test_layer_ssrcs_parse);
    g_test_add_func("/cascade/request-ssrc-optional", test_request_ssrc_optional);
    g_test_add_func("/cascade/decide", test_decide);
    g_test_add_func("/cascade/address", test_address);
    return g_test_run();
}
