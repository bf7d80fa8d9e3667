/* What a session takes from the WHIP answer, parsed with the gateway's own
 * SDP parser: the peer's ICE credentials and fingerprint, who is the DTLS
 * client, the payload type, the SRTP+ scheme (if any) and the UDP
 * candidates the target policy allows. */
#include "session_parts.h"
#include "target_policy.h"
#include "whip_address.h"

#include "sdp/sdp.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

/* A session that will move to --migrate-to keeps to that address's family:
 * a socket moved to an IPv4 address cannot reach an IPv6 candidate (the
 * session stopped at its move), nor the reverse. */
static bool family_fits(const flood_options *o, const struct sockaddr_in6 *address)
{
    if (o->migrate_to == NULL)
        return true;
    bool to_v4 = strchr(o->migrate_to, ':') == NULL;
    return to_v4 == (bool)IN6_IS_ADDR_V4MAPPED(&address->sin6_addr);
}

static int take_candidates(flood_session *s, const moat_sdp_media *m, char *error,
                           size_t error_size)
{
    size_t refused = 0, other_family = 0;
    s->n_remotes = 0;
    for (size_t i = 0; i < m->n_candidates && s->n_remotes < FLOOD_SESSION_MAX_REMOTES; i++) {
        const moat_sdp_candidate *c = &m->candidates[i];
        struct sockaddr_in6 address;
        if (strcmp(c->transport, "udp") != 0 || (c->component != 0 && c->component != 1) ||
            !whip_candidate_address(c, &address))
            continue;
        if (!s->env->options->allow_remote &&
            !target_address_is_local((const struct sockaddr *)&address)) {
            refused++;
            continue;
        }
        if (!family_fits(s->env->options, &address)) {
            other_family++;
            continue;
        }
        s->remote_priorities[s->n_remotes] = c->priority;
        s->remotes[s->n_remotes++] = address;
    }
    if (s->n_remotes > 0)
        return 0;
    if (other_family > 0)
        snprintf(error, error_size, "no UDP candidate of --migrate-to's address family");
    else if (refused > 0)
        snprintf(error, error_size,
                 "every candidate is outside loopback and the private networks; "
                 "pass --allow-remote to send to them");
    else
        snprintf(error, error_size, "no UDP candidate");
    return -1;
}

static void take_srtpplus(flood_session *s, const moat_sdp_media *m)
{
    s->srtpplus_negotiated = false;
    /* An answer may only accept what was offered (SRTPPLUS.md §6). */
    if (s->env->options->srtpplus == FLOOD_SRTPPLUS_NONE || m->n_srtpplus == 0)
        return;
    const char *offered = flood_srtpplus_name(s->env->options->srtpplus);
    if (strcmp(m->srtpplus[0].scheme, offered) != 0)
        return;
    s->srtpplus_scheme = m->srtpplus[0];
    s->srtpplus_negotiated = true;
}

int session_answer_apply(flood_session *s, const char *answer, char *error, size_t error_size)
{
    moat_sdp *sdp = moat_sdp_parse(answer, strlen(answer), error, error_size);
    if (sdp == NULL)
        return -1;
    int result = -1;
    const moat_sdp_media *m = sdp->n_media > 0 ? &sdp->media[0] : NULL;
    if (m == NULL || m->port == 0) {
        snprintf(error, error_size, "the m-line was rejected");
    } else if (m->n_codecs == 0) {
        snprintf(error, error_size, "no codec accepted");
    } else if (m->ice_ufrag[0] == '\0' || m->ice_pwd[0] == '\0') {
        snprintf(error, error_size, "no ICE credentials");
    } else if (m->fingerprint[0] == '\0') {
        snprintf(error, error_size, "no usable fingerprint");
    } else if (take_candidates(s, m, error, error_size) == 0) {
        g_strlcpy(s->remote_ufrag, m->ice_ufrag, sizeof s->remote_ufrag);
        g_strlcpy(s->remote_pwd, m->ice_pwd, sizeof s->remote_pwd);
        g_strlcpy(s->remote_fingerprint_alg, m->fingerprint_alg, sizeof s->remote_fingerprint_alg);
        g_strlcpy(s->remote_fingerprint, m->fingerprint, sizeof s->remote_fingerprint);
        /* We offered actpass: a passive answerer makes us the DTLS client. */
        s->dtls_role =
            m->setup == MOAT_SDP_SETUP_ACTIVE ? MOAT_DTLS_ROLE_SERVER : MOAT_DTLS_ROLE_CLIENT;
        s->payload_type = m->codecs[0].pt;
        take_srtpplus(s, m);
        result = 0;
    }
    moat_sdp_free(sdp);
    return result;
}
