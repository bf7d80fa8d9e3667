/* moat_sdp_answer_create: checks what the caller passes, negotiates and
 * writes the answer. */
#include "sdp.h"
#include "sdp_answer_write.h"
#include "sdp_attr.h"
#include "sdp_lex.h"
#include "sdp_negotiate.h"

#include <string.h>

static bool fingerprint_valid(const char *fingerprint)
{
    if (strnlen(fingerprint, 96) != 95)
        return false;
    for (size_t i = 0; i < 95; i++) {
        char c = fingerprint[i];
        bool ok = i % 3 == 2 ? c == ':' : (g_ascii_isdigit(c) || (c >= 'A' && c <= 'F'));
        if (!ok)
            return false;
    }
    return true;
}

static bool cname_valid(const char *cname)
{
    size_t len = strnlen(cname, MOAT_SDP_CNAME_SIZE);
    if (len == 0 || len >= MOAT_SDP_CNAME_SIZE)
        return false;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)cname[i] <= 0x20 || (unsigned char)cname[i] >= 0x7f)
            return false;
    return true;
}

static bool credential_valid(const char *value, bool (*valid)(moat_sdp_span))
{
    if (value == NULL)
        return false;
    size_t len = strnlen(value, MOAT_SDP_ICE_CREDENTIAL_MAX + 1);
    return valid((moat_sdp_span){value, len});
}

/* The answer is built from these strings verbatim, so anything that could
 * break a line or the grammar is refused here. */
static int check_params(const moat_sdp_answer_params *params, char *error, size_t error_size)
{
    if (!credential_valid(params->ice_ufrag, moat_sdp_ice_ufrag_valid)) {
        moat_sdp_errorf(error, error_size, "invalid local ice-ufrag");
        return -1;
    }
    if (!credential_valid(params->ice_pwd, moat_sdp_ice_pwd_valid)) {
        moat_sdp_errorf(error, error_size, "invalid local ice-pwd");
        return -1;
    }
    if (params->fingerprint_sha256 == NULL || !fingerprint_valid(params->fingerprint_sha256)) {
        moat_sdp_errorf(error, error_size, "invalid local sha-256 fingerprint");
        return -1;
    }
    if (params->setup != MOAT_SDP_SETUP_ACTIVE && params->setup != MOAT_SDP_SETUP_PASSIVE) {
        moat_sdp_errorf(error, error_size, "local setup must be active or passive");
        return -1;
    }
    if (params->cname == NULL || !cname_valid(params->cname)) {
        moat_sdp_errorf(error, error_size, "invalid cname");
        return -1;
    }
    if (params->max_message_size != 0 && params->max_message_size < 262144) {
        moat_sdp_errorf(error, error_size, "max_message_size must be at least 262144");
        return -1;
    }
    if ((params->n_candidates > 0 && params->candidates == NULL) ||
        params->n_candidates > MOAT_SDP_MAX_CANDIDATES) {
        moat_sdp_errorf(error, error_size, "invalid local candidate list");
        return -1;
    }
    for (size_t i = 0; i < params->n_candidates; i++) {
        char line[256];
        if (moat_sdp_candidate_format(&params->candidates[i], line, sizeof line) < 0) {
            moat_sdp_errorf(error, error_size, "invalid local candidate %zu", i);
            return -1;
        }
    }
    return 0;
}

int moat_sdp_answer_create(const moat_sdp *offer, const moat_sdp_answer_params *params,
                           moat_sdp_negotiation *out, char **answer_text, char *error,
                           size_t error_size)
{
    if (error != NULL && error_size > 0)
        error[0] = '\0';
    if (answer_text != NULL)
        *answer_text = NULL;
    if (offer == NULL || params == NULL || out == NULL || answer_text == NULL) {
        moat_sdp_errorf(error, error_size, "missing argument");
        return -1;
    }
    memset(out, 0, sizeof *out);
    if (check_params(params, error, error_size) < 0)
        return -1;
    /* Two ICE-lite agents never run connectivity checks (RFC 8445 §2.5). */
    if (offer->ice_lite) {
        moat_sdp_errorf(error, error_size, "offer is ice-lite; the gateway is ice-lite too");
        return -1;
    }
    moat_sdp_plan *plan = g_new0(moat_sdp_plan, 1);
    int rc = moat_sdp_negotiate(offer, params, plan, out, error, error_size);
    if (rc == 0)
        *answer_text = moat_sdp_answer_write(offer, params, plan, out);
    else
        memset(out, 0, sizeof *out);
    g_free(plan);
    return rc;
}
