/* Test helper: the peer's side of a connectivity check, built with libnice's
 * own STUN agent and ICE usage so tests check interoperability. */
#include "stun_test_client.h"

#include <string.h>

#include <glib.h>
#include <stun/usages/ice.h>

void test_client_init(StunAgent *agent, bool fingerprint)
{
    static const uint16_t known[] = {
        STUN_ATTRIBUTE_USERNAME,       STUN_ATTRIBUTE_MESSAGE_INTEGRITY,
        STUN_ATTRIBUTE_FINGERPRINT,    STUN_ATTRIBUTE_XOR_MAPPED_ADDRESS,
        STUN_ATTRIBUTE_ERROR_CODE,     STUN_ATTRIBUTE_PRIORITY,
        STUN_ATTRIBUTE_USE_CANDIDATE,  STUN_ATTRIBUTE_ICE_CONTROLLING,
        STUN_ATTRIBUTE_ICE_CONTROLLED, 0,
    };
    StunAgentUsageFlags flags = STUN_AGENT_USAGE_SHORT_TERM_CREDENTIALS;
    if (fingerprint)
        flags |= STUN_AGENT_USAGE_USE_FINGERPRINT;
    stun_agent_init(agent, known, STUN_COMPATIBILITY_RFC5389, flags);
}

size_t test_client_request(StunAgent *agent, uint8_t *buffer, size_t capacity, const char *username,
                           const char *password, bool use_candidate, bool controlling,
                           uint32_t priority, uint64_t tie_breaker)
{
    StunMessage msg;
    size_t length = stun_usage_ice_conncheck_create(
        agent, &msg, buffer, capacity, (const uint8_t *)username,
        username != NULL ? strlen(username) : 0, (const uint8_t *)password,
        password != NULL ? strlen(password) : 0, use_candidate, controlling, priority, tie_breaker,
        NULL, STUN_USAGE_ICE_COMPATIBILITY_RFC5245);
    g_assert_cmpuint(length, >, 20);
    return length;
}
