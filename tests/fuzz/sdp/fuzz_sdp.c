/* Offers from the network: parse, answer, and check that every answer the
 * gateway writes is itself a description it can parse, with the same
 * m-lines accepted. Any violated property aborts so libFuzzer reports it. */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdp/sdp.h"

static const moat_sdp_candidate candidates[] = {
    {"1", 1, "udp", 2130706431u, "192.0.2.10", 40000, "host"},
    {"2", 1, "udp", 2130706175u, "2001:db8::10", 40000, "host"},
};

static void check_answer(const moat_sdp *offer, const moat_sdp_negotiation *n, const char *answer)
{
    char error[256] = "";
    moat_sdp *again = moat_sdp_parse(answer, strlen(answer), error, sizeof error);
    if (again == NULL) {
        fprintf(stderr, "answer does not parse: %s\n%s", error, answer);
        abort();
    }
    if (again->n_media != offer->n_media || n->n_media != offer->n_media)
        abort();
    for (size_t i = 0; i < offer->n_media; i++) {
        const moat_sdp_media *m = &again->media[i];
        const moat_sdp_negotiated_media *nm = &n->media[i];
        if (nm->accepted != (m->port != 0) || strcmp(m->mid, offer->media[i].mid) != 0)
            abort();
        /* The codecs, then the rtx payload types answered for them. */
        size_t n_rtx = 0;
        for (size_t c = 0; c < nm->n_payload_types; c++)
            n_rtx += nm->rtx_payload_types[c] != 0;
        if (nm->accepted && nm->kind != MOAT_MEDIA_KIND_APPLICATION &&
            (m->n_codecs != nm->n_payload_types + n_rtx || nm->n_payload_types == 0))
            abort();
        if (nm->local_rtx_ssrc &&
            (nm->local_ssrc == 0 || n_rtx == 0 || nm->local_rtx_ssrc == nm->local_ssrc))
            abort();
    }
    moat_sdp_free(again);
}

static void answer(const moat_sdp *offer, bool with_candidates, bool prn, bool chain)
{
    moat_sdp_answer_params params;
    memset(&params, 0, sizeof params);
    params.ice_ufrag = "fuzz";
    params.ice_pwd = "fuzzfuzzfuzzfuzzfuzzfuzz";
    params.fingerprint_sha256 = "0F:1E:2D:3C:4B:5A:69:78:87:96:A5:B4:C3:D2:E1:F0:"
                                "0F:1E:2D:3C:4B:5A:69:78:87:96:A5:B4:C3:D2:E1:F0";
    params.setup = MOAT_SDP_SETUP_PASSIVE;
    params.candidates = with_candidates ? candidates : NULL;
    params.n_candidates = with_candidates ? G_N_ELEMENTS(candidates) : 0;
    params.session_id = 1;
    params.cname = "fuzz";
    params.offer_srtpplus_prn = prn;
    params.offer_srtpplus_chain = chain;
    moat_sdp_negotiation n;
    char error[256] = "", *text = NULL;
    if (moat_sdp_answer_create(offer, &params, &n, &text, error, sizeof error) == 0) {
        if (text == NULL)
            abort();
        check_answer(offer, &n, text);
        g_free(text);
    } else if (error[0] == '\0' || text != NULL) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char error[256] = "";
    moat_sdp *offer = moat_sdp_parse((const char *)data, size, error, sizeof error);
    if (offer == NULL) {
        if (error[0] == '\0')
            abort(); /* every refusal names its reason */
        return 0;
    }
    answer(offer, true, true, true);
    answer(offer, false, true, false);
    moat_sdp_free(offer);
    return 0;
}
