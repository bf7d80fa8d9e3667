/* The transcoder's SDP side: an m-line's codecs (rtpmap and static types),
 * the plan for a call whose legs share no codec, the ng codec-transcode
 * rewrite of an offer, and malformed input refused with a message. */
#include "transcode/transcode_sdp.h"

#include <glib.h>
#include <limits.h>
#include <string.h>

static const char phone_offer[] = "v=0\r\n"
                                  "o=- 1 1 IN IP4 192.0.2.1\r\n"
                                  "s=-\r\n"
                                  "c=IN IP4 192.0.2.1\r\n"
                                  "t=0 0\r\n"
                                  "m=audio 4000 RTP/AVP 0 8 101\r\n"
                                  "a=rtpmap:101 telephone-event/8000\r\n"
                                  "a=fmtp:101 0-16\r\n"
                                  "a=sendrecv\r\n";

static const char webrtc_answer[] = "v=0\r\n"
                                    "o=- 2 2 IN IP4 127.0.0.1\r\n"
                                    "s=-\r\n"
                                    "t=0 0\r\n"
                                    "m=audio 9 UDP/TLS/RTP/SAVPF 111 110\r\n"
                                    "c=IN IP4 0.0.0.0\r\n"
                                    "a=rtpmap:111 opus/48000/2\r\n"
                                    "a=rtpmap:110 telephone-event/48000\r\n"
                                    "m=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
                                    "a=rtpmap:96 VP8/90000\r\n";

static moat_transcode_sdp_codecs codecs_of(const char *sdp, size_t index)
{
    moat_transcode_sdp_codecs codecs;
    char error[128] = "";
    g_assert_cmpint(
        moat_transcode_sdp_codecs_of(sdp, strlen(sdp), index, &codecs, error, sizeof error), ==, 0);
    return codecs;
}

static void test_codecs(void)
{
    moat_transcode_sdp_codecs phone = codecs_of(phone_offer, 0);
    g_assert_cmpuint(phone.n_codecs, ==, 3);
    g_assert_cmpstr(phone.codecs[0].name, ==, "PCMU");
    g_assert_cmpuint(phone.codecs[0].payload_type, ==, 0);
    g_assert_cmpstr(phone.codecs[1].name, ==, "PCMA");
    g_assert_cmpstr(phone.codecs[2].name, ==, "telephone-event");
    g_assert_cmpuint(phone.codecs[2].payload_type, ==, 101);
    g_assert_cmpuint(phone.codecs[2].clock_rate, ==, 8000);
    moat_transcode_sdp_codecs web = codecs_of(webrtc_answer, 0);
    g_assert_cmpuint(web.n_codecs, ==, 2);
    g_assert_cmpstr(web.codecs[0].name, ==, "opus");
    g_assert_cmpuint(web.codecs[0].clock_rate, ==, 48000);
    g_assert_cmpuint(web.codecs[0].channels, ==, 2);
    moat_transcode_sdp_codecs video = codecs_of(webrtc_answer, 1);
    g_assert_cmpstr(video.codecs[0].name, ==, "VP8");
}

static void test_plan(void)
{
    moat_transcode_sdp_codecs phone = codecs_of(phone_offer, 0);
    moat_transcode_sdp_codecs web = codecs_of(webrtc_answer, 0);
    moat_transcode_plan plan;
    char error[128] = "";
    g_assert_cmpint(moat_transcode_plan_make(&phone, &web, &plan, error, sizeof error), ==, 0);
    g_assert_true(plan.transcode);
    g_assert_cmpstr(plan.sides[0].name, ==, "PCMU");
    g_assert_cmpuint(plan.sides[0].payload_type, ==, 0);
    g_assert_cmpuint(plan.sides[0].dtmf_payload_type, ==, 101);
    g_assert_cmpuint(plan.sides[0].dtmf_clock_rate, ==, 8000);
    g_assert_cmpstr(plan.sides[1].name, ==, "opus");
    g_assert_cmpuint(plan.sides[1].payload_type, ==, 111);
    g_assert_cmpuint(plan.sides[1].dtmf_payload_type, ==, 110);
    g_assert_cmpuint(plan.sides[1].clock_rate, ==, 48000);

    /* The answer picks a codec of the offer: relayed as is. */
    g_assert_cmpint(moat_transcode_plan_make(&phone, &phone, &plan, error, sizeof error), ==, 0);
    g_assert_false(plan.transcode);

    /* Nothing to transcode to: refused with a reason. */
    moat_transcode_sdp_codecs video = codecs_of(webrtc_answer, 1);
    g_assert_cmpint(moat_transcode_plan_make(&phone, &video, &plan, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "VP8"));
    moat_transcode_sdp_codecs events_only = {.n_codecs = 1};
    events_only.codecs[0] = phone.codecs[2];
    g_assert_cmpint(moat_transcode_plan_make(&phone, &events_only, &plan, error, sizeof error), ==,
                    -1);
}

static void test_add_codecs(void)
{
    const char *const add[] = {"opus", "PCMU", "VP8", "G722"};
    GString *out = g_string_new(NULL);
    char error[128] = "";
    g_assert_cmpint(moat_transcode_sdp_add_codecs(phone_offer, strlen(phone_offer), add, 4, out,
                                                  error, sizeof error),
                    ==, 0);
    g_assert_nonnull(strstr(out->str, "m=audio 4000 RTP/AVP 0 8 101 96 97 9\r\n"));
    g_assert_nonnull(strstr(out->str, "a=rtpmap:96 opus/48000/2\r\n"));
    g_assert_nonnull(strstr(out->str, "a=rtpmap:97 telephone-event/48000\r\na=fmtp:97 0-16\r\n"));
    g_assert_nonnull(strstr(out->str, "a=rtpmap:9 G722/8000\r\n"));
    g_assert_nonnull(strstr(out->str, "a=sendrecv\r\n"));
    moat_transcode_sdp_codecs codecs = codecs_of(out->str, 0);
    g_assert_cmpuint(codecs.n_codecs, ==, 6);
    g_assert_cmpstr(codecs.codecs[3].name, ==, "opus");

    /* Already there: unchanged, byte for byte (CRLF lines). */
    g_string_truncate(out, 0);
    g_assert_cmpint(moat_transcode_sdp_add_codecs(webrtc_answer, strlen(webrtc_answer), add, 1, out,
                                                  error, sizeof error),
                    ==, 0);
    g_assert_cmpstr(out->str, ==, webrtc_answer);
    g_string_free(out, TRUE);
}

/* The answer back to a PCMU phone when the callee chose Opus: PCMU and the
 * phone's telephone-event only, other lines kept, the video m-line as is. */
static void test_restrict(void)
{
    const moat_transcoder_codec pcmu = {"PCMU", 8000, 1, 0, 101, 8000};
    GString *out = g_string_new(NULL);
    char error[128] = "";
    g_assert_cmpint(moat_transcode_sdp_restrict(webrtc_answer, strlen(webrtc_answer), 0, &pcmu, out,
                                                error, sizeof error),
                    ==, 0);
    g_assert_nonnull(strstr(out->str,
                            "m=audio 9 UDP/TLS/RTP/SAVPF 0 101\r\nc=IN IP4 0.0.0.0\r\n"
                            "a=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\n"
                            "a=fmtp:101 0-16\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
                            "a=rtpmap:96 VP8/90000\r\n"));
    g_assert_null(strstr(out->str, "opus"));
    moat_transcode_sdp_codecs codecs = codecs_of(out->str, 0);
    g_assert_cmpuint(codecs.n_codecs, ==, 2);
    g_assert_cmpstr(codecs.codecs[0].name, ==, "PCMU");
    g_assert_cmpint(moat_transcode_sdp_restrict(webrtc_answer, strlen(webrtc_answer), 2, &pcmu, out,
                                                error, sizeof error),
                    ==, -1);
    g_string_free(out, TRUE);
}

/* The most a restriction adds (MOAT_TRANSCODE_SDP_RESTRICT_GROWTH, what an
 * answer's reply keeps room for): the longest numbers and a 31-byte name,
 * on an m-line with no format and no codec line to drop. */
static void test_restrict_growth(void)
{
    static const char longest_name[] = "abcdefghijklmnopqrstuvwxyz01234";
    g_assert_cmpuint(strlen(longest_name), ==, sizeof((moat_transcode_sdp_codec *)NULL)->name - 1);
    const moat_transcoder_codec widest = {longest_name, UINT32_MAX, UINT_MAX, 255, 255, UINT32_MAX};
    static const char *const sdps[] = {
        "v=0\r\ns=-\r\nt=0 0\r\nm=audio 9 RTP/AVP\r\na=sendrecv\r\n",
        "v=0\r\ns=-\r\nt=0 0\r\nm=audio 9 RTP/AVP 0\r\n",
    };
    static const size_t growth[] = {MOAT_TRANSCODE_SDP_RESTRICT_GROWTH,
                                    MOAT_TRANSCODE_SDP_RESTRICT_GROWTH - 2};
    for (size_t i = 0; i < G_N_ELEMENTS(sdps); i++) {
        GString *out = g_string_new(NULL);
        char error[128] = "";
        g_assert_cmpint(moat_transcode_sdp_restrict(sdps[i], strlen(sdps[i]), 0, &widest, out,
                                                    error, sizeof error),
                        ==, 0);
        g_assert_cmpuint(out->len - strlen(sdps[i]), ==, growth[i]);
        g_string_free(out, TRUE);
    }
}

static void test_malformed(void)
{
    moat_transcode_sdp_codecs codecs;
    char error[128] = "";
    g_assert_cmpint(moat_transcode_sdp_codecs_of(phone_offer, strlen(phone_offer), 1, &codecs,
                                                 error, sizeof error),
                    ==, -1);
    g_assert_nonnull(strstr(error, "no m-line"));
    const char bad_rtpmap[] = "v=0\r\nm=audio 1 RTP/AVP 96\r\na=rtpmap:96 opus\r\n";
    g_assert_cmpint(moat_transcode_sdp_codecs_of(bad_rtpmap, strlen(bad_rtpmap), 0, &codecs, error,
                                                 sizeof error),
                    ==, -1);
    g_assert_nonnull(strstr(error, "rtpmap"));
    const char nul[] = "v=0\r\nm=audio 1 RTP/AVP 0\r\n\0";
    GString *out = g_string_new(NULL);
    const char *const add[] = {"opus"};
    g_assert_cmpint(
        moat_transcode_sdp_add_codecs(nul, sizeof nul, add, 1, out, error, sizeof error), ==, -1);
    g_string_free(out, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/transcode_sdp/codecs", test_codecs);
    g_test_add_func("/transcode_sdp/plan", test_plan);
    g_test_add_func("/transcode_sdp/add_codecs", test_add_codecs);
    g_test_add_func("/transcode_sdp/restrict", test_restrict);
    g_test_add_func("/transcode_sdp/restrict-growth", test_restrict_growth);
    g_test_add_func("/transcode_sdp/malformed", test_malformed);
    return g_test_run();
}
