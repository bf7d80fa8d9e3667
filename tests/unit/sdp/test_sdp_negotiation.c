/* Negotiation rules on top of real offers: directions, DTLS roles, SRTP+
 * and the gateway's own SSRCs. */
#include <glib.h>
#include <string.h>

#include "offers.h"
#include "sdp/sdp.h"
#include "sdp_test_answer.h"
#include "sdp_test_text.h"

static char *with_srtpplus(const char *lines)
{
    char *insert = g_strdup_printf("a=setup:actpass\r\n%s", lines);
    char *offer = moat_test_replace(moat_test_offer_chromium, "a=setup:actpass\r\n", insert);
    g_free(insert);
    return offer;
}

static void test_directions(void)
{
    struct {
        const char *offered;
        moat_sdp_direction answered;
        bool peer_sends, peer_receives, gateway_sends;
    } cases[] = {
        {"a=sendrecv", MOAT_SDP_SENDRECV, true, true, true},
        {"a=sendonly", MOAT_SDP_RECVONLY, true, false, false},
        {"a=recvonly", MOAT_SDP_SENDONLY, false, true, true},
        {"a=inactive", MOAT_SDP_INACTIVE, false, false, false},
    };
    moat_sdp_answer_params params = moat_test_answer_params();
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *offer = moat_test_replace(moat_test_offer_aiortc, "a=sendrecv", cases[i].offered);
        moat_sdp_negotiation n;
        char *answer = moat_test_answer_ok(offer, &params, &n);
        for (size_t m = 0; m < 2; m++) {
            g_assert_cmpint(n.media[m].answer_direction, ==, cases[i].answered);
            g_assert_cmpint(n.media[m].peer_sends, ==, cases[i].peer_sends);
            g_assert_cmpint(n.media[m].peer_receives, ==, cases[i].peer_receives);
            g_assert_cmpint(n.media[m].local_ssrc != 0, ==, cases[i].gateway_sends);
        }
        g_assert_cmpuint(moat_test_count(answer, "a=msid:moat"), ==,
                         cases[i].gateway_sends ? 2 : 0);
        /* audio, video and video's RTX (aiortc offers rtx for VP8) */
        g_assert_cmpuint(moat_test_count(answer, " cname:moat-test"), ==,
                         cases[i].gateway_sends ? 3 : 0);
        g_free(answer);
        g_free(offer);
    }
}

static void test_setup_roles(void)
{
    struct {
        const char *offered;
        moat_sdp_setup params_setup, expected;
        const char *line;
    } cases[] = {
        {"a=setup:actpass", MOAT_SDP_SETUP_PASSIVE, MOAT_SDP_SETUP_PASSIVE, "a=setup:passive"},
        {"a=setup:actpass", MOAT_SDP_SETUP_ACTIVE, MOAT_SDP_SETUP_ACTIVE, "a=setup:active"},
        {"a=setup:active", MOAT_SDP_SETUP_ACTIVE, MOAT_SDP_SETUP_PASSIVE, "a=setup:passive"},
        {"a=setup:passive", MOAT_SDP_SETUP_PASSIVE, MOAT_SDP_SETUP_ACTIVE, "a=setup:active"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        moat_sdp_answer_params params = moat_test_answer_params();
        params.setup = cases[i].params_setup;
        char *offer =
            moat_test_replace(moat_test_offer_aiortc, "a=setup:actpass", cases[i].offered);
        moat_sdp_negotiation n;
        char *answer = moat_test_answer_ok(offer, &params, &n);
        g_assert_cmpint(n.local_setup, ==, cases[i].expected);
        g_assert_cmpuint(moat_test_count(answer, cases[i].line), ==, 2);
        g_free(answer);
        g_free(offer);
    }
}

static void test_srtpplus(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    moat_sdp_negotiation n;
    char *offer = with_srtpplus("a=srtpplus:chain depth=16;copies=3\r\na=srtpplus:prn\r\n");
    char *answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_true(n.srtpplus);
    g_assert_cmpstr(n.srtpplus_scheme.scheme, ==, "chain");
    g_assert_cmpuint(n.srtpplus_scheme.depth, ==, 16);
    g_assert_cmpuint(n.srtpplus_scheme.copies, ==, 3);
    /* Exactly one line per m-line, the same on every m-line of the bundle. */
    g_assert_cmpuint(moat_test_count(answer, "a=srtpplus:"), ==, 3);
    g_assert_cmpuint(moat_test_count(answer, "a=srtpplus:chain depth=16;copies=3\r\n"), ==, 3);
    g_free(answer);

    params.offer_srtpplus_chain = false;
    answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_true(n.srtpplus);
    g_assert_cmpstr(n.srtpplus_scheme.scheme, ==, "prn");
    g_assert_cmpuint(moat_test_count(answer, "a=srtpplus:prn\r\n"), ==, 3);
    g_assert_cmpuint(moat_test_count(answer, "a=srtpplus:"), ==, 3);
    g_free(answer);

    params.offer_srtpplus_prn = false;
    answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_false(n.srtpplus);
    g_assert_cmpuint(moat_test_count(answer, "a=srtpplus"), ==, 0);
    g_free(answer);
    g_free(offer);

    /* Defaults when the offer omits the parameters. */
    params = moat_test_answer_params();
    offer = with_srtpplus("a=srtpplus:chain\r\n");
    answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_cmpuint(n.srtpplus_scheme.depth, ==, 32);
    g_assert_cmpuint(n.srtpplus_scheme.copies, ==, 2);
    g_assert_cmpuint(moat_test_count(answer, "a=srtpplus:chain depth=32;copies=2\r\n"), ==, 3);
    g_free(answer);
    g_free(offer);

    /* prn first in the offer wins even though chain is supported too. */
    offer = with_srtpplus("a=srtpplus:prn\r\na=srtpplus:chain depth=8;copies=1\r\n");
    answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_cmpstr(n.srtpplus_scheme.scheme, ==, "prn");
    g_free(answer);
    g_free(offer);
}

static void test_local_ssrcs(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    GHashTable *seen = g_hash_table_new(NULL, NULL);
    for (int round = 0; round < 50; round++) {
        moat_sdp_negotiation n;
        char *answer = moat_test_answer_ok(moat_test_offer_chromium, &params, &n);
        for (size_t i = 0; i < 2; i++) {
            uint32_t ssrc = n.media[i].local_ssrc;
            g_assert_cmpuint(ssrc, !=, 0);
            g_assert_cmpuint(ssrc, !=, n.media[i].remote_ssrc);
            g_assert_false(g_hash_table_contains(seen, GUINT_TO_POINTER(ssrc)));
            g_hash_table_add(seen, GUINT_TO_POINTER(ssrc));
        }
        g_assert_cmpuint(n.media[2].local_ssrc, ==, 0); /* data channel */
        g_free(answer);
    }
    g_hash_table_destroy(seen);
}

/* SSRCs Moat announced in its own earlier offer are kept; 0 or missing
 * entries still get random ones. */
static void test_given_local_ssrcs(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    const uint32_t given[] = {0x11223344};
    params.local_ssrcs = given;
    params.n_local_ssrcs = G_N_ELEMENTS(given);
    moat_sdp_negotiation n;
    char *answer = moat_test_answer_ok(moat_test_offer_chromium, &params, &n);
    g_assert_cmpuint(n.media[0].local_ssrc, ==, 0x11223344);
    g_assert_nonnull(strstr(answer, "a=ssrc:287454020 cname:"));
    g_assert_cmpuint(n.media[1].local_ssrc, !=, 0);
    g_assert_cmpuint(n.media[1].local_ssrc, !=, 0x11223344);
    g_free(answer);
}

static void test_max_message_size(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    params.max_message_size = 1048576;
    moat_sdp_negotiation n;
    char *offer = moat_test_drop_lines(moat_test_offer_chromium, "a=max-message-size");
    char *answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_nonnull(strstr(answer, "a=max-message-size:1048576\r\n"));
    g_assert_cmpuint(n.remote_max_message_size, ==, 65536); /* RFC 8841 default */
    g_free(answer);
    params.max_message_size = 0;
    answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_nonnull(strstr(answer, "a=max-message-size:262144\r\n"));
    g_free(answer);
    g_free(offer);
}

/* A plugin's codec filter (answer params accept_codec): only the listed
 * names; an m-line left with none is rejected, an offer left with no m-line
 * fails. */
static bool only_listed(void *user, size_t media_index, moat_media_kind kind, const char *name,
                        uint32_t clock_rate)
{
    const char *const *list = user;
    for (size_t i = 0; list[i]; i++) {
        if (strcmp(list[i], name) == 0)
            return true;
    }
    return false;
}

static void test_codec_filter(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    const char *vp8_opus[] = {"opus", "VP8", NULL};
    params.accept_codec = only_listed;
    params.accept_codec_user = vp8_opus;
    moat_sdp_negotiation n;
    char *answer = moat_test_answer_ok(moat_test_offer_chromium, &params, &n);
    char *audio = moat_test_section(answer, 0), *video = moat_test_section(answer, 1);
    g_assert_nonnull(strstr(audio, "opus/48000/2"));
    g_assert_null(strstr(audio, "PCMU"));
    g_assert_nonnull(strstr(audio, "telephone-event")); /* kept beside a media codec */
    g_assert_nonnull(strstr(video, "VP8/90000"));
    g_assert_null(strstr(video, "H264"));
    g_assert_null(strstr(video, "VP9"));
    for (size_t i = 0; i < n.media[1].n_payload_types; i++)
        g_assert_true(strcmp(n.media[1].codec_names[i], "VP8") == 0 ||
                      g_ascii_strcasecmp(n.media[1].codec_names[i], "rtx") == 0);
    g_free(audio);
    g_free(video);
    g_free(answer);

    /* No video codec left: the video m-line is rejected, audio stays. */
    const char *audio_only[] = {"opus", NULL};
    params.accept_codec_user = audio_only;
    answer = moat_test_answer_ok(moat_test_offer_chromium, &params, &n);
    video = moat_test_section(answer, 1);
    g_assert_true(g_str_has_prefix(video, "m=video 0 "));
    g_assert_false(n.media[1].accepted);
    g_assert_true(n.media[0].accepted);
    g_free(video);
    g_free(answer);

    /* Nothing left at all (aiortc offers no data channel). */
    const char *none[] = {"AV1", NULL};
    params.accept_codec_user = none;
    moat_test_answer_fails(g_strdup(moat_test_offer_aiortc), &params, "no supported codec");
}

static char *replace_all(const char *offer, const char *const pairs[][2], size_t n)
{
    char *text = g_strdup(offer);
    for (size_t i = 0; i < n; i++) {
        char *next = moat_test_replace(text, pairs[i][0], pairs[i][1]);
        g_free(text);
        text = next;
    }
    return text;
}

static bool answers_pt(const moat_sdp_negotiated_media *m, uint8_t pt)
{
    for (size_t c = 0; c < m->n_payload_types; c++)
        if (m->payload_types[c] == pt || m->rtx_payload_types[c] == pt)
            return true;
    return false;
}

/* RFC 8843 section 9.1: within a bundle one payload type names one codec
 * configuration. An offer that reuses audio's PT for a video codec (or for
 * video's rtx) gets that codec left out of the later m-line, not answered
 * twice with one number. */
static void test_bundle_payload_type_clash(void)
{
    moat_sdp_answer_params params = moat_test_answer_params();
    moat_sdp_negotiation n;
    /* VP8 on 96, which audio's opus already has. */
    const char *const vp8_on_opus[][2] = {
        {"SAVPF 97 98", "SAVPF 96 98"}, {":97 ", ":96 "}, {"apt=97", "apt=96"}};
    char *offer = replace_all(moat_test_offer_aiortc, vp8_on_opus, G_N_ELEMENTS(vp8_on_opus));
    char *answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_true(n.media[0].accepted && n.media[1].accepted);
    g_assert_true(answers_pt(&n.media[0], 96));
    g_assert_false(answers_pt(&n.media[1], 96));
    g_assert_false(answers_pt(&n.media[1], 98)); /* VP8's rtx goes with it */
    g_free(answer);
    g_free(offer);
    /* Opus on 98, which video's rtx for VP8 has: VP8 stays, without rtx. */
    const char *const opus_on_rtx[][2] = {{"SAVPF 96 0 8", "SAVPF 98 0 8"},
                                          {"rtpmap:96 opus", "rtpmap:98 opus"}};
    offer = replace_all(moat_test_offer_aiortc, opus_on_rtx, G_N_ELEMENTS(opus_on_rtx));
    answer = moat_test_answer_ok(offer, &params, &n);
    g_assert_true(answers_pt(&n.media[0], 98));
    g_assert_false(answers_pt(&n.media[1], 98));
    g_assert_true(answers_pt(&n.media[1], 97));
    g_free(answer);
    g_free(offer);
    /* The same codec on the same PT in two m-lines is allowed. */
    answer = moat_test_answer_ok(moat_test_offer_chromium, &params, &n);
    g_assert_cmpuint(n.media[1].n_payload_types, >, 0);
    g_free(answer);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sdp/negotiation/directions", test_directions);
    g_test_add_func("/sdp/negotiation/setup-roles", test_setup_roles);
    g_test_add_func("/sdp/negotiation/srtpplus", test_srtpplus);
    g_test_add_func("/sdp/negotiation/local-ssrcs", test_local_ssrcs);
    g_test_add_func("/sdp/negotiation/given-local-ssrcs", test_given_local_ssrcs);
    g_test_add_func("/sdp/negotiation/max-message-size", test_max_message_size);
    g_test_add_func("/sdp/negotiation/codec-filter", test_codec_filter);
    g_test_add_func("/sdp/negotiation/bundle-payload-type-clash", test_bundle_payload_type_clash);
    return g_test_run();
}
