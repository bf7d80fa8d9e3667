/* Simulcast offers (RFC 8853): a=rid and a=simulcast are parsed, the answer
 * receives the layers (a=rid ... recv, a=simulcast:recv) and keeps the mid,
 * rid and repaired-rid header extensions; hostile lists are bounded. */
#include <glib.h>
#include <string.h>

#include "sdp/sdp.h"
#include "sdp_test_answer.h"
#include "sdp_test_text.h"

#define FP                                                                                         \
    "A5:4D:CA:18:25:30:BB:1D:6D:13:2C:DE:D6:23:7B:2E:D9:1E:3F:72:1F:CB:19:71:17:44:94:D6:49:3C:"   \
    "9D:"                                                                                          \
    "5C"

/* What Chromium writes for a WHIP publisher whose video transceiver has
 * sendEncodings [{rid: 'h'}, {rid: 'm', scaleResolutionDownBy: 2},
 * {rid: 'l', scaleResolutionDownBy: 4}]: no a=ssrc for the video. */
static const char offer_chromium_simulcast[] =
    "v=0\r\n"
    "o=- 6043720893113624717 2 IN IP4 127.0.0.1\r\n"
    "s=-\r\n"
    "t=0 0\r\n"
    "a=group:BUNDLE 0 1\r\n"
    "a=extmap-allow-mixed\r\n"
    "a=msid-semantic: WMS s1\r\n"
    "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"
    "c=IN IP4 0.0.0.0\r\n"
    "a=ice-ufrag:Vg7k\r\n"
    "a=ice-pwd:Lq2/fI1X0wVbN7sQ3sQk2a1Z\r\n"
    "a=fingerprint:sha-256 " FP "\r\n"
    "a=setup:actpass\r\n"
    "a=mid:0\r\n"
    "a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level\r\n"
    "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid\r\n"
    "a=sendonly\r\n"
    "a=msid:s1 a1\r\n"
    "a=rtcp-mux\r\n"
    "a=rtpmap:111 opus/48000/2\r\n"
    "a=fmtp:111 minptime=10;useinbandfec=1\r\n"
    "a=ssrc:1111 cname:c\r\n"
    "m=video 9 UDP/TLS/RTP/SAVPF 96 97\r\n"
    "c=IN IP4 0.0.0.0\r\n"
    "a=ice-ufrag:Vg7k\r\n"
    "a=ice-pwd:Lq2/fI1X0wVbN7sQ3sQk2a1Z\r\n"
    "a=fingerprint:sha-256 " FP "\r\n"
    "a=setup:actpass\r\n"
    "a=mid:1\r\n"
    "a=extmap:14 urn:ietf:params:rtp-hdrext:toffset\r\n"
    "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01\r\n"
    "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid\r\n"
    "a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id\r\n"
    "a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id\r\n"
    "a=sendonly\r\n"
    "a=msid:s1 v1\r\n"
    "a=rtcp-mux\r\n"
    "a=rtcp-rsize\r\n"
    "a=rtpmap:96 VP8/90000\r\n"
    "a=rtcp-fb:96 goog-remb\r\n"
    "a=rtcp-fb:96 nack\r\n"
    "a=rtcp-fb:96 nack pli\r\n"
    "a=rtpmap:97 rtx/90000\r\n"
    "a=fmtp:97 apt=96\r\n"
    "a=rid:h send\r\n"
    "a=rid:m send\r\n"
    "a=rid:l send\r\n"
    "a=simulcast:send h;m;l\r\n";

static void test_chromium_simulcast(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    moat_sdp_negotiation n;
    char *answer = moat_test_answer_ok(offer_chromium_simulcast, &params, &n);
    const moat_sdp_negotiated_media *video = &n.media[1];
    g_assert_cmpuint(video->n_rids, ==, 3);
    g_assert_cmpstr(video->rids[0], ==, "h");
    g_assert_cmpstr(video->rids[1], ==, "m");
    g_assert_cmpstr(video->rids[2], ==, "l");
    g_assert_cmpuint(video->rid_extension_id, ==, 10);
    g_assert_cmpuint(video->repaired_rid_extension_id, ==, 11);
    g_assert_cmpuint(video->mid_extension_id, ==, 4);
    g_assert_cmpuint(n.media[0].n_rids, ==, 0);

    char *text = moat_test_section(answer, 1);
    g_assert_nonnull(strstr(text, "a=recvonly\r\n"
                                  "a=rid:h recv\r\n"
                                  "a=rid:m recv\r\n"
                                  "a=rid:l recv\r\n"
                                  "a=simulcast:recv h;m;l\r\n"));
    g_assert_nonnull(strstr(text, "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid\r\n"));
    g_assert_nonnull(strstr(text, "a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id\r\n"));
    g_assert_nonnull(
        strstr(text, "a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id\r\n"));
    g_free(text);
    text = moat_test_section(answer, 0);
    g_assert_null(strstr(text, "a=simulcast"));
    g_assert_null(strstr(text, "rtp-stream-id"));
    g_free(text);
    g_free(answer);
}

/* Answers `offer` and returns its video section (g_malloc'd). */
static char *video_answer(char *offer, moat_sdp_negotiation *n)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    char *answer = moat_test_answer_ok(offer, &params, n);
    char *text = moat_test_section(answer, 1);
    g_free(answer);
    g_free(offer);
    return text;
}

/* Alternatives and paused streams: the first alternative of each stream; a
 * stream without its a=rid ... send is left out, and at most three. */
static void test_simulcast_lists(void)
{
    moat_sdp_negotiation n;
    char *first = moat_test_replace(offer_chromium_simulcast, "a=simulcast:send h;m;l",
                                    "a=simulcast:send h,x;~m;q;l;l2 recv z");
    char *offer =
        moat_test_replace(first, "a=rid:l send\r\n",
                          "a=rid:l send\r\na=rid:l2 send max-width=320\r\na=rid:z recv\r\n");
    g_free(first);
    char *text = video_answer(offer, &n);
    g_assert_cmpuint(n.media[1].n_rids, ==, 3);
    g_assert_nonnull(strstr(text, "a=simulcast:recv h;m;l\r\n"));
    g_assert_null(strstr(text, "l2"));
    g_free(text);
}

/* Without the rid extension, or when the peer does not send, there is no
 * simulcast: one stream, and the rid extensions are not answered. */
static void test_no_simulcast(void)
{
    moat_sdp_negotiation n;
    char *offer = moat_test_drop_lines(offer_chromium_simulcast, "a=extmap:10 ");
    char *text = video_answer(offer, &n);
    g_assert_cmpuint(n.media[1].n_rids, ==, 0);
    g_assert_null(strstr(text, "a=simulcast"));
    g_assert_null(strstr(text, "a=rid:"));
    g_free(text);

    offer = moat_test_replace(offer_chromium_simulcast, "a=sendonly\r\na=msid:s1 v1",
                              "a=recvonly\r\na=msid:s1 v1");
    text = video_answer(offer, &n);
    g_assert_cmpuint(n.media[1].n_rids, ==, 0);
    g_assert_null(strstr(text, "rtp-stream-id"));
    g_free(text);
}

static void expect_fails(const char *from, const char *to, const char *message)
{
    char *offer = moat_test_replace(offer_chromium_simulcast, from, to);
    char error[256];
    moat_sdp *sdp = moat_sdp_parse(offer, strlen(offer), error, sizeof error);
    g_assert_null(sdp);
    g_assert_nonnull(strstr(error, message));
    g_free(offer);
}

static void test_hostile(void)
{
    expect_fails("a=rid:m send", "a=rid:m sideways", "a=rid: bad direction");
    expect_fails("a=rid:m send", "a=rid:h send", "a=rid: duplicate rid");
    expect_fails("a=rid:m send", "a=rid:m", "a=rid: expected");
    expect_fails("a=simulcast:send h;m;l", "a=simulcast:send", "a=simulcast: direction");
    expect_fails("a=simulcast:send h;m;l", "a=simulcast:send h;;l", "a=simulcast: empty");
    expect_fails("a=simulcast:send h;m;l", "a=simulcast:up h", "a=simulcast: bad direction");
    expect_fails("a=simulcast:send h;m;l", "a=simulcast:send h send m", "two send lists");
    expect_fails("a=simulcast:send h;m;l", "a=simulcast: ", "a=simulcast: missing");
    /* A rid named twice would be answered twice (found by fuzz_sdp). */
    expect_fails("a=simulcast:send h;m;l", "a=simulcast:send h;l;l", "rid twice");
    expect_fails("a=simulcast:send h;m;l", "a=simulcast:send h;~l;l", "rid twice");

    /* Ids too long to name, and more rids than kept, are ignored. */
    GString *many = g_string_new("");
    for (int i = 0; i < 40; i++)
        g_string_append_printf(many, "a=rid:r%d send\r\n", i);
    g_string_append(many, "a=rid:abcdefghijklmnopqrstuvwxyz send\r\na=simulcast:send "
                          "abcdefghijklmnopqrstuvwxyz;r0;r1;r2;r3\r\n");
    char *offer = moat_test_replace(offer_chromium_simulcast,
                                    "a=rid:h send\r\na=rid:m send\r\na=rid:l send\r\n"
                                    "a=simulcast:send h;m;l\r\n",
                                    many->str);
    g_string_free(many, TRUE);
    moat_sdp_negotiation n;
    char *text = video_answer(offer, &n);
    g_assert_nonnull(strstr(text, "a=simulcast:recv r0;r1;r2\r\n"));
    g_free(text);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sdp/simulcast/chromium", test_chromium_simulcast);
    g_test_add_func("/sdp/simulcast/lists", test_simulcast_lists);
    g_test_add_func("/sdp/simulcast/none", test_no_simulcast);
    g_test_add_func("/sdp/simulcast/hostile", test_hostile);
    return g_test_run();
}
