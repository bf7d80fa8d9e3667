/* Turns what the lines said into EFFECTIVE per-m-line values: an m-line
 * without its own ICE credentials, fingerprint, setup, direction, srtpplus
 * or extmaps takes the session level's, and a bundled m-line without them
 * takes those of the BUNDLE group's tagged m-line (RFC 8843 lets offerers
 * write them once). Then checks that every m-line the gateway might accept
 * has what DTLS-SRTP over ICE needs. */
#include "sdp_lex.h"
#include "sdp_parse_state.h"

#include <string.h>

static bool in_bundle(const moat_sdp *sdp, const moat_sdp_media *m)
{
    if (m->mid[0] == '\0')
        return false;
    for (size_t i = 0; i < sdp->n_bundle_mids; i++)
        if (strcmp(sdp->bundle_mids[i], m->mid) == 0)
            return true;
    return false;
}

static void inherit_transport(moat_sdp_media *m, const moat_sdp_media *from)
{
    if (m->ice_ufrag[0] == '\0')
        memcpy(m->ice_ufrag, from->ice_ufrag, sizeof m->ice_ufrag);
    if (m->ice_pwd[0] == '\0')
        memcpy(m->ice_pwd, from->ice_pwd, sizeof m->ice_pwd);
    if (m->fingerprint[0] == '\0') {
        memcpy(m->fingerprint_alg, from->fingerprint_alg, sizeof m->fingerprint_alg);
        memcpy(m->fingerprint, from->fingerprint, sizeof m->fingerprint);
    }
    if (m->setup == MOAT_SDP_SETUP_NONE)
        m->setup = from->setup;
    if (m->n_srtpplus == 0) {
        memcpy(m->srtpplus, from->srtpplus, sizeof m->srtpplus);
        m->n_srtpplus = from->n_srtpplus;
    }
    m->end_of_candidates = m->end_of_candidates || from->end_of_candidates;
}

static void inherit_extmaps(moat_sdp_media *m, const moat_sdp_media *session)
{
    for (size_t i = 0; i < session->n_extmaps; i++) {
        bool present = false;
        for (size_t j = 0; j < m->n_extmaps && !present; j++)
            present = m->extmaps[j].id == session->extmaps[i].id;
        /* A full list keeps the m-line's own entries, which take precedence. */
        if (!present && m->n_extmaps < MOAT_SDP_MAX_EXTMAPS)
            m->extmaps[m->n_extmaps++] = session->extmaps[i];
    }
}

static int check_mids(const moat_sdp *sdp, char *error, size_t error_size)
{
    for (size_t i = 0; i < sdp->n_media; i++) {
        if (sdp->media[i].mid[0] == '\0')
            continue;
        for (size_t j = i + 1; j < sdp->n_media; j++) {
            if (strcmp(sdp->media[i].mid, sdp->media[j].mid) == 0) {
                moat_sdp_errorf(error, error_size, "duplicate a=mid:%s", sdp->media[i].mid);
                return -1;
            }
        }
    }
    for (size_t i = 0; i < sdp->n_bundle_mids; i++) {
        bool found = false;
        for (size_t j = 0; j < sdp->n_media && !found; j++)
            found = strcmp(sdp->bundle_mids[i], sdp->media[j].mid) == 0;
        if (!found) {
            moat_sdp_errorf(error, error_size, "a=group:BUNDLE names unknown mid %s",
                            sdp->bundle_mids[i]);
            return -1;
        }
    }
    return 0;
}

static int missing(size_t index, const moat_sdp_media *m, const char *what, char *error,
                   size_t error_size)
{
    if (m->mid[0] != '\0')
        moat_sdp_errorf(error, error_size, "m-line %zu (mid %s): missing %s", index + 1, m->mid,
                        what);
    else
        moat_sdp_errorf(error, error_size, "m-line %zu: missing %s", index + 1, what);
    return -1;
}

int moat_sdp_resolve(moat_sdp_parse_state *state, char *error, size_t error_size)
{
    moat_sdp *sdp = state->sdp;
    if (!state->has_origin) {
        moat_sdp_errorf(error, error_size, "missing o= line");
        return -1;
    }
    if (check_mids(sdp, error, error_size) < 0)
        return -1;

    moat_sdp_media *tag = NULL;
    for (size_t i = 0; i < sdp->n_media && sdp->n_bundle_mids > 0; i++)
        if (strcmp(sdp->media[i].mid, sdp->bundle_mids[0]) == 0)
            tag = &sdp->media[i];
    /* The tagged m-line first, so that the others inherit its effective
     * values (its own, or the session's). */
    if (tag != NULL)
        inherit_transport(tag, state->session);
    for (size_t i = 0; i < sdp->n_media; i++) {
        moat_sdp_media *m = &sdp->media[i];
        inherit_transport(m, state->session);
        if (tag != NULL && m != tag && in_bundle(sdp, m))
            inherit_transport(m, tag);
        if (!state->media_has_direction[i])
            m->direction = state->session->direction;
        inherit_extmaps(m, state->session);
    }

    for (size_t i = 0; i < sdp->n_media; i++) {
        const moat_sdp_media *m = &sdp->media[i];
        /* Offerer-rejected m-lines and kinds the gateway never accepts need
         * no transport. */
        if (!m->kind_known || (m->port == 0 && !m->bundle_only))
            continue;
        if (m->ice_ufrag[0] == '\0')
            return missing(i, m, "a=ice-ufrag", error, error_size);
        if (m->ice_pwd[0] == '\0')
            return missing(i, m, "a=ice-pwd", error, error_size);
        if (m->fingerprint[0] == '\0' && state->session_unsupported_fingerprint_line != 0) {
            moat_sdp_errorf(error, error_size, "line %zu: a=fingerprint: unsupported hash",
                            state->session_unsupported_fingerprint_line);
            return -1;
        }
        if (m->fingerprint[0] == '\0')
            return missing(i, m, "a=fingerprint", error, error_size);
        if (m->setup == MOAT_SDP_SETUP_NONE)
            return missing(i, m, "a=setup", error, error_size);
    }
    return 0;
}
