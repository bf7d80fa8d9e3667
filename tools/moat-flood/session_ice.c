/* ICE for one session as the controlling agent with regular nomination
 * (RFC 8445 §8.1.1): checks every allowed candidate pair, then nominates the
 * highest-priority pair that answered and starts DTLS once the nominating
 * check itself is answered; then consent freshness (RFC 7675) on the
 * selected pair, and re-nomination from a new local address after
 * flood_session_migrate. Built on ice/ice_client.h. */
#include "session_parts.h"
#include "sfu_peer.h"
#include "whip_session.h"

#include <glib.h>
#include <string.h>

/* After the first pair answers, how long the others get to answer before the
 * best of those that did is nominated (at least; or the first answer's
 * round trip when that is longer). */
#define NOMINATION_WAIT_MIN_US 20000u

static uint32_t check_priority(void)
{
    return moat_ice_client_prflx_priority(65535, 1);
}

static void send_check(flood_session *s, const struct sockaddr_in6 *to, bool nominate)
{
    uint8_t request[MOAT_ICE_CLIENT_REQUEST_CAPACITY];
    size_t length = moat_ice_client_build_request(s->ice, check_priority(), nominate, true, request,
                                                  sizeof request);
    if (length == 0)
        return;
    if (nominate) {
        moat_ice_client_last_request(s->ice, s->nomination_ids[s->next_nomination_id]);
        s->next_nomination_id = (s->next_nomination_id + 1) % G_N_ELEMENTS(s->nomination_ids);
    }
    flood_session_send(s, request, length, to);
}

static bool answers_nomination(const flood_session *s)
{
    uint8_t id[MOAT_ICE_CLIENT_TRANSACTION_ID_LENGTH];
    moat_ice_client_last_success(s->ice, id);
    for (size_t i = 0; i < G_N_ELEMENTS(s->nomination_ids); i++) {
        if (memcmp(s->nomination_ids[i], id, sizeof id) == 0)
            return true;
    }
    return false;
}

/* The answered pair with the highest priority; the gateway's candidate
 * priority decides, as our side's is the same for every pair. */
static int best_answered(const flood_session *s)
{
    int best = -1;
    for (size_t i = 0; i < s->n_remotes; i++) {
        if (s->answered[i] &&
            (best < 0 || s->remote_priorities[i] > s->remote_priorities[(size_t)best]))
            best = (int)i;
    }
    return best;
}

static void maybe_nominate(flood_session *s, uint64_t now_us)
{
    if (s->nominated >= 0 || s->first_answer_us == 0)
        return;
    bool all = true;
    for (size_t i = 0; i < s->n_remotes; i++)
        all = all && s->answered[i];
    uint64_t wait = s->first_answer_us - s->checks_started_us;
    if (wait < NOMINATION_WAIT_MIN_US)
        wait = NOMINATION_WAIT_MIN_US;
    if (!all && now_us < s->first_answer_us + wait)
        return;
    s->nominated = best_answered(s);
    send_check(s, &s->remotes[s->nominated], true);
    s->next_check_us = now_us + SESSION_CHECK_INTERVAL_US;
}

uint64_t session_ice_next_timer_us(const flood_session *s)
{
    if (s->sfu != NULL && s->sfu->answering)
        return UINT64_MAX;
    uint64_t next = s->next_check_us;
    if (s->state == FLOOD_SESSION_CHECKING && s->nominated < 0 && s->first_answer_us != 0) {
        uint64_t wait = s->first_answer_us - s->checks_started_us;
        uint64_t decide =
            s->first_answer_us + (wait < NOMINATION_WAIT_MIN_US ? NOMINATION_WAIT_MIN_US : wait);
        if (decide < next)
            next = decide;
    }
    if (s->state == FLOOD_SESSION_CONNECTED && !s->migrating)
        next = s->next_consent_us;
    return next;
}

void session_ice_tick(flood_session *s, uint64_t now_us)
{
    /* An answering fan-out subscriber is ICE-lite: it only responds. */
    if (s->sfu != NULL && s->sfu->answering)
        return;
    if (s->state == FLOOD_SESSION_CHECKING) {
        maybe_nominate(s, now_us);
        if (now_us < s->next_check_us)
            return;
        if (s->checks_started_us == 0)
            s->checks_started_us = now_us;
        if (s->nominated >= 0) {
            send_check(s, &s->remotes[s->nominated], true);
        } else {
            for (size_t i = 0; i < s->n_remotes; i++) {
                if (!s->answered[i])
                    send_check(s, &s->remotes[i], false);
            }
        }
        s->next_check_us = now_us + SESSION_CHECK_INTERVAL_US;
    } else if (s->state == FLOOD_SESSION_CONNECTED && s->migrating) {
        if (now_us >= s->next_check_us) {
            send_check(s, &s->remote, true);
            s->next_check_us = now_us + SESSION_CHECK_INTERVAL_US;
        }
    } else if (s->state == FLOOD_SESSION_CONNECTED && now_us >= s->next_consent_us) {
        send_check(s, &s->remote, false);
        s->next_consent_us = now_us + SESSION_CONSENT_INTERVAL_US;
    }
}

static void to_in6(const struct sockaddr_storage *in, struct sockaddr_in6 *out)
{
    memset(out, 0, sizeof *out);
    out->sin6_family = AF_INET6;
    if (in->ss_family == AF_INET) {
        struct sockaddr_in v4;
        memcpy(&v4, in, sizeof v4);
        out->sin6_port = v4.sin_port;
        out->sin6_addr.s6_addr[10] = 0xff;
        out->sin6_addr.s6_addr[11] = 0xff;
        memcpy(&out->sin6_addr.s6_addr[12], &v4.sin_addr, 4);
    } else if (in->ss_family == AF_INET6) {
        memcpy(out, in, sizeof *out);
    }
}

static int remote_index(const flood_session *s, const struct sockaddr_in6 *from)
{
    for (size_t i = 0; i < s->n_remotes; i++) {
        if (s->remotes[i].sin6_port == from->sin6_port &&
            memcmp(&s->remotes[i].sin6_addr, &from->sin6_addr, sizeof from->sin6_addr) == 0)
            return (int)i;
    }
    return -1;
}

static void on_success(flood_session *s, int index, const struct sockaddr_storage *mapped,
                       uint64_t now_us)
{
    if (s->state == FLOOD_SESSION_CHECKING && s->nominated < 0) {
        s->answered[index] = true;
        if (s->first_answer_us == 0)
            s->first_answer_us = now_us;
        maybe_nominate(s, now_us);
    } else if (s->state == FLOOD_SESSION_CHECKING && index == s->nominated &&
               answers_nomination(s)) {
        /* The gateway has the nomination: this pair carries DTLS. */
        s->remote = s->remotes[index];
        to_in6(mapped, &s->reflexive);
        s->state = FLOOD_SESSION_DTLS;
        s->next_consent_us = now_us + SESSION_CONSENT_INTERVAL_US;
        session_dtls_start(s, now_us);
    } else if (s->state == FLOOD_SESSION_CONNECTED && s->migrating &&
               index == remote_index(s, &s->remote) && answers_nomination(s)) {
        s->migrating = false;
        s->migrations++;
        to_in6(mapped, &s->reflexive);
        s->next_consent_us = now_us + SESSION_CONSENT_INTERVAL_US;
    } else if (s->state == FLOOD_SESSION_CONNECTED) {
        s->consent_responses++;
    }
}

void session_ice_on_stun(flood_session *s, const uint8_t *data, size_t length,
                         const struct sockaddr_in6 *from, uint64_t now_us)
{
    if (s->ice == NULL)
        return;
    struct sockaddr_storage mapped;
    socklen_t mapped_length = sizeof mapped;
    moat_ice_response_result result =
        moat_ice_client_handle_response(s->ice, data, length, &mapped, &mapped_length);
    int index = remote_index(s, from);
    switch (result) {
    case MOAT_ICE_RESPONSE_SUCCESS:
        if (index >= 0)
            on_success(s, index, &mapped, now_us);
        break;
    case MOAT_ICE_RESPONSE_ROLE_CONFLICT:
        session_fail(s, "ICE: the endpoint claims the controlling role too");
        break;
    default:
        /* Stray, forged or late answers are ignored, as RFC 8445 asks. */
        break;
    }
}
