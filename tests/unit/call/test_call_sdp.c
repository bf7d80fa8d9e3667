/* The call layer's SDP (call/call_sdp.h): plain RTP/AVP from SIP phones
 * parses (no ICE, no DTLS needed), addresses resolve media over session
 * level, hold (0.0.0.0) is no address, rewriting changes c=, m= ports and
 * transport, o= only with replace-origin, removes ICE attributes, adds
 * a=rtcp or a=rtcp-mux, strips codecs, and hostile text is refused. The
 * direction (a=sendonly, recvonly, inactive) is read per m-line, a media
 * level attribute over the session's. */
#include <glib.h>
#include <string.h>

#include "call/call_sdp.h"

static const char *phone = "v=0\r\n"
                           "o=user1 53655765 2353687637 IN IP4 192.0.2.10\r\n"
                           "s=-\r\n"
                           "c=IN IP4 192.0.2.10\r\n"
                           "t=0 0\r\n"
                           "m=audio 6000 RTP/AVP 0 8 101\r\n"
                           "a=rtpmap:0 PCMU/8000\r\n"
                           "a=rtpmap:8 PCMA/8000\r\n"
                           "a=rtpmap:101 telephone-event/8000\r\n"
                           "a=fmtp:101 0-15\r\n"
                           "a=ice-ufrag:abcd\r\n"
                           "a=candidate:1 1 UDP 2130706431 192.0.2.10 6000 typ host\r\n"
                           "a=sendrecv\r\n";

static void test_parse_phone(void)
{
    moat_call_sdp sdp;
    char error[128];
    g_assert_cmpint(moat_call_sdp_parse(phone, strlen(phone), &sdp, error, sizeof error), ==, 0);
    g_assert_cmpuint(sdp.n_media, ==, 1);
    g_assert_cmpstr(sdp.media[0].kind, ==, "audio");
    g_assert_cmpstr(sdp.media[0].proto, ==, "RTP/AVP");
    g_assert_cmpuint(sdp.media[0].port, ==, 6000);
    g_assert_cmpuint(sdp.media[0].n_formats, ==, 3);
    g_assert_true(sdp.media[0].ice);
    g_assert_false(sdp.media[0].rtcp_mux);
    g_assert_cmpint(sdp.media[0].rtp.sin6_family, ==, AF_INET6);
    g_assert_cmpuint(g_ntohs(sdp.media[0].rtp.sin6_port), ==, 6000);
    g_assert_cmpuint(sdp.media[0].rtp.sin6_addr.s6_addr[15], ==, 10);
}

static void test_media_level_and_hold(void)
{
    const char *text = "v=0\r\nc=IN IP4 0.0.0.0\r\nm=audio 7000 RTP/AVP 8\r\n"
                       "m=video 7002 RTP/AVPF 96\r\nc=IN IP6 2001:db8::1\r\na=rtcp-mux\r\n"
                       "a=rtcp:7003\r\n";
    moat_call_sdp sdp;
    char error[128];
    g_assert_cmpint(moat_call_sdp_parse(text, strlen(text), &sdp, error, sizeof error), ==, 0);
    g_assert_cmpuint(sdp.n_media, ==, 2);
    g_assert_cmpint(sdp.media[0].rtp.sin6_family, ==, 0); /* hold */
    g_assert_cmpint(sdp.media[1].rtp.sin6_family, ==, AF_INET6);
    g_assert_true(sdp.media[1].rtcp_mux);
    g_assert_cmpuint(sdp.media[1].rtcp_port, ==, 7003);
}

/* The media timeout's input (call_timeout.c): which m-lines go both ways. */
static void test_direction(void)
{
    const char *text = "v=0\r\nc=IN IP4 192.0.2.1\r\na=inactive\r\n"
                       "m=audio 7000 RTP/AVP 8\r\n"
                       "m=audio 7002 RTP/AVP 8\r\na=sendrecv\r\n"
                       "m=audio 7004 RTP/AVP 8\r\na=sendonly\r\n"
                       "m=audio 7006 RTP/AVP 8\r\na=recvonly\r\n";
    moat_call_sdp sdp;
    char error[128];
    g_assert_cmpint(moat_call_sdp_parse(text, strlen(text), &sdp, error, sizeof error), ==, 0);
    g_assert_cmpint(sdp.media[0].direction, ==, MOAT_CALL_SDP_INACTIVE); /* the session's */
    g_assert_cmpint(sdp.media[1].direction, ==, MOAT_CALL_SDP_SENDRECV);
    g_assert_cmpint(sdp.media[2].direction, ==, MOAT_CALL_SDP_SENDONLY);
    g_assert_cmpint(sdp.media[3].direction, ==, MOAT_CALL_SDP_RECVONLY);
    g_assert_cmpint(moat_call_sdp_parse(phone, strlen(phone), &sdp, error, sizeof error), ==, 0);
    g_assert_cmpint(sdp.media[0].direction, ==, MOAT_CALL_SDP_SENDRECV);
    const char *none = "v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 7000 RTP/AVP 8\r\n";
    g_assert_cmpint(moat_call_sdp_parse(none, strlen(none), &sdp, error, sizeof error), ==, 0);
    g_assert_cmpint(sdp.media[0].direction, ==, MOAT_CALL_SDP_SENDRECV); /* RFC 4566's default */
}

static void test_hostile(void)
{
    const char *bad[] = {
        "",
        "m=audio 1 RTP/AVP 0\r\n",           /* no v= */
        "v=0\r\nc=IN IP4 192.0.2.1\r\n",     /* no m= */
        "v=0\r\nm=audio 5000 RTP/AVP 0\r\n", /* no c= */
        "v=0\r\nc=IN IP4 phone.example\r\nm=audio 5000 RTP/AVP 0\r\n",
        "v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 70000 RTP/AVP 0\r\n",
        "v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 5000 RTP/AVP\r\n",
        "v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 5000/2 RTP/AVP 0\r\n",
        "v=1\r\n",
        "garbage",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        moat_call_sdp sdp;
        char error[128] = "";
        g_assert_cmpint(moat_call_sdp_parse(bad[i], strlen(bad[i]), &sdp, error, sizeof error), ==,
                        -1);
        g_assert_cmpstr(error, !=, "");
    }
    GString *many = g_string_new("v=0\r\nc=IN IP4 192.0.2.1\r\n");
    for (int i = 0; i < MOAT_CALL_SDP_MAX_MEDIA + 1; i++)
        g_string_append(many, "m=audio 5000 RTP/AVP 0\r\n");
    moat_call_sdp sdp;
    char error[128];
    g_assert_cmpint(moat_call_sdp_parse(many->str, many->len, &sdp, error, sizeof error), ==, -1);
    g_string_free(many, TRUE);
}

static void test_rewrite(void)
{
    moat_call_sdp_rewrite how = {.address = "203.0.113.5", .ports = {30000}};
    GString *out = g_string_new(NULL);
    char error[128];
    g_assert_cmpint(
        moat_call_sdp_rewrite_text(phone, strlen(phone), &how, out, error, sizeof error), ==, 0);
    g_assert_nonnull(strstr(out->str, "c=IN IP4 203.0.113.5\r\n"));
    g_assert_nonnull(strstr(out->str, "m=audio 30000 RTP/AVP 0 8 101\r\n"));
    g_assert_nonnull(strstr(out->str, "o=user1 53655765 2353687637 IN IP4 192.0.2.10\r\n"));
    g_assert_nonnull(strstr(out->str, "a=rtcp:30001\r\n"));
    g_assert_null(strstr(out->str, "ice-ufrag"));
    g_assert_null(strstr(out->str, "candidate"));
    g_assert_nonnull(strstr(out->str, "a=sendrecv\r\n"));
    g_string_free(out, TRUE);
}

static void test_rewrite_options(void)
{
    const char *strip[] = {"PCMU"};
    moat_call_sdp_rewrite how = {.address = "2001:db8::5",
                                 .ports = {30002},
                                 .rtcp_mux = {true},
                                 .transport_protocol = "RTP/SAVP",
                                 .replace_origin = true,
                                 .strip = strip,
                                 .n_strip = 1};
    GString *out = g_string_new(NULL);
    char error[128];
    g_assert_cmpint(
        moat_call_sdp_rewrite_text(phone, strlen(phone), &how, out, error, sizeof error), ==, 0);
    g_assert_nonnull(strstr(out->str, "o=user1 53655765 2353687637 IN IP6 2001:db8::5\r\n"));
    g_assert_nonnull(strstr(out->str, "c=IN IP6 2001:db8::5\r\n"));
    g_assert_nonnull(strstr(out->str, "m=audio 30002 RTP/SAVP 8 101\r\n"));
    g_assert_null(strstr(out->str, "PCMU"));
    g_assert_nonnull(strstr(out->str, "a=rtcp-mux\r\n"));
    g_string_free(out, TRUE);

    const char *held = "v=0\r\nc=IN IP4 0.0.0.0\r\nm=audio 7000 RTP/AVP 8\r\na=sendonly\r\n";
    out = g_string_new(NULL);
    how.strip = NULL;
    how.n_strip = 0;
    g_assert_cmpint(moat_call_sdp_rewrite_text(held, strlen(held), &how, out, error, sizeof error),
                    ==, 0);
    g_assert_nonnull(strstr(out->str, "c=IN IP4 0.0.0.0\r\n"));
    g_string_free(out, TRUE);

    const char *all[] = {"all"};
    how.strip = all;
    how.n_strip = 1;
    out = g_string_new(NULL);
    g_assert_cmpint(
        moat_call_sdp_rewrite_text(phone, strlen(phone), &how, out, error, sizeof error), ==, -1);
    g_string_free(out, TRUE);
}

/* aiortc's (and browsers') shape: credentials at session level, DTLS
 * transport on the m-line. */
static const char *webrtc_offer = "v=0\r\n"
                                  "o=- 1 1 IN IP4 0.0.0.0\r\n"
                                  "s=-\r\n"
                                  "t=0 0\r\n"
                                  "a=group:BUNDLE 0\r\n"
                                  "a=ice-ufrag:abcd\r\n"
                                  "a=ice-pwd:abcdefghijklmnopqrstuv\r\n"
                                  "a=fingerprint:sha-256 AA:BB\r\n"
                                  "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"
                                  "c=IN IP4 0.0.0.0\r\n"
                                  "a=setup:actpass\r\n"
                                  "a=rtcp-mux\r\n"
                                  "a=rtpmap:111 opus/48000/2\r\n";

static void test_webrtc_classification(void)
{
    moat_call_sdp sdp;
    char error[128];
    g_assert_cmpint(
        moat_call_sdp_parse(webrtc_offer, strlen(webrtc_offer), &sdp, error, sizeof error), ==, 0);
    g_assert_true(moat_call_sdp_is_webrtc(&sdp));
    g_assert_true(sdp.media[0].ice_ufrag && sdp.media[0].ice_pwd && sdp.media[0].fingerprint);
    g_assert_cmpint(moat_call_sdp_check_webrtc(&sdp, error, sizeof error), ==, 0);
    /* A phone running ICE over RTP/AVP is not a WebRTC party; it would
     * fail the WebRTC check (no a=ice-pwd), which is not asked of it. */
    g_assert_cmpint(moat_call_sdp_parse(phone, strlen(phone), &sdp, error, sizeof error), ==, 0);
    g_assert_false(moat_call_sdp_is_webrtc(&sdp));
    g_assert_cmpint(moat_call_sdp_check_webrtc(&sdp, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "ice-pwd"));
}

/* Each missing credential is named; a refused DTLS m-line (port 0) does
 * not make a party WebRTC. */
static void test_webrtc_missing(void)
{
    static const char *const lines[] = {"a=ice-ufrag:abcd\r\n",
                                        "a=ice-pwd:abcdefghijklmnopqrstuv\r\n",
                                        "a=fingerprint:sha-256 AA:BB\r\n"};
    static const char *const names[] = {"ice-ufrag", "ice-pwd", "fingerprint"};
    for (size_t i = 0; i < G_N_ELEMENTS(lines); i++) {
        GString *text = g_string_new(webrtc_offer);
        const char *at = strstr(text->str, lines[i]);
        g_string_erase(text, at - text->str, (gssize)strlen(lines[i]));
        moat_call_sdp sdp;
        char error[128];
        g_assert_cmpint(moat_call_sdp_parse(text->str, text->len, &sdp, error, sizeof error), ==,
                        0);
        g_assert_true(moat_call_sdp_is_webrtc(&sdp)); /* the DTLS transport says so */
        g_assert_cmpint(moat_call_sdp_check_webrtc(&sdp, error, sizeof error), ==, -1);
        g_assert_nonnull(strstr(error, names[i]));
        g_string_free(text, TRUE);
    }
    const char *plain = "v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 0 UDP/TLS/RTP/SAVPF 111\r\n"
                        "m=audio 4000 RTP/AVP 0\r\n";
    moat_call_sdp sdp;
    char error[128];
    g_assert_cmpint(moat_call_sdp_parse(plain, strlen(plain), &sdp, error, sizeof error), ==, 0);
    g_assert_false(moat_call_sdp_is_webrtc(&sdp)); /* the DTLS m-line is refused */
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/call/sdp/parse-phone", test_parse_phone);
    g_test_add_func("/call/sdp/media-level-and-hold", test_media_level_and_hold);
    g_test_add_func("/call/sdp/direction", test_direction);
    g_test_add_func("/call/sdp/hostile", test_hostile);
    g_test_add_func("/call/sdp/rewrite", test_rewrite);
    g_test_add_func("/call/sdp/rewrite-options", test_rewrite_options);
    g_test_add_func("/call/sdp/webrtc-classification", test_webrtc_classification);
    g_test_add_func("/call/sdp/webrtc-missing", test_webrtc_missing);
    return g_test_run();
}
