/* Test helper for the SDP answer tests: the gateway's answer parameters, and
 * answering an offer with the checks every produced answer must pass. */
#include "sdp_test_answer.h"

#include <glib.h>
#include <string.h>

const moat_sdp_candidate moat_test_local_candidates[2] = {
    {"1", 1, "udp", 2130706431u, "203.0.113.10", 40000, "host"},
    {"2", 1, "udp", 2130706175u, "2001:db8::10", 40000, "host"},
};

moat_sdp_answer_params moat_test_answer_params(void)
{
    moat_sdp_answer_params p;
    memset(&p, 0, sizeof p);
    p.ice_ufrag = "moat";
    p.ice_pwd = LOCAL_PWD;
    p.fingerprint_sha256 = LOCAL_FP;
    p.setup = MOAT_SDP_SETUP_PASSIVE;
    p.candidates = moat_test_local_candidates;
    p.n_candidates = G_N_ELEMENTS(moat_test_local_candidates);
    p.session_id = 1234567890123ull;
    p.cname = "moat-test";
    p.offer_srtpplus_prn = true;
    p.offer_srtpplus_chain = true;
    p.max_message_size = 262144;
    return p;
}

moat_sdp *moat_test_parse(const char *text)
{
    char error[256];
    moat_sdp *sdp = moat_sdp_parse(text, strlen(text), error, sizeof error);
    if (sdp == NULL)
        g_error("parse failed: %s", error);
    return sdp;
}

/* The answer must itself be a description the parser takes, and say what
 * the negotiation says. */
static void check_answer_consistent(const char *answer, const moat_sdp_negotiation *n)
{
    moat_sdp *a = moat_test_parse(answer);
    g_assert_true(a->ice_lite);
    g_assert_cmpuint(a->n_media, ==, n->n_media);
    for (size_t i = 0; i < n->n_media; i++) {
        const moat_sdp_media *m = &a->media[i];
        const moat_sdp_negotiated_media *nm = &n->media[i];
        g_assert_cmpstr(m->mid, ==, nm->mid);
        if (!nm->accepted) {
            g_assert_cmpuint(m->port, ==, 0);
            g_assert_cmpuint(m->n_candidates, ==, 0);
            g_assert_cmpstr(m->ice_ufrag, ==, "");
            continue;
        }
        g_assert_cmpuint(m->port, !=, 0);
        g_assert_cmpstr(m->ice_ufrag, ==, "moat");
        g_assert_cmpstr(m->ice_pwd, ==, LOCAL_PWD);
        g_assert_cmpstr(m->fingerprint, ==, LOCAL_FP);
        g_assert_cmpint(m->setup, ==, n->local_setup);
        g_assert_true(m->end_of_candidates);
        if (nm->kind == MOAT_MEDIA_KIND_APPLICATION)
            continue;
        g_assert_true(m->rtcp_mux);
        g_assert_cmpint(m->direction, ==, nm->answer_direction);
        /* The codecs, then the rtx payload types of those that have one. */
        size_t n_rtx = 0;
        for (size_t c = 0; c < nm->n_payload_types; c++) {
            if (!nm->rtx_payload_types[c])
                continue;
            const moat_sdp_codec *rtx = &m->codecs[nm->n_payload_types + n_rtx++];
            g_assert_cmpuint(rtx->pt, ==, nm->rtx_payload_types[c]);
            g_assert_cmpstr(rtx->name, ==, "rtx");
            char apt[16];
            g_snprintf(apt, sizeof apt, "apt=%u", nm->payload_types[c]);
            g_assert_cmpstr(rtx->fmtp, ==, apt);
        }
        g_assert_cmpuint(m->n_codecs, ==, nm->n_payload_types + n_rtx);
        for (size_t c = 0; c < nm->n_payload_types; c++) {
            g_assert_cmpuint(m->codecs[c].pt, ==, nm->payload_types[c]);
            g_assert_cmpstr(m->codecs[c].name, ==, nm->codec_names[c]);
            g_assert_cmpuint(m->codecs[c].clock_rate, ==, nm->clock_rates[c]);
        }
        if (nm->local_ssrc != 0) {
            g_assert_cmpuint(m->n_ssrcs, ==, nm->local_rtx_ssrc ? 2 : 1);
            g_assert_cmpuint(m->ssrcs[0].ssrc, ==, nm->local_ssrc);
            g_assert_cmpstr(m->ssrcs[0].cname, ==, "moat-test");
            if (nm->local_rtx_ssrc) {
                g_assert_cmpuint(n_rtx, >, 0);
                g_assert_cmpuint(m->ssrcs[1].ssrc, ==, nm->local_rtx_ssrc);
                g_assert_cmpuint(m->n_fids, ==, 1);
                g_assert_cmpuint(m->fids[0].primary, ==, nm->local_ssrc);
                g_assert_cmpuint(m->fids[0].retransmission, ==, nm->local_rtx_ssrc);
            }
        } else {
            g_assert_cmpuint(m->n_ssrcs, ==, 0);
        }
        g_assert_cmpuint(m->n_srtpplus, ==, n->srtpplus ? 1 : 0);
    }
    moat_sdp_free(a);
}

char *moat_test_answer_ok(const char *offer_text, const moat_sdp_answer_params *params,
                          moat_sdp_negotiation *n)
{
    moat_sdp *offer = moat_test_parse(offer_text);
    char error[256] = "", *answer = NULL;
    if (moat_sdp_answer_create(offer, params, n, &answer, error, sizeof error) != 0)
        g_error("answer failed: %s", error);
    g_assert_nonnull(answer);
    g_assert_cmpstr(error, ==, "");
    check_answer_consistent(answer, n);
    moat_sdp_free(offer);
    return answer;
}

void moat_test_answer_fails(char *offer_text, const moat_sdp_answer_params *params,
                            const char *expected)
{
    moat_sdp *offer = moat_test_parse(offer_text);
    moat_sdp_negotiation n;
    char error[256] = "", *answer = (char *)"untouched";
    g_assert_cmpint(moat_sdp_answer_create(offer, params, &n, &answer, error, sizeof error), ==,
                    -1);
    g_assert_null(answer);
    if (strstr(error, expected) == NULL)
        g_error("error \"%s\" does not contain \"%s\"", error, expected);
    moat_sdp_free(offer);
    g_free(offer_text);
}

/* The text of the index-th m= section (0-based), g_malloc'd. */
char *moat_test_section(const char *answer, size_t index)
{
    const char *start = answer;
    for (size_t i = 0; i <= index; i++) {
        start = strstr(i == 0 ? start : start + 1, "m=");
        while (start != NULL && start != answer && start[-1] != '\n')
            start = strstr(start + 1, "m=");
        g_assert_nonnull(start);
    }
    const char *end = strstr(start + 1, "\nm=");
    return end != NULL ? g_strndup(start, (gsize)(end - start + 1)) : g_strdup(start);
}
