/* The controlling side of ICE checks (RFC 8445 §7.2.4-7.2.5) on libnice's STUN
 * usage API: builds Binding requests with the peer's credentials and checks the
 * responses against the outstanding ones (used by moat-flood and tests). */
#include "ice/ice_client.h"
#include "ice/stun_attributes.h"
#include "ice/stun_classify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stun/stunagent.h>
#include <stun/stunmessage.h>
#include <stun/usages/ice.h>

#define CREDENTIAL_MAX 256

_Static_assert(sizeof(StunTransactionId) == MOAT_ICE_CLIENT_TRANSACTION_ID_LENGTH,
               "transaction ids as libnice keeps them");

struct moat_ice_client {
    StunAgent agent;
    /* libnice keeps a pointer to the key of each remembered request, so the
     * password lives as long as the client. */
    char remote_pwd[CREDENTIAL_MAX + 1];
    char username[2 * CREDENTIAL_MAX + 2];
    size_t username_length;
    uint64_t tie_breaker;
    StunTransactionId outstanding[MOAT_ICE_CLIENT_OUTSTANDING];
    size_t n_outstanding; /* oldest first */
    StunTransactionId last_request, last_success;
};

/* Comprehension-required attributes a response may carry. */
static const uint16_t known_attributes[] = {
    STUN_ATTRIBUTE_USERNAME,
    STUN_ATTRIBUTE_MESSAGE_INTEGRITY,
    STUN_ATTRIBUTE_FINGERPRINT,
    STUN_ATTRIBUTE_XOR_MAPPED_ADDRESS,
    STUN_ATTRIBUTE_MAPPED_ADDRESS,
    STUN_ATTRIBUTE_ERROR_CODE,
    STUN_ATTRIBUTE_SOFTWARE,
    STUN_ATTRIBUTE_PRIORITY,
    STUN_ATTRIBUTE_USE_CANDIDATE,
    STUN_ATTRIBUTE_ICE_CONTROLLING,
    STUN_ATTRIBUTE_ICE_CONTROLLED,
    STUN_ATTRIBUTE_UNKNOWN_ATTRIBUTES,
    0,
};

static bool credential_valid(const char *value)
{
    return value != NULL && value[0] != '\0' && strlen(value) <= CREDENTIAL_MAX;
}

moat_ice_client *moat_ice_client_new(const moat_ice_client_credentials *credentials)
{
    if (credentials == NULL || !credential_valid(credentials->local_ufrag) ||
        !credential_valid(credentials->local_pwd) || !credential_valid(credentials->remote_ufrag) ||
        !credential_valid(credentials->remote_pwd))
        return NULL;
    moat_ice_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    stun_agent_init(&c->agent, known_attributes, STUN_COMPATIBILITY_RFC5389,
                    STUN_AGENT_USAGE_SHORT_TERM_CREDENTIALS | STUN_AGENT_USAGE_USE_FINGERPRINT);
    snprintf(c->remote_pwd, sizeof c->remote_pwd, "%s", credentials->remote_pwd);
    int written = snprintf(c->username, sizeof c->username, "%s:%s", credentials->remote_ufrag,
                           credentials->local_ufrag);
    c->username_length = (size_t)written;
    c->tie_breaker = credentials->tie_breaker;
    return c;
}

void moat_ice_client_free(moat_ice_client *c)
{
    free(c);
}

static void forget_oldest(moat_ice_client *c)
{
    stun_agent_forget_transaction(&c->agent, c->outstanding[0]);
    memmove(&c->outstanding[0], &c->outstanding[1],
            sizeof c->outstanding[0] * (MOAT_ICE_CLIENT_OUTSTANDING - 1));
    c->n_outstanding--;
}

static void remove_outstanding(moat_ice_client *c, const StunTransactionId id)
{
    for (size_t i = 0; i < c->n_outstanding; i++) {
        if (memcmp(c->outstanding[i], id, sizeof(StunTransactionId)) != 0)
            continue;
        memmove(&c->outstanding[i], &c->outstanding[i + 1],
                sizeof c->outstanding[0] * (c->n_outstanding - i - 1));
        c->n_outstanding--;
        return;
    }
}

size_t moat_ice_client_build_request(moat_ice_client *c, uint32_t priority, bool nominate,
                                     bool track_response, uint8_t *out, size_t capacity)
{
    if (c == NULL || out == NULL || capacity < MOAT_ICE_CLIENT_REQUEST_CAPACITY)
        return 0;
    if (c->n_outstanding == MOAT_ICE_CLIENT_OUTSTANDING)
        forget_oldest(c);
    StunMessage msg;
    size_t length = stun_usage_ice_conncheck_create(
        &c->agent, &msg, out, capacity, (const uint8_t *)c->username, c->username_length,
        (const uint8_t *)c->remote_pwd, strlen(c->remote_pwd), nominate, true, priority,
        c->tie_breaker, NULL, STUN_USAGE_ICE_COMPATIBILITY_RFC5245);
    if (length == 0)
        return 0;
    StunTransactionId id;
    stun_message_id(&msg, id);
    memcpy(c->last_request, id, sizeof c->last_request);
    if (track_response)
        memcpy(c->outstanding[c->n_outstanding++], id, sizeof id);
    else
        stun_agent_forget_transaction(&c->agent, id);
    return length;
}

static moat_ice_response_result validation_result(StunValidationStatus status)
{
    switch (status) {
    case STUN_VALIDATION_SUCCESS:
        return MOAT_ICE_RESPONSE_SUCCESS;
    case STUN_VALIDATION_UNMATCHED_RESPONSE:
        return MOAT_ICE_RESPONSE_UNMATCHED;
    case STUN_VALIDATION_UNAUTHORIZED:
    case STUN_VALIDATION_UNAUTHORIZED_BAD_REQUEST:
        return MOAT_ICE_RESPONSE_UNAUTHORIZED;
    default:
        return MOAT_ICE_RESPONSE_MALFORMED;
    }
}

moat_ice_response_result moat_ice_client_handle_response(moat_ice_client *c, const uint8_t *data,
                                                         size_t length,
                                                         struct sockaddr_storage *mapped,
                                                         socklen_t *mapped_length)
{
    if (c == NULL || data == NULL || moat_stun_classify(data, length) != MOAT_STUN_BINDING_RESPONSE)
        return MOAT_ICE_RESPONSE_MALFORMED;
    if (stun_message_validate_buffer_length(data, length, true) != (int)length ||
        !moat_stun_integrity_attributes_sized(data, length))
        return MOAT_ICE_RESPONSE_MALFORMED;

    StunMessage msg;
    moat_ice_response_result result =
        validation_result(stun_agent_validate(&c->agent, &msg, data, length, NULL, NULL));
    /* A forged or broken answer leaves the transaction open for the real
     * one; libnice ends it on success. */
    if (result != MOAT_ICE_RESPONSE_SUCCESS)
        return result;
    StunTransactionId id;
    stun_message_id(&msg, id);
    remove_outstanding(c, id);
    /* Error responses 400/401 pass libnice without integrity; only an
     * authenticated answer counts. */
    if (msg.key == NULL)
        return MOAT_ICE_RESPONSE_UNAUTHORIZED;

    struct sockaddr_storage address;
    socklen_t address_length = sizeof address;
    switch (stun_usage_ice_conncheck_process(&msg, &address, &address_length,
                                             STUN_USAGE_ICE_COMPATIBILITY_RFC5245)) {
    case STUN_USAGE_ICE_RETURN_SUCCESS:
        break;
    case STUN_USAGE_ICE_RETURN_ROLE_CONFLICT:
        return MOAT_ICE_RESPONSE_ROLE_CONFLICT;
    case STUN_USAGE_ICE_RETURN_ERROR:
        return MOAT_ICE_RESPONSE_ERROR;
    default:
        return MOAT_ICE_RESPONSE_MALFORMED;
    }
    memcpy(c->last_success, id, sizeof c->last_success);
    if (mapped != NULL && mapped_length != NULL) {
        socklen_t room = *mapped_length < address_length ? *mapped_length : address_length;
        memcpy(mapped, &address, room);
        *mapped_length = address_length;
    }
    return MOAT_ICE_RESPONSE_SUCCESS;
}

void moat_ice_client_last_request(const moat_ice_client *c,
                                  uint8_t id[MOAT_ICE_CLIENT_TRANSACTION_ID_LENGTH])
{
    memcpy(id, c->last_request, sizeof c->last_request);
}

void moat_ice_client_last_success(const moat_ice_client *c,
                                  uint8_t id[MOAT_ICE_CLIENT_TRANSACTION_ID_LENGTH])
{
    memcpy(id, c->last_success, sizeof c->last_success);
}

const char *moat_ice_response_result_name(moat_ice_response_result result)
{
    switch (result) {
    case MOAT_ICE_RESPONSE_SUCCESS:
        return "success";
    case MOAT_ICE_RESPONSE_ROLE_CONFLICT:
        return "role-conflict";
    case MOAT_ICE_RESPONSE_ERROR:
        return "error";
    case MOAT_ICE_RESPONSE_UNMATCHED:
        return "unmatched";
    case MOAT_ICE_RESPONSE_UNAUTHORIZED:
        return "unauthorized";
    case MOAT_ICE_RESPONSE_MALFORMED:
        return "malformed";
    }
    return "unknown";
}

uint32_t moat_ice_client_prflx_priority(uint32_t local_preference, uint32_t component)
{
    if (local_preference > 65535)
        local_preference = 65535;
    if (component < 1)
        component = 1;
    if (component > 256)
        component = 256;
    return (110u << 24) | (local_preference << 8) | (256u - component);
}
