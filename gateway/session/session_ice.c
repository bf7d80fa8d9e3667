/* Owns a session's ICE-lite side: authenticated checks (MESSAGE-INTEGRITY
 * first, then the session's budgets) and what they bind and select, ICE
 * restarts with the previous credentials answering until the peer moves,
 * and the pairs (and tuples) its peer left, released. */
#include "session/session_internal.h"
#include "engine/worker_receive.h"

#include "ice/ice_checker.h"
#include "ice/stun_username.h"

#include <arpa/inet.h>
#include <string.h>

/* Drops the pairs its peer has left (ice_pairs.h: idle for the consent
 * timeout, or of the generation before a completed restart) and gives
 * their tuples back to the worker's table, where another client the NAT
 * hands one of them may bind it. A cascade leg's one pair is its link's
 * (session_cascade.c: bound by route): nothing of it expires. */
void moat_session_expire_pairs(moat_session *session, uint64_t now_us)
{
    if (session->cascade_leg || session->pairs.n_pairs == 0)
        return;
    struct sockaddr_in6 unbind[MOAT_ICE_PAIRS_MAX];
    size_t removed = 0;
    size_t n = moat_ice_pairs_expire(&session->pairs, now_us, session->consent_timeout_us, unbind,
                                     &removed);
    for (size_t i = 0; i < n; i++)
        moat_worker_unbind_tuple(session->worker, &unbind[i], session);
    if (removed > 0)
        moat_counter_add(&moat_worker_counters_mut(session->worker)->ice_pairs_expired, removed);
}

/* Applies what the pair table decided to the worker's tuple table. */
void moat_session_apply_bindings(moat_session *session, const moat_ice_pairs_outcome *outcome,
                                 const struct sockaddr_in6 *remote)
{
    if (outcome->unbind)
        moat_worker_unbind_tuple(session->worker, &outcome->evicted, session);
    if (outcome->bind)
        moat_worker_bind_tuple(session->worker, remote, session);
}

static bool same_address(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b)
{
    return a->sin6_port == b->sin6_port &&
           memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
}

void moat_session_yield_tuple(moat_session *session, const struct sockaddr_in6 *remote)
{
    moat_worker_unbind_tuple(session->worker, remote, session);
    bool selected = moat_ice_pairs_forget(&session->pairs, remote);
    if (session->has_selected && same_address(&session->selected.remote, remote)) {
        session->has_selected = false;
        selected = true;
    }
    moat_counter_add(&moat_worker_counters_mut(session->worker)->ice_pairs_taken_by_cascade, 1);
    char text[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, &remote->sin6_addr, text, sizeof text);
    moat_session_log(session, MOAT_LOG_WARN, "session",
                     "session %s: [%s]:%u is a cascade link's address: its pair there %sdropped",
                     session->label, text, ntohs(remote->sin6_port),
                     selected ? "(the selected one) " : "");
}

void moat_session_select_tuple(moat_session *session, const moat_path *path)
{
    const struct sockaddr_in6 *from = &path->remote;
    bool changed =
        !session->has_selected || session->selected.remote.sin6_port != from->sin6_port ||
        memcmp(&session->selected.remote.sin6_addr, &from->sin6_addr, sizeof from->sin6_addr) != 0;
    session->selected = *path;
    session->has_selected = true;
    if (changed) {
        char text[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, &from->sin6_addr, text, sizeof text);
        moat_session_log_repeating(session, MOAT_LOG_INFO, "session",
                                   "session %s: selected pair [%s]:%u", session->label, text,
                                   ntohs(from->sin6_port));
    }
    if (!session->dtls_started && session->dtls) {
        session->dtls_started = true;
        moat_dtls_transport_start(session->dtls);
    }
}

/* What an authenticated check means for this session's pairs: true when it
 * is accepted (outcome filled). A refused check gets no answer, so its
 * sender learns nothing and binds nothing. */
static bool pair_accepts(moat_session *session, const moat_path *path, const uint8_t *request,
                         const moat_ice_check_info *info, bool previous,
                         moat_ice_pairs_outcome *outcome)
{
    /* Another session's tuple stays that session's: an authenticated peer of
     * one session cannot take over (or spoof its way into) another's. */
    moat_session *owner = moat_worker_session_by_tuple(session->worker, &path->remote);
    if (owner != NULL && owner != session)
        return false;
    /* Nor a cascade link's: its legs route by SSRC and own no tuple, and a
     * check spoofed from the other node's address would take the link's
     * packets (every room's between the two nodes). */
    if (!session->cascade_leg && moat_worker_is_route_tuple(session->worker, &path->remote))
        return false;
    moat_ice_check_event event = {
        .remote = &path->remote,
        .local = &path->local,
        .remote_priority = info->priority,
        .local_priority = moat_worker_local_priority(session->worker, &path->local),
        .nominated = info->use_candidate,
        .previous_generation = previous,
        .transaction = request + 8,
        .confirm_by_media = session->dtls_connected || session->srtp != NULL,
        .now_us = moat_worker_now_us(session->worker),
    };
    return moat_ice_pairs_on_check(&session->pairs, &event, outcome) == MOAT_ICE_PAIRS_ACCEPTED;
}

/* The key of `password` in *slot, made again when the password changed (an
 * ICE restart); NULL when it cannot be made. */
static moat_stun_integrity *integrity_key(moat_stun_integrity **slot, const char *password)
{
    if (!moat_stun_integrity_is_for(*slot, password)) {
        moat_stun_integrity_free(*slot);
        *slot = moat_stun_integrity_new(password);
    }
    return *slot;
}

/* MESSAGE-INTEGRITY before anything else: one HMAC with precomputed key
 * pads (~0.25 us) is all a forged check costs, and it spends nothing of
 * the budgets authenticated checks need. Charged first, they let anyone who
 * knows the ufrags (sent in clear) empty them from the peer's own address
 * and starve its consent checks, its moves and its ICE restart. */
static bool authenticates(moat_session *session, bool previous, const char *password,
                          const uint8_t *data, size_t length)
{
    moat_stun_integrity *key = integrity_key(
        previous ? &session->stun_integrity_previous : &session->stun_integrity, password);
    if (key == NULL) {
        moat_session_drop(session, MOAT_DROP_STUN_AUTH); /* no password, or out of memory */
        return false;
    }
    switch (moat_stun_integrity_verify(key, data, length)) {
    case MOAT_STUN_INTEGRITY_OK:
        return true;
    case MOAT_STUN_INTEGRITY_MALFORMED:
        moat_session_drop(session, MOAT_DROP_MALFORMED);
        return false;
    case MOAT_STUN_INTEGRITY_BAD:
    default:
        moat_session_drop(session, MOAT_DROP_STUN_AUTH);
        return false;
    }
}

void moat_session_handle_stun(moat_session *session, const moat_path *path, const uint8_t *data,
                              size_t length)
{
    const struct sockaddr_in6 *from = &path->remote;
    char ufrag[257];
    bool previous = session->previous_local_ufrag[0] &&
                    moat_stun_local_ufrag(data, length, ufrag, sizeof ufrag) == 0 &&
                    strcmp(ufrag, session->previous_local_ufrag) == 0;
    const char *local_ufrag = previous ? session->previous_local_ufrag : session->local_ufrag;
    const char *local_pwd = previous ? session->previous_local_pwd : session->local_pwd;
    const char *remote_ufrag = previous ? session->previous_remote_ufrag : session->remote_ufrag;
    if (!authenticates(session, previous, local_pwd, data, length))
        return;
    /* What an authenticated check may make us do (the full validation, the
     * pair table, an answer), within the session's budgets: a peer, or
     * whoever re-sends checks it captured, gets no more. */
    moat_token_bucket *bucket = moat_ice_pairs_has_remote(&session->pairs, from)
                                    ? &session->stun_known
                                    : &session->stun_new;
    if (!moat_token_bucket_take(bucket, moat_worker_now_us(session->worker))) {
        moat_session_drop(session, MOAT_DROP_STUN_RATE);
        return;
    }
    uint8_t reply[1280];
    size_t reply_length = sizeof reply;
    moat_ice_check_info info;
    moat_ice_check_result result = moat_ice_checker_handle_request(
        moat_worker_ice_checker(session->worker), data, length, local_ufrag, local_pwd,
        remote_ufrag[0] ? remote_ufrag : NULL, (const struct sockaddr *)from, sizeof *from, reply,
        &reply_length, &info);
    if (result != MOAT_ICE_CHECK_OK) {
        /* Only an authenticated role conflict gets an answer (a signed 487). */
        if (result == MOAT_ICE_CHECK_ROLE_CONFLICT && reply_length > 0) {
            moat_worker_send(session->worker, path, reply, reply_length);
            return;
        }
        moat_session_drop(session, result == MOAT_ICE_CHECK_MALFORMED ? MOAT_DROP_MALFORMED
                                                                      : MOAT_DROP_STUN_AUTH);
        return;
    }
    moat_ice_pairs_outcome outcome;
    if (!pair_accepts(session, path, data, &info, previous, &outcome)) {
        moat_session_drop(session, MOAT_DROP_ICE_PAIR);
        return;
    }
    moat_worker_send(session->worker, path, reply, reply_length);
    moat_session_apply_bindings(session, &outcome, from);
    /* Consent (RFC 7675) is per pair: checks on other pairs do not keep the
     * selected one alive; the pending pair's keep the session (not its
     * media) alive, see moat_session_consent_tick. */
    if (outcome.refreshes_consent)
        moat_session_refresh_consent(session);
    if (outcome.refreshes_pending)
        session->pending_consent_us = moat_worker_now_us(session->worker);
    bool restart_complete = !previous && session->previous_local_ufrag[0];
    if (restart_complete) {
        /* The restarted credentials are in use: the old ones stop working. */
        moat_worker_unbind_ufrag(session->worker, session->previous_local_ufrag, session);
        session->previous_local_ufrag[0] = '\0';
        moat_session_log_repeating(session, MOAT_LOG_INFO, "session",
                                   "session %s: ICE restart complete, new credentials in use",
                                   session->label);
    }
    if (outcome.selection_changed)
        moat_session_select_tuple(session, path);
    /* The old generation's pairs go once the new one has the selection. */
    if (outcome.selection_changed || restart_complete)
        moat_session_expire_pairs(session, moat_worker_now_us(session->worker));
    if (outcome.selection_pending)
        moat_counter_add(&moat_worker_counters_mut(session->worker)->ice_moves_pending, 1);
}

void moat_session_confirm_path(moat_session *session, const moat_path *path)
{
    /* Media on a pair other than the selected one (rare: one compare on
     * the hot path) keeps that pair from expiring. */
    if (!session->has_selected || !same_address(&session->selected.remote, &path->remote))
        moat_ice_pairs_note_media(&session->pairs, &path->remote, &path->local,
                                  moat_worker_now_us(session->worker));
    if (session->pairs.pending < 0 ||
        !moat_ice_pairs_confirm(&session->pairs, &path->remote, &path->local))
        return;
    /* The pair passed a check (pending) and its peer now sends from it. */
    moat_counter_add(&moat_worker_counters_mut(session->worker)->ice_moves_confirmed, 1);
    moat_session_select_tuple(session, path);
    moat_session_refresh_consent(session);
    moat_session_expire_pairs(session, moat_worker_now_us(session->worker));
}

void moat_session_refresh_consent(moat_session *session)
{
    session->last_consent_us = moat_worker_now_us(session->worker);
    if (session->consent_withheld) {
        session->consent_withheld = false;
        moat_session_log_repeating(session, MOAT_LOG_INFO, "session",
                                   "session %s: selected pair has consent, sending again",
                                   session->label);
    }
}

/* Consent is per pair (RFC 7675): the selected pair's keeps the media going
 * to it; while only the pending pair has consent (the peer moved, its checks
 * come from the new tuple, and no media from there confirmed the move yet: a
 * data-channel peer with nothing to say), the session lives on but sends
 * nothing to the selected pair, whose peer gave no consent for a whole
 * timeout. A replayed nomination cannot use this to redirect media: the
 * pending pair never receives any until its own media confirms it. Nor
 * keep a session its peer left: the pending pair holds it one consent
 * timeout at most (the move must be confirmed by then: a data-channel
 * peer's SCTP heartbeat, every 30 s, does); before, checks captured from
 * the peer and replayed from a spoofed address once they had left the
 * replay memory (32 ids) held it for as long as the replays went on. */
bool moat_session_consent_tick(moat_session *session, uint64_t now_us)
{
    uint64_t timeout = session->consent_timeout_us;
    if (now_us - session->last_consent_us <= timeout)
        return true;
    if (session->pairs.pending < 0 || now_us - session->pending_consent_us > timeout ||
        now_us - session->last_consent_us > 2 * timeout)
        return false;
    if (!session->consent_withheld) {
        session->consent_withheld = true;
        moat_session_log_repeating(
            session, MOAT_LOG_INFO, "session",
            "session %s: selected pair lost consent; the pending pair has it: sending nothing "
            "until the peer's media confirms its move",
            session->label);
    }
    return true;
}

void moat_session_restart_ice(moat_session *session, const char *local_ufrag, const char *local_pwd,
                              const char *remote_ufrag, const char *remote_pwd)
{
    /* The old ufrag keeps answering until the peer's first check with the new
     * one, so media never stops during the restart; DTLS and SRTP are kept. */
    if (session->previous_local_ufrag[0]) {
        /* The last restart is not done: the previous credentials are still
         * the ones in use, and the never-used current ones give way (one
         * generation of pairs for both). */
        moat_worker_unbind_ufrag(session->worker, session->local_ufrag, session);
    } else {
        moat_ice_pairs_restart(&session->pairs);
        g_strlcpy(session->previous_local_ufrag, session->local_ufrag,
                  sizeof session->previous_local_ufrag);
        g_strlcpy(session->previous_local_pwd, session->local_pwd,
                  sizeof session->previous_local_pwd);
        g_strlcpy(session->previous_remote_ufrag, session->remote_ufrag,
                  sizeof session->previous_remote_ufrag);
    }
    g_strlcpy(session->local_ufrag, local_ufrag, sizeof session->local_ufrag);
    g_strlcpy(session->local_pwd, local_pwd, sizeof session->local_pwd);
    g_strlcpy(session->remote_ufrag, remote_ufrag, sizeof session->remote_ufrag);
    g_strlcpy(session->remote_pwd, remote_pwd, sizeof session->remote_pwd);
    moat_worker_bind_ufrag(session->worker, session->local_ufrag, session);
    moat_session_log_repeating(session, MOAT_LOG_INFO, "session", "session %s: ICE restart",
                               session->label);
}
