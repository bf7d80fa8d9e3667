/* The SDP behind Moat's own WebRTC offer to a call party
 * (call/call_webrtc_offer_sdp.h): codec order, what is left out, what is
 * refused, and that Moat's answer to it (its offer) carries everything a
 * WebRTC client needs. */
#include "call/call_webrtc_offer_sdp.h"
#include "call_webrtc_answer_fixture.h"
#include "sdp/sdp.h"

#include <glib.h>
#include <string.h>

#define FINGERPRINT CALL_TEST_FINGERPRINT

static const char *const opus[] = {"opus"};

static char *self_offer(const char *phone, char *error, size_t error_size)
{
    return moat_call_webrtc_self_offer(phone, strlen(phone), opus, 1, FINGERPRINT, error,
                                       error_size);
}

static void test_opus_first_then_phone_codecs(void)
{
    const char *phone = "v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 4000 RTP/AVP 0 0 101\r\n"
                        "a=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\n";
    char error[160];
    char *text = self_offer(phone, error, sizeof error);
    g_assert_nonnull(text);
    g_assert_nonnull(strstr(text, "a=group:BUNDLE 0\r\n"));
    g_assert_nonnull(strstr(text, "a=mid:0\r\n"));
    g_assert_nonnull(strstr(text, "a=rtcp-mux\r\n"));
    const char *m = strstr(text, "m=audio 9 UDP/TLS/RTP/SAVPF ");
    g_assert_nonnull(m);
    const char *rtpmap = strstr(text, "opus/48000/2");
    g_assert_nonnull(rtpmap);
    /* the repeated 0 appears once */
    g_assert_null(strstr(text, " 0 0"));

    moat_sdp *offer = moat_sdp_parse(text, strlen(text), error, sizeof error);
    g_assert_nonnull(offer);
    moat_sdp_negotiation *n = NULL;
    char *moat_offer = NULL;
    g_assert_cmpint(
        call_test_answer_self_offer(offer, "127.0.0.1", &n, &moat_offer, error, sizeof error), ==,
        0);
    for (size_t i = 0; i < 4; i++) {
        static const char *const needed[] = {"a=ice-lite", "a=ice-ufrag:abcdefgh",
                                             "a=setup:passive", "a=candidate:"};
        g_assert_nonnull(strstr(moat_offer, needed[i]));
    }
    g_assert_nonnull(strstr(moat_offer, "a=fingerprint:sha-256 " FINGERPRINT));
    g_assert_nonnull(strstr(moat_offer, "PCMU/8000"));
    g_assert_cmpuint(n->media[0].local_ssrc, !=, 0);
    g_free(moat_offer);
    g_free(n);
    moat_sdp_free(offer);
    g_free(text);
}

static void test_refused(void)
{
    const char *cases[] = {
        /* video next to audio */
        ("v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 4000 RTP/AVP 0\r\nm=video 4002 RTP/AVP 96\r\n"
         "a=rtpmap:96 H264/90000\r\n"),
        "v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 0 RTP/AVP 0\r\n",
        "not an sdp",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char error[160] = "";
        char *text = self_offer(cases[i], error, sizeof error);
        g_assert_null(text);
        g_assert_cmpstr(error, !=, "");
    }
}

/* A codec name the SDP parser would not read back is left out. */
static void test_odd_codec_name_left_out(void)
{
    const char *phone = "v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio 4000 RTP/AVP 0 96\r\n"
                        "a=rtpmap:96 x(y/8000\r\n";
    char error[160];
    char *text = self_offer(phone, error, sizeof error);
    g_assert_nonnull(text);
    g_assert_null(strstr(text, "x(y"));
    moat_sdp *offer = moat_sdp_parse(text, strlen(text), error, sizeof error);
    g_assert_nonnull(offer);
    moat_sdp_free(offer);
    g_free(text);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/call/webrtc-offer/opus-first", test_opus_first_then_phone_codecs);
    g_test_add_func("/call/webrtc-offer/refused", test_refused);
    g_test_add_func("/call/webrtc-offer/odd-codec-name", test_odd_codec_name_left_out);
    return g_test_run();
}
