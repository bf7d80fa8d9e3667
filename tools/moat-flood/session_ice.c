/* ICE for one session as the controlling agent with aggressive nomination:
 * checks to every allowed candidate until one answers, then consent
 * freshness (RFC 7675) on the selected pair. Built on ice/ice_client.h. */
#include "session_parts.h"
#include "whip_session.h"

#include <string.h>

static uint32_t check_priority(void)
{
    return moat_ice_client_prflx_priority(65535, 1);
}

static void send_check(flood_session *s, const struct sockaddr_in6 *to)
{
    uint8_t request[MOAT_ICE_CLIENT_REQUEST_CAPACITY];
    size_t length = moat_ice_client_build_request(s->ice, check_priority(), true, true, request,
                                                  sizeof request);
    if (length > 0)
        flood_session_send(s, request, length, to);
}

void session_ice_tick(flood_session *s, uint64_t now_us)
{
    if (s->state == FLOOD_SESSION_CHECKING && now_us >= s->next_check_us) {
        for (size_t i = 0; i < s->n_remotes; i++)
            send_check(s, &s->remotes[i]);
        s->next_check_us = now_us + SESSION_CHECK_INTERVAL_US;
    } else if (s->state == FLOOD_SESSION_CONNECTED && now_us >= s->next_consent_us) {
        send_check(s, &s->remote);
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

void session_ice_on_stun(flood_session *s, const uint8_t *data, size_t length,
                         const struct sockaddr_in6 *from, uint64_t now_us)
{
    if (s->ice == NULL)
        return;
    struct sockaddr_storage mapped;
    socklen_t mapped_length = sizeof mapped;
    moat_ice_response_result result =
        moat_ice_client_handle_response(s->ice, data, length, &mapped, &mapped_length);
    switch (result) {
    case MOAT_ICE_RESPONSE_SUCCESS:
        if (s->state == FLOOD_SESSION_CHECKING) {
            /* The first pair that answers is nominated (USE-CANDIDATE was on
             * every check) and carries DTLS. */
            s->remote = *from;
            to_in6(&mapped, &s->reflexive);
            s->state = FLOOD_SESSION_DTLS;
            if (session_dtls_start(s, now_us) != 0)
                return;
        } else if (s->state == FLOOD_SESSION_CONNECTED) {
            s->consent_responses++;
        }
        break;
    case MOAT_ICE_RESPONSE_ROLE_CONFLICT:
        session_fail(s, "ICE: the endpoint claims the controlling role too");
        break;
    default:
        /* Stray, forged or late answers are ignored, as RFC 8445 asks. */
        break;
    }
}
