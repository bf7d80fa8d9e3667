/* The session's ICE, consent and cascade-tuple parts (session_ice.c,
 * session_cascade.c), for the other files of the session; included by
 * session_internal.h, whose contract it shares (worker thread; nothing
 * outside gateway/session includes it). */
#ifndef MOAT_SESSION_ICE_INTERNAL_H
#define MOAT_SESSION_ICE_INTERNAL_H

#include "session/session_internal.h"

/* session_ice.c, for session.c: what the pair table decided, applied to the
 * worker's tuple table; a selected pair (starts DTLS the first time). */
void moat_session_apply_bindings(moat_session *session, const moat_ice_pairs_outcome *outcome,
                                 const struct sockaddr_in6 *remote);
void moat_session_select_tuple(moat_session *session, const moat_path *path);
/* A cascade leg starts on `remote` (session_cascade.c) and this session,
 * an ordinary one, holds that tuple (a check spoofed from the other node's
 * worker address before the link existed): the session unbinds it and
 * forgets its pairs there; a selected pair among them leaves it with none
 * (sending nothing until its peer nominates another). Counted
 * (moat_ice_pairs_taken_by_cascade_total) and logged. */
void moat_session_yield_tuple(moat_session *session, const struct sockaddr_in6 *remote);
/* session_cascade.c, for moat_session_bypass_handshake: a cascade leg's
 * entries on its link's tuple, `remote`: its routes (with no SSRCs, the
 * tuple itself), taken over from an ordinary session holding the tuple.
 * false, with nothing bound, when the tuple or a route is another leg's:
 * the leg would receive nothing and must not start. */
bool moat_session_cascade_bind(moat_session *session, const struct sockaddr_in6 *remote);
/* Authenticated, replay-protected traffic (SRTP, SRTCP, DTLS application
 * data) arrived from path: a move to it that waited for media happens. */
void moat_session_confirm_path(moat_session *session, const moat_path *path);
/* The selected pair (or a cascade leg's media) showed consent now. */
void moat_session_refresh_consent(moat_session *session);
/* On each tick: false once no pair has consent (the session ends); sets or
 * keeps consent_withheld while only the pending pair has it. */
bool moat_session_consent_tick(moat_session *session, uint64_t now_us);
/* On each tick and when a selection changes: the pairs the peer has left
 * go (ice_pairs.h, moat_ice_pairs_expire), each tuple no kept pair uses is
 * unbound from the worker (another client may take it), counted
 * (moat_ice_pairs_expired_total). Not for cascade legs. */
void moat_session_expire_pairs(moat_session *session, uint64_t now_us);
/* Whether anything may be sent to the selected pair now. */
static inline bool moat_session_may_send(const moat_session *session)
{
    return session->has_selected && !session->consent_withheld;
}

#endif
