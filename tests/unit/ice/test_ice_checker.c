/* moat_ice_checker against requests from libnice's client side: interop,
 * address families, role handling and caller errors. */
#include "ice/ice_checker.h"
#include "ice_check_harness.h"
#include "stun_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/un.h>

#include <glib.h>
#include <stun/stunmessage.h>
#include <stun/usages/ice.h>

static void test_ipv4_sender(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = test_valid_request(&client, request, sizeof request);
    struct sockaddr_in from = test_v4_sender();
    outcome out;

    g_assert_cmpint(test_check_with(c, request, length, TEST_REMOTE_UFRAG, (struct sockaddr *)&from,
                                    sizeof from, &out),
                    ==, MOAT_ICE_CHECK_OK);
    g_assert_true(out.info.use_candidate);
    g_assert_true(out.info.peer_controlling);
    g_assert_cmpuint(out.info.priority, ==, PRIORITY);
    g_assert_cmpuint(out.info.tie_breaker, ==, TIE_BREAKER);
    g_assert_cmpuint(out.reply_length, >, 20);
    g_assert_cmpuint(out.reply_length, <=, MOAT_ICE_REPLY_CAPACITY);
    test_assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&from);
    moat_ice_checker_free(c);
}

static void test_v4_mapped_sender(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = test_valid_request(&client, request, sizeof request);
    struct sockaddr_in6 from = test_v6_sender("::ffff:127.0.0.1", 5000);
    outcome out;

    g_assert_cmpint(test_check_with(c, request, length, TEST_REMOTE_UFRAG, (struct sockaddr *)&from,
                                    sizeof from, &out),
                    ==, MOAT_ICE_CHECK_OK);
    struct sockaddr_in expected = {.sin_family = AF_INET, .sin_port = htons(5000)};
    expected.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    test_assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&expected);

    /* On the wire: family 0x01 and an 8-byte value, as a browser expects. */
    StunMessage msg = {.buffer = out.reply, .buffer_len = out.reply_length};
    uint16_t attribute_length = 0;
    const uint8_t *xor_mapped =
        stun_message_find(&msg, STUN_ATTRIBUTE_XOR_MAPPED_ADDRESS, &attribute_length);
    g_assert_nonnull(xor_mapped);
    g_assert_cmpuint(attribute_length, ==, 8);
    g_assert_cmpuint(xor_mapped[1], ==, 0x01);
    moat_ice_checker_free(c);
}

static void test_ipv6_sender(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = test_valid_request(&client, request, sizeof request);
    struct sockaddr_in6 from = test_v6_sender("2001:db8::5", 61000);
    outcome out;

    g_assert_cmpint(test_check_with(c, request, length, TEST_REMOTE_UFRAG, (struct sockaddr *)&from,
                                    sizeof from, &out),
                    ==, MOAT_ICE_CHECK_OK);
    test_assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&from);
    moat_ice_checker_free(c);
}

static void test_unknown_remote_ufrag(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = test_valid_request(&client, request, sizeof request);
    struct sockaddr_in from = test_v4_sender();
    outcome out;

    g_assert_cmpint(
        test_check_with(c, request, length, NULL, (struct sockaddr *)&from, sizeof from, &out), ==,
        MOAT_ICE_CHECK_OK);
    test_assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&from);
    moat_ice_checker_free(c);
}

static void test_without_use_candidate(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, true);
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME,
                                        TEST_LOCAL_PWD, false, true, 1234, 99);
    outcome out;

    g_assert_cmpint(test_check(c, request, length, &out), ==, MOAT_ICE_CHECK_OK);
    g_assert_false(out.info.use_candidate);
    g_assert_true(out.info.peer_controlling);
    g_assert_cmpuint(out.info.priority, ==, 1234);
    g_assert_cmpuint(out.info.tie_breaker, ==, 99);
    moat_ice_checker_free(c);
}

/* The checker must not keep per-request state: more requests than libnice's
 * transaction table holds all succeed, each from a fresh peer. */
static void test_many_requests(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    for (int i = 0; i < 3 * STUN_AGENT_MAX_SAVED_IDS; i++) {
        StunAgent client;
        uint8_t request[512];
        size_t length = test_valid_request(&client, request, sizeof request);
        outcome out;
        g_assert_cmpint(test_check(c, request, length, &out), ==, MOAT_ICE_CHECK_OK);
        struct sockaddr_in from = test_v4_sender();
        test_assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&from);
    }
    moat_ice_checker_free(c);
}

typedef struct {
    bool priority;
    bool controlling;
    bool controlled;
    uint16_t extra_type; /* 0: none */
    uint16_t method;
} custom_request;

/* Requests libnice's conncheck usage would never build, authenticated with
 * the right password so that only the property under test is wrong. */
static size_t build_custom(StunAgent *client, uint8_t *buffer, size_t capacity,
                           const custom_request *spec)
{
    StunMessage msg;
    test_client_init(client, true);
    g_assert_true(stun_agent_init_request(client, &msg, buffer, capacity, spec->method));
    if (spec->priority)
        g_assert_cmpint(stun_message_append32(&msg, STUN_ATTRIBUTE_PRIORITY, 7), ==, 0);
    if (spec->controlling)
        g_assert_cmpint(stun_message_append64(&msg, STUN_ATTRIBUTE_ICE_CONTROLLING, 5), ==, 0);
    if (spec->controlled)
        g_assert_cmpint(stun_message_append64(&msg, STUN_ATTRIBUTE_ICE_CONTROLLED, 5), ==, 0);
    if (spec->extra_type != 0)
        g_assert_cmpint(stun_message_append32(&msg, spec->extra_type, 1), ==, 0);
    g_assert_cmpint(stun_message_append_string(&msg, STUN_ATTRIBUTE_USERNAME, TEST_USERNAME), ==,
                    0);
    size_t length = stun_agent_finish_message(client, &msg, (const uint8_t *)TEST_LOCAL_PWD,
                                              strlen(TEST_LOCAL_PWD));
    g_assert_cmpuint(length, >, 20);
    return length;
}

static void test_custom_requests(void)
{
    static const struct {
        custom_request spec;
        moat_ice_check_result expected;
    } cases[] = {
        {{true, true, false, 0, STUN_BINDING}, MOAT_ICE_CHECK_OK},
        {{false, true, false, 0, STUN_BINDING}, MOAT_ICE_CHECK_MALFORMED}, /* no PRIORITY */
        {{true, false, false, 0, STUN_BINDING}, MOAT_ICE_CHECK_MALFORMED}, /* no role */
        {{true, true, true, 0, STUN_BINDING}, MOAT_ICE_CHECK_MALFORMED},   /* both roles */
        /* GOOG-NETWORK-INFO is comprehension-optional: ignored. */
        {{true, true, false, 0xC057, STUN_BINDING}, MOAT_ICE_CHECK_OK},
        /* An unknown comprehension-required attribute may not be ignored. */
        {{true, true, false, 0x0031, STUN_BINDING}, MOAT_ICE_CHECK_MALFORMED},
        {{true, true, false, 0, STUN_ALLOCATE}, MOAT_ICE_CHECK_NOT_REQUEST},
    };
    moat_ice_checker *c = moat_ice_checker_new();
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        StunAgent client;
        uint8_t request[512];
        size_t length = build_custom(&client, request, sizeof request, &cases[i].spec);
        outcome out;
        g_test_message("case %zu", i);
        g_assert_cmpint(test_check(c, request, length, &out), ==, cases[i].expected);
        if (cases[i].expected == MOAT_ICE_CHECK_OK) {
            struct sockaddr_in from = test_v4_sender();
            test_assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&from);
        } else {
            test_assert_nothing_written(&out);
        }
    }
    moat_ice_checker_free(c);
}

static void test_not_requests(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t message[512];
    StunMessage msg;
    outcome out;

    test_client_init(&client, true);
    g_assert_true(stun_agent_init_indication(&client, &msg, message, sizeof message, STUN_BINDING));
    size_t length = stun_agent_finish_message(&client, &msg, NULL, 0);
    g_assert_cmpint(test_check(c, message, length, &out), ==, MOAT_ICE_CHECK_NOT_REQUEST);
    test_assert_nothing_written(&out);

    /* A Binding success response (our own reply) fed back in. */
    uint8_t request[512];
    length = test_valid_request(&client, request, sizeof request);
    g_assert_cmpint(test_check(c, request, length, &out), ==, MOAT_ICE_CHECK_OK);
    uint8_t response[MOAT_ICE_REPLY_CAPACITY];
    size_t response_length = out.reply_length;
    memcpy(response, out.reply, response_length);
    g_assert_cmpint(test_check(c, response, response_length, &out), ==, MOAT_ICE_CHECK_NOT_REQUEST);
    test_assert_nothing_written(&out);
    moat_ice_checker_free(c);
}

/* A peer that claims ICE-CONTROLLED against a lite agent is told to switch
 * with an authenticated 487, which libnice's client reads as a role conflict. */
static void test_role_conflict(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, true);
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME,
                                        TEST_LOCAL_PWD, false, false, PRIORITY, 77);
    outcome out;

    g_assert_cmpint(test_check(c, request, length, &out), ==, MOAT_ICE_CHECK_ROLE_CONFLICT);
    g_assert_false(out.info.peer_controlling);
    g_assert_cmpuint(out.info.tie_breaker, ==, 77);
    g_assert_cmpuint(out.reply_length, >, 20);

    StunMessage msg;
    g_assert_cmpint(stun_agent_validate(&client, &msg, out.reply, out.reply_length, NULL, NULL), ==,
                    STUN_VALIDATION_SUCCESS);
    int code = 0;
    g_assert_cmpint(stun_message_find_error(&msg, &code), ==, STUN_MESSAGE_RETURN_SUCCESS);
    g_assert_cmpint(code, ==, 487);
    g_assert_nonnull(stun_message_find(&msg, STUN_ATTRIBUTE_MESSAGE_INTEGRITY, &(uint16_t){0}));
    struct sockaddr_storage mapped;
    socklen_t mapped_length = sizeof mapped;
    g_assert_cmpint(stun_usage_ice_conncheck_process(&msg, &mapped, &mapped_length,
                                                     STUN_USAGE_ICE_COMPATIBILITY_RFC5245),
                    ==, STUN_USAGE_ICE_RETURN_ROLE_CONFLICT);
    moat_ice_checker_free(c);
}

/* A controlling checker (a full agent's responder) answers a controlled
 * peer and tells a peer that also controls to switch. */
static void test_controlling_responder(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    moat_ice_checker_set_controlling(c, true);
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, true);
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME,
                                        TEST_LOCAL_PWD, false, false, PRIORITY, 77);
    outcome out;
    g_assert_cmpint(test_check(c, request, length, &out), ==, MOAT_ICE_CHECK_OK);
    g_assert_false(out.info.peer_controlling);
    struct sockaddr_in from = test_v4_sender();
    test_assert_reply_maps_to(&client, request, &out, (struct sockaddr *)&from);

    length = test_valid_request(&client, request, sizeof request);
    g_assert_cmpint(test_check(c, request, length, &out), ==, MOAT_ICE_CHECK_ROLE_CONFLICT);
    g_assert_true(out.info.peer_controlling);
    g_assert_cmpuint(out.reply_length, >, 20);
    moat_ice_checker_free(c);
}

static void test_invalid_arguments(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = test_valid_request(&client, request, sizeof request);
    struct sockaddr_in from = test_v4_sender();
    const struct sockaddr *f = (const struct sockaddr *)&from;
    uint8_t reply[MOAT_ICE_REPLY_CAPACITY];
    size_t reply_length;

#define CHECK(ufrag, pwd, remote, addr, addr_len, capacity)                                        \
    do {                                                                                           \
        reply_length = (capacity);                                                                 \
        g_assert_cmpint(moat_ice_checker_handle_request(c, request, length, ufrag, pwd, remote,    \
                                                        addr, addr_len, reply, &reply_length,      \
                                                        NULL),                                     \
                        ==, MOAT_ICE_CHECK_INVALID_ARGUMENT);                                      \
        g_assert_cmpuint(reply_length, ==, 0);                                                     \
    } while (0)

    /* An empty password would otherwise make libnice skip the HMAC. */
    CHECK(TEST_LOCAL_UFRAG, "", TEST_REMOTE_UFRAG, f, sizeof from, sizeof reply);
    CHECK(TEST_LOCAL_UFRAG, NULL, TEST_REMOTE_UFRAG, f, sizeof from, sizeof reply);
    CHECK("", TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, f, sizeof from, sizeof reply);
    CHECK(NULL, TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, f, sizeof from, sizeof reply);
    CHECK(TEST_LOCAL_UFRAG, TEST_LOCAL_PWD, "", f, sizeof from, sizeof reply);
    CHECK(TEST_LOCAL_UFRAG, TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, NULL, 0, sizeof reply);
    CHECK(TEST_LOCAL_UFRAG, TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, f, sizeof from - 1, sizeof reply);
    CHECK(TEST_LOCAL_UFRAG, TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, f, sizeof from,
          MOAT_ICE_REPLY_CAPACITY - 1);
    struct sockaddr_un unix_from = {.sun_family = AF_UNIX};
    CHECK(TEST_LOCAL_UFRAG, TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, (struct sockaddr *)&unix_from,
          sizeof unix_from, sizeof reply);
    struct sockaddr_in6 v6 = test_v6_sender("2001:db8::1", 1);
    CHECK(TEST_LOCAL_UFRAG, TEST_LOCAL_PWD, TEST_REMOTE_UFRAG, (struct sockaddr *)&v6,
          sizeof(struct sockaddr_in), sizeof reply);
#undef CHECK

    g_assert_cmpint(moat_ice_checker_handle_request(c, request, length, TEST_LOCAL_UFRAG,
                                                    TEST_LOCAL_PWD, NULL, f, sizeof from, reply,
                                                    NULL, NULL),
                    ==, MOAT_ICE_CHECK_INVALID_ARGUMENT);
    moat_ice_checker_free(c);
    moat_ice_checker_free(NULL);
}

static void test_result_names(void)
{
    const char *seen[MOAT_ICE_CHECK_INVALID_ARGUMENT + 1];
    for (int r = MOAT_ICE_CHECK_OK; r <= MOAT_ICE_CHECK_INVALID_ARGUMENT; r++) {
        seen[r] = moat_ice_check_result_name((moat_ice_check_result)r);
        g_assert_nonnull(seen[r]);
        g_assert_cmpstr(seen[r], !=, "unknown");
        for (int k = 0; k < r; k++)
            g_assert_cmpstr(seen[k], !=, seen[r]);
    }
    g_assert_cmpstr(moat_ice_check_result_name(MOAT_ICE_CHECK_UNAUTHORIZED), ==, "unauthorized");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ice/checker/ipv4-sender", test_ipv4_sender);
    g_test_add_func("/ice/checker/v4-mapped-sender", test_v4_mapped_sender);
    g_test_add_func("/ice/checker/ipv6-sender", test_ipv6_sender);
    g_test_add_func("/ice/checker/unknown-remote-ufrag", test_unknown_remote_ufrag);
    g_test_add_func("/ice/checker/without-use-candidate", test_without_use_candidate);
    g_test_add_func("/ice/checker/many-requests", test_many_requests);
    g_test_add_func("/ice/checker/custom-requests", test_custom_requests);
    g_test_add_func("/ice/checker/not-requests", test_not_requests);
    g_test_add_func("/ice/checker/role-conflict", test_role_conflict);
    g_test_add_func("/ice/checker/controlling-responder", test_controlling_responder);
    g_test_add_func("/ice/checker/invalid-arguments", test_invalid_arguments);
    g_test_add_func("/ice/checker/result-names", test_result_names);
    return g_test_run();
}
