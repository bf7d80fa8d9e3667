/* Transport attributes: ICE credentials and candidates, the DTLS fingerprint
 * and role, SCTP parameters and the media identification. */
#include "sdp_attr.h"
#include "sdp_candidate.h"

#include <string.h>

bool moat_sdp_ice_ufrag_valid(moat_sdp_span ufrag)
{
    return ufrag.len >= 4 && ufrag.len <= MOAT_SDP_ICE_CREDENTIAL_MAX &&
           moat_sdp_span_is_ice_chars(ufrag);
}

bool moat_sdp_ice_pwd_valid(moat_sdp_span pwd)
{
    return pwd.len >= 22 && pwd.len <= MOAT_SDP_ICE_CREDENTIAL_MAX &&
           moat_sdp_span_is_ice_chars(pwd);
}

bool moat_sdp_mid_valid(moat_sdp_span mid)
{
    return mid.len > 0 && mid.len < MOAT_SDP_MID_SIZE && moat_sdp_span_is_token(mid);
}

int moat_sdp_attr_ice_ufrag(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    if (m->ice_ufrag[0] != '\0') {
        *why = "duplicate";
        return -1;
    }
    if (!moat_sdp_ice_ufrag_valid(value)) {
        *why = "must be 4 to 256 ICE characters";
        return -1;
    }
    moat_sdp_span_copy(value, m->ice_ufrag, sizeof m->ice_ufrag);
    return 0;
}

int moat_sdp_attr_ice_pwd(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    if (m->ice_pwd[0] != '\0') {
        *why = "duplicate";
        return -1;
    }
    if (!moat_sdp_ice_pwd_valid(value)) {
        *why = "must be 22 to 256 ICE characters";
        return -1;
    }
    moat_sdp_span_copy(value, m->ice_pwd, sizeof m->ice_pwd);
    return 0;
}

/* Checks "XX:XX:...:XX" with exactly `bytes` pairs and stores it uppercase. */
static bool copy_fingerprint(moat_sdp_span value, size_t bytes, char *dst, size_t size)
{
    if (value.len != bytes * 3 - 1 || value.len >= size)
        return false;
    for (size_t i = 0; i < value.len; i++) {
        char c = value.p[i];
        if (i % 3 == 2 ? c != ':' : !g_ascii_isxdigit(c))
            return false;
        dst[i] = g_ascii_toupper(c);
    }
    dst[value.len] = '\0';
    return true;
}

int moat_sdp_attr_fingerprint(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    moat_sdp_span rest = value, hash, digest, extra;
    if (!moat_sdp_span_next_token(&rest, &hash) || !moat_sdp_span_next_token(&rest, &digest)) {
        *why = "expected <hash> <fingerprint>";
        return -1;
    }
    if (moat_sdp_span_next_token(&rest, &extra)) {
        *why = "trailing data";
        return -1;
    }
    const char *alg;
    size_t bytes;
    /* sha-512 would not fit the negotiation's 160-byte fingerprint field;
     * sha-1 and md5 are too weak to pin a certificate. */
    if (moat_sdp_span_eq_nocase(hash, "sha-256")) {
        alg = "sha-256";
        bytes = 32;
    } else if (moat_sdp_span_eq_nocase(hash, "sha-384")) {
        alg = "sha-384";
        bytes = 48;
    } else {
        *why = "unsupported hash";
        return 1;
    }
    char normalized[sizeof m->fingerprint];
    if (!copy_fingerprint(digest, bytes, normalized, sizeof normalized)) {
        *why = "malformed fingerprint";
        return -1;
    }
    if (m->fingerprint[0] != '\0')
        return 1; /* the first usable one is pinned */
    g_strlcpy(m->fingerprint_alg, alg, sizeof m->fingerprint_alg);
    g_strlcpy(m->fingerprint, normalized, sizeof m->fingerprint);
    return 0;
}

int moat_sdp_attr_setup(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    if (m->setup != MOAT_SDP_SETUP_NONE) {
        *why = "duplicate";
        return -1;
    }
    if (moat_sdp_span_eq(value, "actpass"))
        m->setup = MOAT_SDP_SETUP_ACTPASS;
    else if (moat_sdp_span_eq(value, "active"))
        m->setup = MOAT_SDP_SETUP_ACTIVE;
    else if (moat_sdp_span_eq(value, "passive"))
        m->setup = MOAT_SDP_SETUP_PASSIVE;
    else if (moat_sdp_span_eq(value, "holdconn")) {
        *why = "holdconn not supported";
        return -1;
    } else {
        *why = "expected actpass, active or passive";
        return -1;
    }
    return 0;
}

int moat_sdp_attr_sctp_port(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    uint32_t port;
    if (m->has_sctp_port) {
        *why = "duplicate";
        return -1;
    }
    if (!moat_sdp_span_u32(value, 65535, &port) || port == 0) {
        *why = "bad port";
        return -1;
    }
    m->has_sctp_port = true;
    m->sctp_port = (uint16_t)port;
    return 0;
}

int moat_sdp_attr_max_message_size(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    uint32_t size;
    if (m->has_max_message_size) {
        *why = "duplicate";
        return -1;
    }
    if (!moat_sdp_span_u32(value, UINT32_MAX, &size)) {
        *why = "bad size";
        return -1;
    }
    m->has_max_message_size = true;
    m->max_message_size = size;
    return 0;
}

int moat_sdp_attr_candidate(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    moat_sdp_candidate candidate;
    const char *field;
    if (moat_sdp_candidate_parse_span(value, &candidate, &field) < 0) {
        *why = field;
        return -1;
    }
    if (m->n_candidates >= MOAT_SDP_MAX_CANDIDATES) {
        *why = "too many candidates";
        return -1;
    }
    m->candidates[m->n_candidates++] = candidate;
    return 0;
}

int moat_sdp_attr_mid(moat_sdp_media *m, moat_sdp_span value, const char **why)
{
    if (m->mid[0] != '\0') {
        *why = "duplicate";
        return -1;
    }
    if (!moat_sdp_mid_valid(value)) {
        *why = "must be 1 to 31 token characters";
        return -1;
    }
    moat_sdp_span_copy(value, m->mid, sizeof m->mid);
    return 0;
}
