/* The ICE-lite connectivity-check responder (RFC 8445 §7.3): validates a
 * Binding request's USERNAME and MESSAGE-INTEGRITY against the session's
 * credentials on libnice's STUN agent and builds the success or 487 reply. */
#include "ice/ice_checker.h"
#include "ice/stun_attributes.h"
#include "ice/stun_classify.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <stun/stunagent.h>
#include <stun/stunmessage.h>
#include <stun/usages/ice.h>

struct moat_ice_checker {
    /* libnice's agent keeps no per-request state for the requests we validate
     * and the responses we build, but it is mutable, hence one per worker. */
    StunAgent agent;
    /* Our role: false for Moat (a lite agent is always controlled); true for
     * a tool's full agent that answers its controlled peer's checks. */
    bool controlling;
};

void moat_ice_checker_set_controlling(moat_ice_checker *c, bool controlling)
{
    c->controlling = controlling;
}

/* Comprehension-required attributes outside this list make stun_agent_validate
 * reject a request; browsers only add comprehension-optional ones
 * (GOOG-NETWORK-INFO, NOMINATION) on top of these. */
static const uint16_t known_attributes[] = {
    STUN_ATTRIBUTE_USERNAME,       STUN_ATTRIBUTE_MESSAGE_INTEGRITY, STUN_ATTRIBUTE_FINGERPRINT,
    STUN_ATTRIBUTE_PRIORITY,       STUN_ATTRIBUTE_USE_CANDIDATE,     STUN_ATTRIBUTE_ICE_CONTROLLING,
    STUN_ATTRIBUTE_ICE_CONTROLLED, STUN_ATTRIBUTE_SOFTWARE,          0,
};

moat_ice_checker *moat_ice_checker_new(void)
{
    moat_ice_checker *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    stun_agent_init(&c->agent, known_attributes, STUN_COMPATIBILITY_RFC5389,
                    STUN_AGENT_USAGE_SHORT_TERM_CREDENTIALS | STUN_AGENT_USAGE_USE_FINGERPRINT);
    return c;
}

void moat_ice_checker_free(moat_ice_checker *c)
{
    free(c);
}

/* What the key callback compares USERNAME against. */
typedef struct {
    const char *local_ufrag;
    size_t local_ufrag_length;
    const char *remote_ufrag; /* NULL: any non-empty peer part is accepted */
    size_t remote_ufrag_length;
    const char *local_pwd;
    size_t local_pwd_length;
} expected_credentials;

static bool username_matches(const expected_credentials *expected, const uint8_t *username,
                             size_t length)
{
    size_t local = expected->local_ufrag_length;
    if (username == NULL || length < local + 2 ||
        memcmp(username, expected->local_ufrag, local) != 0 || username[local] != ':')
        return false;
    const uint8_t *peer = username + local + 1;
    size_t peer_length = length - local - 1;
    if (expected->remote_ufrag == NULL)
        return peer_length <= MOAT_ICE_MAX_UFRAG_LENGTH && memchr(peer, '\0', peer_length) == NULL;
    return peer_length == expected->remote_ufrag_length &&
           memcmp(peer, expected->remote_ufrag, peer_length) == 0;
}

/* libnice's key callback: hands out local_pwd only for the expected USERNAME,
 * so a request for another session fails MESSAGE-INTEGRITY as unauthorized. */
static bool lookup_key(StunAgent *agent, StunMessage *message, uint8_t *username,
                       uint16_t username_length, uint8_t **password, size_t *password_length,
                       void *user_data)
{
    const expected_credentials *expected = user_data;
    if (!username_matches(expected, username, username_length))
        return false;
    /* libnice only reads the key; its API type is not const-qualified. */
    *password = (uint8_t *)expected->local_pwd;
    *password_length = expected->local_pwd_length;
    return true;
}

/* The worker's socket is dual-stack, so an IPv4 peer shows up as
 * ::ffff:a.b.c.d; a browser expects its IPv4 address (family 0x01) back in
 * XOR-MAPPED-ADDRESS, not the mapped IPv6 form. */
static bool reply_address(const struct sockaddr *from, socklen_t from_length,
                          struct sockaddr_storage *out, socklen_t *out_length)
{
    memset(out, 0, sizeof *out);
    if (from->sa_family == AF_INET && (size_t)from_length >= sizeof(struct sockaddr_in)) {
        memcpy(out, from, sizeof(struct sockaddr_in));
        *out_length = sizeof(struct sockaddr_in);
        return true;
    }
    if (from->sa_family != AF_INET6 || (size_t)from_length < sizeof(struct sockaddr_in6))
        return false;

    struct sockaddr_in6 v6;
    memcpy(&v6, from, sizeof v6);
    if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) {
        struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = v6.sin6_port};
        memcpy(&v4.sin_addr, &v6.sin6_addr.s6_addr[12], sizeof v4.sin_addr);
        memcpy(out, &v4, sizeof v4);
        *out_length = sizeof v4;
    } else {
        memcpy(out, &v6, sizeof v6);
        *out_length = sizeof v6;
    }
    return true;
}

static moat_ice_check_result validation_result(StunValidationStatus status)
{
    switch (status) {
    case STUN_VALIDATION_SUCCESS:
        return MOAT_ICE_CHECK_OK;
    case STUN_VALIDATION_BAD_REQUEST:
        /* The cookie was already checked by moat_stun_classify, so the only
         * remaining cause is a missing or wrong FINGERPRINT. */
        return MOAT_ICE_CHECK_BAD_FINGERPRINT;
    case STUN_VALIDATION_UNAUTHORIZED_BAD_REQUEST:
    case STUN_VALIDATION_UNAUTHORIZED:
        return MOAT_ICE_CHECK_UNAUTHORIZED;
    case STUN_VALIDATION_UNMATCHED_RESPONSE:
    case STUN_VALIDATION_FORBIDDEN:
        return MOAT_ICE_CHECK_NOT_REQUEST;
    case STUN_VALIDATION_NOT_STUN:
    case STUN_VALIDATION_INCOMPLETE_STUN:
    case STUN_VALIDATION_UNKNOWN_REQUEST_ATTRIBUTE:
    case STUN_VALIDATION_UNKNOWN_ATTRIBUTE:
    default:
        return MOAT_ICE_CHECK_MALFORMED;
    }
}

/* Reads the ICE attributes of an authenticated request. RFC 8445 §7.1.1
 * makes PRIORITY and one role attribute mandatory; a wrongly sized one, or
 * both roles at once, is a malformed request. */
static moat_ice_check_result read_ice_attributes(const StunMessage *msg, moat_ice_check_info *out)
{
    uint64_t controlling = 0;
    uint64_t controlled = 0;

    if (stun_message_find32(msg, STUN_ATTRIBUTE_PRIORITY, &out->priority) !=
        STUN_MESSAGE_RETURN_SUCCESS)
        return MOAT_ICE_CHECK_MALFORMED;

    StunMessageReturn flag = stun_message_find_flag(msg, STUN_ATTRIBUTE_USE_CANDIDATE);
    if (flag == STUN_MESSAGE_RETURN_INVALID)
        return MOAT_ICE_CHECK_MALFORMED;
    out->use_candidate = flag == STUN_MESSAGE_RETURN_SUCCESS;

    StunMessageReturn has_controlling =
        stun_message_find64(msg, STUN_ATTRIBUTE_ICE_CONTROLLING, &controlling);
    StunMessageReturn has_controlled =
        stun_message_find64(msg, STUN_ATTRIBUTE_ICE_CONTROLLED, &controlled);
    if (has_controlling == STUN_MESSAGE_RETURN_INVALID ||
        has_controlled == STUN_MESSAGE_RETURN_INVALID)
        return MOAT_ICE_CHECK_MALFORMED;
    if ((has_controlling == STUN_MESSAGE_RETURN_SUCCESS) ==
        (has_controlled == STUN_MESSAGE_RETURN_SUCCESS))
        return MOAT_ICE_CHECK_MALFORMED;

    out->peer_controlling = has_controlling == STUN_MESSAGE_RETURN_SUCCESS;
    out->tie_breaker = out->peer_controlling ? controlling : controlled;
    return MOAT_ICE_CHECK_OK;
}

/* A lite agent is always controlled (RFC 8445 §6.1.1) and can never take over,
 * so a peer that also claims to be controlled is told with 487 to switch
 * (§7.3.1.1); the request is authenticated, so this is no reflection. */
static size_t build_role_conflict(moat_ice_checker *c, StunMessage *request, uint8_t *reply,
                                  size_t capacity)
{
    StunMessage response;
    if (!stun_agent_init_error(&c->agent, &response, reply, capacity, request,
                               STUN_ERROR_ROLE_CONFLICT))
        return 0;
    return stun_agent_finish_message(&c->agent, &response, NULL, 0);
}

static size_t build_success(moat_ice_checker *c, StunMessage *request, uint8_t *reply,
                            size_t capacity, const struct sockaddr_storage *address,
                            socklen_t address_length)
{
    StunMessage response;
    size_t written = capacity;
    bool controlling = c->controlling;
    /* The peer holds the other role (role conflicts were handled before), so
     * the tie-breaker passed here is never compared. */
    StunUsageIceReturn r = stun_usage_ice_conncheck_create_reply(
        &c->agent, request, &response, reply, &written, address, address_length, &controlling, 0,
        STUN_USAGE_ICE_COMPATIBILITY_RFC5245);
    if (r != STUN_USAGE_ICE_RETURN_SUCCESS)
        return 0;
    return written;
}

moat_ice_check_result moat_ice_checker_handle_request(
    moat_ice_checker *c, const uint8_t *request, size_t length, const char *local_ufrag,
    const char *local_pwd, const char *remote_ufrag, const struct sockaddr *from,
    socklen_t from_length, uint8_t *reply, size_t *reply_length, moat_ice_check_info *info)
{
    moat_ice_check_info parsed = {0};

    if (info != NULL)
        *info = parsed;
    if (reply_length == NULL)
        return MOAT_ICE_CHECK_INVALID_ARGUMENT;
    size_t capacity = *reply_length;
    *reply_length = 0;
    /* An empty password would make libnice skip the HMAC check entirely. */
    if (c == NULL || local_ufrag == NULL || local_ufrag[0] == '\0' || local_pwd == NULL ||
        local_pwd[0] == '\0' || (remote_ufrag != NULL && remote_ufrag[0] == '\0') || from == NULL ||
        reply == NULL || capacity < MOAT_ICE_REPLY_CAPACITY)
        return MOAT_ICE_CHECK_INVALID_ARGUMENT;

    struct sockaddr_storage address;
    socklen_t address_length;
    if (!reply_address(from, from_length, &address, &address_length))
        return MOAT_ICE_CHECK_INVALID_ARGUMENT;

    switch (moat_stun_classify(request, length)) {
    case MOAT_STUN_BINDING_REQUEST:
        break;
    case MOAT_STUN_NOT_STUN:
    case MOAT_STUN_MALFORMED:
        return MOAT_ICE_CHECK_MALFORMED;
    case MOAT_STUN_BINDING_INDICATION:
    case MOAT_STUN_BINDING_RESPONSE:
    case MOAT_STUN_OTHER:
    default:
        return MOAT_ICE_CHECK_NOT_REQUEST;
    }
    /* classify bounded length to 20 + 65532, so the int comparison is exact. */
    if (stun_message_validate_buffer_length(request, length, true) != (int)length ||
        !moat_stun_integrity_attributes_sized(request, length))
        return MOAT_ICE_CHECK_MALFORMED;

    expected_credentials expected = {
        .local_ufrag = local_ufrag,
        .local_ufrag_length = strlen(local_ufrag),
        .remote_ufrag = remote_ufrag,
        .remote_ufrag_length = remote_ufrag != NULL ? strlen(remote_ufrag) : 0,
        .local_pwd = local_pwd,
        .local_pwd_length = strlen(local_pwd),
    };
    StunMessage msg;
    moat_ice_check_result result = validation_result(
        stun_agent_validate(&c->agent, &msg, request, length, lookup_key, &expected));
    if (result != MOAT_ICE_CHECK_OK)
        return result;
    /* Short-term credentials make libnice reject a request without
     * MESSAGE-INTEGRITY; the key it verified with is the proof, so insist on
     * it rather than rely on that flag alone. */
    if (msg.key == NULL)
        return MOAT_ICE_CHECK_UNAUTHORIZED;

    result = read_ice_attributes(&msg, &parsed);
    if (result != MOAT_ICE_CHECK_OK)
        return result;

    size_t written;
    if (parsed.peer_controlling == c->controlling) {
        written = build_role_conflict(c, &msg, reply, capacity);
        result = MOAT_ICE_CHECK_ROLE_CONFLICT;
    } else {
        written = build_success(c, &msg, reply, capacity, &address, address_length);
    }
    /* Cannot happen with the capacity and USERNAME bounds checked above;
     * reported as a caller error rather than sending a partial message. */
    if (written == 0)
        return MOAT_ICE_CHECK_INVALID_ARGUMENT;

    *reply_length = written;
    if (info != NULL)
        *info = parsed;
    return result;
}

const char *moat_ice_check_result_name(moat_ice_check_result r)
{
    switch (r) {
    case MOAT_ICE_CHECK_OK:
        return "ok";
    case MOAT_ICE_CHECK_MALFORMED:
        return "malformed";
    case MOAT_ICE_CHECK_UNAUTHORIZED:
        return "unauthorized";
    case MOAT_ICE_CHECK_BAD_FINGERPRINT:
        return "bad-fingerprint";
    case MOAT_ICE_CHECK_NOT_REQUEST:
        return "not-request";
    case MOAT_ICE_CHECK_ROLE_CONFLICT:
        return "role-conflict";
    case MOAT_ICE_CHECK_INVALID_ARGUMENT:
        return "invalid-argument";
    }
    return "unknown";
}
