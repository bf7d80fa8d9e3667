/* The controlling side (ice/ice_client.h) against the gateway's own ICE-lite
 * responder (ice/ice_checker.h): a full round trip, then what a client must
 * not accept. */
#include "ice/ice_checker.h"
#include "ice/ice_client.h"

#include <arpa/inet.h>
#include <string.h>

#include <glib.h>
#include <zlib.h>

#define CLIENT_UFRAG "cLiE"
#define CLIENT_PWD   "clientpasswordclientpass"
#define SERVER_UFRAG "Lk9fQm2x"
#define SERVER_PWD   "p4ssw0rdP4SSW0RDpassw0rd"

static moat_ice_client *new_client(void)
{
    moat_ice_client_credentials credentials = {
        .local_ufrag = CLIENT_UFRAG,
        .local_pwd = CLIENT_PWD,
        .remote_ufrag = SERVER_UFRAG,
        .remote_pwd = SERVER_PWD,
        .tie_breaker = 0x1122334455667788ull,
    };
    moat_ice_client *c = moat_ice_client_new(&credentials);
    g_assert_nonnull(c);
    return c;
}

static struct sockaddr_in client_address(void)
{
    struct sockaddr_in from = {.sin_family = AF_INET, .sin_port = htons(40000)};
    inet_pton(AF_INET, "127.0.0.7", &from.sin_addr);
    return from;
}

/* The checker's answer to request, which it must accept. */
static size_t answer(moat_ice_checker *checker, const uint8_t *request, size_t length,
                     uint8_t *reply, moat_ice_check_info *info)
{
    struct sockaddr_in from = client_address();
    size_t reply_length = MOAT_ICE_REPLY_CAPACITY;
    g_assert_cmpint(moat_ice_checker_handle_request(
                        checker, request, length, SERVER_UFRAG, SERVER_PWD, CLIENT_UFRAG,
                        (struct sockaddr *)&from, sizeof from, reply, &reply_length, info),
                    ==, MOAT_ICE_CHECK_OK);
    return reply_length;
}

static void test_round_trip(void)
{
    moat_ice_client *client = new_client();
    moat_ice_checker *checker = moat_ice_checker_new();
    uint8_t request[MOAT_ICE_CLIENT_REQUEST_CAPACITY], reply[MOAT_ICE_REPLY_CAPACITY];
    uint32_t priority = moat_ice_client_prflx_priority(65535, 1);
    size_t length =
        moat_ice_client_build_request(client, priority, true, true, request, sizeof request);
    g_assert_cmpuint(length, >, 20);

    moat_ice_check_info info;
    size_t reply_length = answer(checker, request, length, reply, &info);
    g_assert_true(info.use_candidate);
    g_assert_true(info.peer_controlling);
    g_assert_cmpuint(info.priority, ==, priority);
    g_assert_cmpuint(info.tie_breaker, ==, 0x1122334455667788ull);

    struct sockaddr_storage mapped;
    socklen_t mapped_length = sizeof mapped;
    g_assert_cmpint(
        moat_ice_client_handle_response(client, reply, reply_length, &mapped, &mapped_length), ==,
        MOAT_ICE_RESPONSE_SUCCESS);
    struct sockaddr_in expected = client_address(), got;
    g_assert_cmpint(mapped.ss_family, ==, AF_INET);
    memcpy(&got, &mapped, sizeof got);
    g_assert_cmpuint(got.sin_port, ==, expected.sin_port);
    g_assert_cmpuint(got.sin_addr.s_addr, ==, expected.sin_addr.s_addr);

    /* The transaction is over: the same answer again matches nothing. */
    g_assert_cmpint(moat_ice_client_handle_response(client, reply, reply_length, NULL, NULL), ==,
                    MOAT_ICE_RESPONSE_UNMATCHED);
    moat_ice_checker_free(checker);
    moat_ice_client_free(client);
}

static void test_untracked_request_draws_no_match(void)
{
    moat_ice_client *client = new_client();
    moat_ice_checker *checker = moat_ice_checker_new();
    uint8_t request[MOAT_ICE_CLIENT_REQUEST_CAPACITY], reply[MOAT_ICE_REPLY_CAPACITY];
    size_t length = moat_ice_client_build_request(client, 1, false, false, request, sizeof request);
    size_t reply_length = answer(checker, request, length, reply, NULL);
    g_assert_cmpint(moat_ice_client_handle_response(client, reply, reply_length, NULL, NULL), ==,
                    MOAT_ICE_RESPONSE_UNMATCHED);
    moat_ice_checker_free(checker);
    moat_ice_client_free(client);
}

/* Rewrites FINGERPRINT (the last attribute) after a change, as an attacker
 * who edits a response can: only MESSAGE-INTEGRITY then tells. */
static void refresh_fingerprint(uint8_t *message, size_t length)
{
    uint32_t crc = (uint32_t)crc32(0L, message, (uInt)(length - 8)) ^ 0x5354554eu;
    message[length - 4] = (uint8_t)(crc >> 24);
    message[length - 3] = (uint8_t)(crc >> 16);
    message[length - 2] = (uint8_t)(crc >> 8);
    message[length - 1] = (uint8_t)crc;
}

static void test_altered_response_is_unauthorized(void)
{
    moat_ice_client *client = new_client();
    moat_ice_checker *checker = moat_ice_checker_new();
    uint8_t request[MOAT_ICE_CLIENT_REQUEST_CAPACITY], reply[MOAT_ICE_REPLY_CAPACITY];
    size_t length = moat_ice_client_build_request(client, 1, true, true, request, sizeof request);
    size_t reply_length = answer(checker, request, length, reply, NULL);

    uint8_t altered[MOAT_ICE_REPLY_CAPACITY];
    memcpy(altered, reply, reply_length);
    altered[27] ^= 0x01; /* inside XOR-MAPPED-ADDRESS, the first attribute */
    refresh_fingerprint(altered, reply_length);
    g_assert_cmpint(moat_ice_client_handle_response(client, altered, reply_length, NULL, NULL), ==,
                    MOAT_ICE_RESPONSE_UNAUTHORIZED);
    /* Without a fresh FINGERPRINT it is not even STUN to the client. */
    altered[27] ^= 0x01;
    altered[28] ^= 0x01;
    g_assert_cmpint(moat_ice_client_handle_response(client, altered, reply_length, NULL, NULL), ==,
                    MOAT_ICE_RESPONSE_MALFORMED);
    /* The forgeries left the transaction open for the real answer. */
    g_assert_cmpint(moat_ice_client_handle_response(client, reply, reply_length, NULL, NULL), ==,
                    MOAT_ICE_RESPONSE_SUCCESS);
    g_assert_cmpint(moat_ice_client_handle_response(client, request, length, NULL, NULL), ==,
                    MOAT_ICE_RESPONSE_MALFORMED);
    moat_ice_checker_free(checker);
    moat_ice_client_free(client);
}

static void test_oldest_outstanding_forgotten(void)
{
    moat_ice_client *client = new_client();
    moat_ice_checker *checker = moat_ice_checker_new();
    enum { N = MOAT_ICE_CLIENT_OUTSTANDING + 8 };
    static uint8_t replies[N][MOAT_ICE_REPLY_CAPACITY];
    size_t lengths[N];
    for (int i = 0; i < N; i++) {
        uint8_t request[MOAT_ICE_CLIENT_REQUEST_CAPACITY];
        size_t length =
            moat_ice_client_build_request(client, 1, true, true, request, sizeof request);
        g_assert_cmpuint(length, >, 0);
        lengths[i] = answer(checker, request, length, replies[i], NULL);
    }
    for (int i = 0; i < N; i++)
        g_assert_cmpint(moat_ice_client_handle_response(client, replies[i], lengths[i], NULL, NULL),
                        ==,
                        i < N - MOAT_ICE_CLIENT_OUTSTANDING ? MOAT_ICE_RESPONSE_UNMATCHED
                                                            : MOAT_ICE_RESPONSE_SUCCESS);
    moat_ice_checker_free(checker);
    moat_ice_client_free(client);
}

static void test_bad_arguments(void)
{
    moat_ice_client_credentials empty = {.local_ufrag = "",
                                         .local_pwd = CLIENT_PWD,
                                         .remote_ufrag = SERVER_UFRAG,
                                         .remote_pwd = SERVER_PWD};
    g_assert_null(moat_ice_client_new(&empty));
    g_assert_null(moat_ice_client_new(NULL));
    char long_ufrag[300];
    memset(long_ufrag, 'a', sizeof long_ufrag - 1);
    long_ufrag[sizeof long_ufrag - 1] = '\0';
    moat_ice_client_credentials too_long = {.local_ufrag = CLIENT_UFRAG,
                                            .local_pwd = CLIENT_PWD,
                                            .remote_ufrag = long_ufrag,
                                            .remote_pwd = SERVER_PWD};
    g_assert_null(moat_ice_client_new(&too_long));

    moat_ice_client *client = new_client();
    uint8_t small[64];
    g_assert_cmpuint(moat_ice_client_build_request(client, 1, true, true, small, sizeof small), ==,
                     0);
    g_assert_cmpint(moat_ice_client_handle_response(client, small, 0, NULL, NULL), ==,
                    MOAT_ICE_RESPONSE_MALFORMED);
    moat_ice_client_free(client);
    g_assert_cmpuint(moat_ice_client_prflx_priority(65535, 1), ==, (110u << 24) | 0xFFFF00u | 255u);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ice_client/round_trip", test_round_trip);
    g_test_add_func("/ice_client/untracked", test_untracked_request_draws_no_match);
    g_test_add_func("/ice_client/altered_response", test_altered_response_is_unauthorized);
    g_test_add_func("/ice_client/oldest_forgotten", test_oldest_outstanding_forgotten);
    g_test_add_func("/ice_client/bad_arguments", test_bad_arguments);
    return g_test_run();
}
