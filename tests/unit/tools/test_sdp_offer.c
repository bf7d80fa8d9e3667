/* The offer builder (sdp/sdp_offer.h) against the gateway's own parser and
 * answerer: what it writes parses back to what was asked for, the gateway
 * answers it (SRTP+ included), and unsafe parameters are refused. */
#include "sdp/sdp.h"
#include "sdp/sdp_offer.h"

#include <string.h>

#include <glib.h>

#define FINGERPRINT                                                                                \
    "A5:4D:CA:18:25:30:BB:1D:6D:13:2C:DE:D6:23:7B:2E:D9:1E:3F:72:1F:CB:19:71:17:44:94:D6:49:3C:"   \
    "9D:5C"
#define GATEWAY_PWD "gatewaypasswordgatewaypw"

static const moat_sdp_offer_codec vp8 = {
    .pt = 96, .name = "VP8", .clock_rate = 90000, .rtcp_fb = {"nack", "nack pli", "ccm fir"}};
static const moat_sdp_offer_codec opus = {
    .pt = 111, .name = "opus", .clock_rate = 48000, .channels = 2, .fmtp = "minptime=10"};

static moat_sdp_offer_params params_with(const moat_sdp_offer_media *media, size_t n_media,
                                         const moat_sdp_srtpplus *srtpplus, size_t n_srtpplus,
                                         const moat_sdp_candidate *candidate)
{
    moat_sdp_offer_params p = {
        .session_id = 42,
        .ice_ufrag = "fLoOd",
        .ice_pwd = "floodpasswordfloodpassw",
        .fingerprint_sha256 = FINGERPRINT,
        .cname = "flood",
        .candidates = candidate,
        .n_candidates = candidate != NULL ? 1 : 0,
        .srtpplus = srtpplus,
        .n_srtpplus = n_srtpplus,
        .media = media,
        .n_media = n_media,
    };
    return p;
}

static moat_sdp *parse(const char *text)
{
    char error[256] = "";
    moat_sdp *sdp = moat_sdp_parse(text, strlen(text), error, sizeof error);
    if (sdp == NULL)
        g_error("offer does not parse: %s\n%s", error, text);
    return sdp;
}

static void test_offer_parses_back(void)
{
    moat_sdp_offer_media media[2] = {
        {.kind = MOAT_MEDIA_KIND_AUDIO,
         .mid = "a",
         .direction = MOAT_SDP_SENDRECV,
         .codecs = &opus,
         .n_codecs = 1,
         .ssrc = 1234},
        {.kind = MOAT_MEDIA_KIND_VIDEO,
         .mid = "v",
         .direction = MOAT_SDP_SENDONLY,
         .codecs = &vp8,
         .n_codecs = 1,
         .ssrc = 5678},
    };
    moat_sdp_srtpplus schemes[2] = {{.scheme = "chain", .depth = 16, .copies = 3},
                                    {.scheme = "prn"}};
    moat_sdp_candidate candidate = {.foundation = "1",
                                    .component = 1,
                                    .transport = "udp",
                                    .priority = 2130706431,
                                    .address = "127.0.0.1",
                                    .port = 40000,
                                    .type = "host"};
    moat_sdp_offer_params p = params_with(media, 2, schemes, 2, &candidate);
    char error[256] = "";
    char *text = moat_sdp_offer_create(&p, error, sizeof error);
    g_assert_nonnull(text);
    g_assert_true(g_str_has_suffix(text, "\r\n"));
    g_assert_nonnull(strstr(text, "a=group:BUNDLE a v\r\n"));
    g_assert_null(strstr(text, "ice-lite"));

    moat_sdp *sdp = parse(text);
    g_assert_false(sdp->ice_lite);
    g_assert_cmpuint(sdp->n_media, ==, 2);
    const moat_sdp_media *audio = &sdp->media[0], *video = &sdp->media[1];
    g_assert_cmpstr(audio->mid, ==, "a");
    g_assert_cmpstr(audio->ice_ufrag, ==, "fLoOd");
    g_assert_cmpstr(audio->fingerprint, ==, FINGERPRINT);
    g_assert_cmpint(audio->setup, ==, MOAT_SDP_SETUP_ACTPASS);
    g_assert_true(audio->rtcp_mux);
    g_assert_cmpuint(audio->n_codecs, ==, 1);
    g_assert_cmpstr(audio->codecs[0].name, ==, "opus");
    g_assert_cmpuint(audio->codecs[0].channels, ==, 2);
    g_assert_cmpstr(audio->codecs[0].fmtp, ==, "minptime=10");
    g_assert_cmpuint(audio->n_ssrcs, ==, 1);
    g_assert_cmpuint(audio->ssrcs[0].ssrc, ==, 1234);
    g_assert_cmpstr(audio->ssrcs[0].cname, ==, "flood");
    g_assert_cmpuint(audio->n_candidates, ==, 1);
    g_assert_cmpuint(audio->candidates[0].port, ==, 40000);
    g_assert_true(audio->end_of_candidates);
    g_assert_cmpuint(audio->n_srtpplus, ==, 2);
    g_assert_cmpstr(audio->srtpplus[0].scheme, ==, "chain");
    g_assert_cmpuint(audio->srtpplus[0].depth, ==, 16);
    g_assert_cmpuint(audio->srtpplus[0].copies, ==, 3);
    g_assert_cmpint(video->direction, ==, MOAT_SDP_SENDONLY);
    g_assert_cmpuint(video->codecs[0].n_rtcp_fb, ==, 3);
    g_assert_cmpstr(video->codecs[0].rtcp_fb[1], ==, "nack pli");
    moat_sdp_free(sdp);
    g_free(text);
}

/* The gateway answers the offer, keeping the first SRTP+ scheme it takes. */
static void answer_with_scheme(const char *scheme, const char *expected)
{
    moat_sdp_offer_media media = {.kind = MOAT_MEDIA_KIND_AUDIO,
                                  .mid = "0",
                                  .direction = MOAT_SDP_SENDRECV,
                                  .codecs = &opus,
                                  .n_codecs = 1,
                                  .ssrc = 99};
    moat_sdp_srtpplus offered = {.depth = 32, .copies = 2};
    g_strlcpy(offered.scheme, scheme, sizeof offered.scheme);
    moat_sdp_offer_params p = params_with(&media, 1, &offered, 1, NULL);
    char error[256] = "";
    char *text = moat_sdp_offer_create(&p, error, sizeof error);
    g_assert_nonnull(text);
    moat_sdp *offer = parse(text);

    moat_sdp_candidate gateway = {.foundation = "1",
                                  .component = 1,
                                  .transport = "udp",
                                  .priority = 2130706431,
                                  .address = "127.0.0.1",
                                  .port = 20000,
                                  .type = "host"};
    moat_sdp_answer_params a = {
        .ice_ufrag = "gAtE",
        .ice_pwd = GATEWAY_PWD,
        .fingerprint_sha256 = FINGERPRINT,
        .setup = MOAT_SDP_SETUP_PASSIVE,
        .candidates = &gateway,
        .n_candidates = 1,
        .session_id = 7,
        .cname = "moat",
        .offer_srtpplus_prn = true,
        .offer_srtpplus_chain = true,
    };
    moat_sdp_negotiation negotiation;
    char *answer = NULL;
    g_assert_cmpint(moat_sdp_answer_create(offer, &a, &negotiation, &answer, error, sizeof error),
                    ==, 0);
    g_assert_cmpint(negotiation.local_setup, ==, MOAT_SDP_SETUP_PASSIVE);
    g_assert_true(negotiation.media[0].accepted);
    g_assert_cmpuint(negotiation.media[0].remote_ssrc, ==, 99);
    g_assert_true(negotiation.srtpplus);
    g_assert_cmpstr(negotiation.srtpplus_scheme.scheme, ==, expected);
    g_assert_nonnull(strstr(answer, "a=setup:passive"));
    g_free(answer);
    moat_sdp_free(offer);
    g_free(text);
}

static void test_gateway_answers_prn(void)
{
    answer_with_scheme("prn", "prn");
}

static void test_gateway_answers_chain(void)
{
    answer_with_scheme("chain", "chain");
}

static void assert_refused(moat_sdp_offer_params p, const char *why)
{
    char error[256] = "";
    char *text = moat_sdp_offer_create(&p, error, sizeof error);
    g_assert_null(text);
    g_assert_nonnull(strstr(error, why));
}

static void test_unsafe_parameters_refused(void)
{
    moat_sdp_offer_media media = {.kind = MOAT_MEDIA_KIND_AUDIO,
                                  .mid = "0",
                                  .direction = MOAT_SDP_SENDRECV,
                                  .codecs = &opus,
                                  .n_codecs = 1};
    moat_sdp_offer_params good = params_with(&media, 1, NULL, 0, NULL);
    moat_sdp_offer_params p = good;
    p.ice_ufrag = "ab";
    assert_refused(p, "ICE credentials");
    p = good;
    p.ice_pwd = "floodpasswordfloodpassw\r\na=ice-lite";
    assert_refused(p, "ICE credentials");
    p = good;
    p.fingerprint_sha256 = "A5:4D";
    assert_refused(p, "fingerprint");
    p = good;
    p.n_media = 0;
    assert_refused(p, "m-lines");

    moat_sdp_offer_codec injected = opus;
    injected.fmtp = "minptime=10\r\na=setup:active";
    moat_sdp_offer_media bad_media = media;
    bad_media.codecs = &injected;
    p = params_with(&bad_media, 1, NULL, 0, NULL);
    assert_refused(p, "fmtp");
    moat_sdp_offer_codec high = opus;
    high.pt = 128;
    bad_media.codecs = &high;
    p = params_with(&bad_media, 1, NULL, 0, NULL);
    assert_refused(p, "above 127");
    bad_media = media;
    bad_media.mid = "has space";
    p = params_with(&bad_media, 1, NULL, 0, NULL);
    assert_refused(p, "mid");

    moat_sdp_srtpplus bad_chain = {.scheme = "chain", .depth = 2, .copies = 3};
    p = params_with(&media, 1, &bad_chain, 1, NULL);
    assert_refused(p, "SRTP+");
    moat_sdp_srtpplus unknown = {.scheme = "xor"};
    p = params_with(&media, 1, &unknown, 1, NULL);
    assert_refused(p, "SRTP+");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sdp_offer/parses_back", test_offer_parses_back);
    g_test_add_func("/sdp_offer/gateway_answers_prn", test_gateway_answers_prn);
    g_test_add_func("/sdp_offer/gateway_answers_chain", test_gateway_answers_chain);
    g_test_add_func("/sdp_offer/unsafe_parameters", test_unsafe_parameters_refused);
    return g_test_run();
}
