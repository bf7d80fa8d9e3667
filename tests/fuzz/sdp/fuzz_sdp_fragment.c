/* Trickle-ICE fragments and candidate values from the network. Properties:
 * a parsed fragment rebuilt by the gateway parses back to the same
 * credentials and candidates; a parsed candidate formats and parses back to
 * itself. */
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sdp/sdp.h"

static bool same_candidate(const moat_sdp_candidate *a, const moat_sdp_candidate *b)
{
    return strcmp(a->foundation, b->foundation) == 0 && a->component == b->component &&
           strcmp(a->transport, b->transport) == 0 && a->priority == b->priority &&
           strcmp(a->address, b->address) == 0 && a->port == b->port &&
           strcmp(a->type, b->type) == 0;
}

static void rebuild(const moat_sdp_fragment *f)
{
    if (f->ice_ufrag[0] == '\0' || f->ice_pwd[0] == '\0')
        return;
    moat_sdp_candidate candidates[MOAT_SDP_FRAGMENT_MAX_CANDIDATES];
    const char *mids[MOAT_SDP_MAX_MEDIA];
    size_t n_mids = 0;
    for (size_t i = 0; i < f->n_candidates; i++)
        candidates[i] = f->candidates[i].candidate;
    for (size_t i = 0; i < f->n_media; i++)
        if (f->mids[i][0] != '\0')
            mids[n_mids++] = f->mids[i];
    char *text = moat_sdp_fragment_build(f->ice_ufrag, f->ice_pwd, candidates, f->n_candidates,
                                         mids, n_mids);
    if (text == NULL)
        abort();
    moat_sdp_fragment back;
    char error[256];
    if (moat_sdp_fragment_parse(text, strlen(text), &back, error, sizeof error) != 0)
        abort();
    if (strcmp(back.ice_ufrag, f->ice_ufrag) != 0 || strcmp(back.ice_pwd, f->ice_pwd) != 0 ||
        back.n_candidates != f->n_candidates || back.n_media != n_mids || !back.end_of_candidates)
        abort();
    for (size_t i = 0; i < back.n_candidates; i++)
        if (!same_candidate(&back.candidates[i].candidate, &f->candidates[i].candidate))
            abort();
    g_free(text);
}

static void candidate_round_trip(const uint8_t *data, size_t size)
{
    char *value = g_strndup((const char *)data, size);
    moat_sdp_candidate c, back;
    if (moat_sdp_candidate_parse(value, &c) == 0) {
        char line[256];
        if (moat_sdp_candidate_format(&c, line, sizeof line) < 0 ||
            moat_sdp_candidate_parse(line, &back) != 0 || !same_candidate(&c, &back))
            abort();
    }
    g_free(value);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    moat_sdp_fragment f;
    char error[256] = "";
    if (moat_sdp_fragment_parse((const char *)data, size, &f, error, sizeof error) == 0)
        rebuild(&f);
    else if (error[0] == '\0')
        abort();
    candidate_round_trip(data, size);
    return 0;
}
