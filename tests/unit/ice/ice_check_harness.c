/* Shared by the checker tests: run the checker with the test session's
 * credentials and judge what it wrote. */
#include "ice_check_harness.h"
#include "stun_test_client.h"

#include <arpa/inet.h>
#include <string.h>

#include <glib.h>
#include <stun/stunmessage.h>
#include <stun/usages/ice.h>

struct sockaddr_in test_v4_sender(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(40000)};
    g_assert_cmpint(inet_pton(AF_INET, "198.51.100.7", &a.sin_addr), ==, 1);
    return a;
}

struct sockaddr_in6 test_v6_sender(const char *text, uint16_t port)
{
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
    g_assert_cmpint(inet_pton(AF_INET6, text, &a.sin6_addr), ==, 1);
    return a;
}

/* Runs the checker with the test session's credentials; the reply buffer is
 * pre-filled so that "nothing written" can be asserted byte for byte. */
moat_ice_check_result test_check_with(moat_ice_checker *c, const uint8_t *request, size_t length,
                                      const char *remote_ufrag, const struct sockaddr *from,
                                      socklen_t from_length, outcome *out)
{
    memset(out->reply, 0xA5, sizeof out->reply);
    out->reply_length = sizeof out->reply;
    memset(&out->info, 0x5A, sizeof out->info);
    out->result = moat_ice_checker_handle_request(c, request, length, TEST_LOCAL_UFRAG,
                                                  TEST_LOCAL_PWD, remote_ufrag, from, from_length,
                                                  out->reply, &out->reply_length, &out->info);
    return out->result;
}

moat_ice_check_result test_check(moat_ice_checker *c, const uint8_t *request, size_t length,
                                 outcome *out)
{
    struct sockaddr_in from = test_v4_sender();
    return test_check_with(c, request, length, TEST_REMOTE_UFRAG, (struct sockaddr *)&from,
                           sizeof from, out);
}

void test_assert_nothing_written(const outcome *out)
{
    g_assert_cmpuint(out->reply_length, ==, 0);
    for (size_t i = 0; i < sizeof out->reply; i++)
        g_assert_cmpuint(out->reply[i], ==, 0xA5);
    moat_ice_check_info zero = {0};
    g_assert_cmpmem(&out->info, sizeof out->info, &zero, sizeof zero);
}

/* The reply must pass the peer's own validation (MESSAGE-INTEGRITY with the
 * password it used, FINGERPRINT, transaction) and map to the sender. */
void test_assert_reply_maps_to(StunAgent *client, const uint8_t *request, const outcome *out,
                               const struct sockaddr *expected)
{
    StunMessage msg;
    g_assert_cmpint(stun_agent_validate(client, &msg, out->reply, out->reply_length, NULL, NULL),
                    ==, STUN_VALIDATION_SUCCESS);
    g_assert_cmpint(stun_message_get_class(&msg), ==, STUN_RESPONSE);
    g_assert_cmpint(stun_message_get_method(&msg), ==, STUN_BINDING);
    g_assert_cmpmem(out->reply + 8, 12, request + 8, 12);

    struct sockaddr_storage mapped;
    socklen_t mapped_length = sizeof mapped;
    g_assert_cmpint(stun_usage_ice_conncheck_process(&msg, &mapped, &mapped_length,
                                                     STUN_USAGE_ICE_COMPATIBILITY_RFC5245),
                    ==, STUN_USAGE_ICE_RETURN_SUCCESS);
    g_assert_cmpint(mapped.ss_family, ==, expected->sa_family);
    if (expected->sa_family == AF_INET) {
        const struct sockaddr_in *want = (const struct sockaddr_in *)expected;
        const struct sockaddr_in *got = (const struct sockaddr_in *)&mapped;
        g_assert_cmpuint(mapped_length, ==, sizeof *got);
        g_assert_cmpuint(got->sin_port, ==, want->sin_port);
        g_assert_cmpuint(got->sin_addr.s_addr, ==, want->sin_addr.s_addr);
    } else {
        const struct sockaddr_in6 *want = (const struct sockaddr_in6 *)expected;
        const struct sockaddr_in6 *got = (const struct sockaddr_in6 *)&mapped;
        g_assert_cmpuint(mapped_length, ==, sizeof *got);
        g_assert_cmpuint(got->sin6_port, ==, want->sin6_port);
        g_assert_cmpmem(&got->sin6_addr, 16, &want->sin6_addr, 16);
    }
}

size_t test_valid_request(StunAgent *client, uint8_t *buffer, size_t capacity)
{
    test_client_init(client, true);
    return test_client_request(client, buffer, capacity, TEST_USERNAME, TEST_LOCAL_PWD, true, true,
                               PRIORITY, TIE_BREAKER);
}
