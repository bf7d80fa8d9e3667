/* moat_stun_local_ufrag: session routing by the local half of USERNAME. */
#include "ice/stun_username.h"
#include "stun_test_bytes.h"
#include "stun_test_client.h"

#include <string.h>

#include <glib.h>

static size_t request_with_username(uint8_t *buffer, size_t capacity, const char *username)
{
    StunAgent client;
    test_client_init(&client, true);
    return test_client_request(&client, buffer, capacity, username, TEST_LOCAL_PWD, true, true, 1,
                               2);
}

static void test_libnice_request(void)
{
    uint8_t request[512];
    size_t length = request_with_username(request, sizeof request, TEST_USERNAME);
    char ufrag[64];

    g_assert_cmpint(moat_stun_local_ufrag(request, length, ufrag, sizeof ufrag), ==, 0);
    g_assert_cmpstr(ufrag, ==, TEST_LOCAL_UFRAG);
    /* Exactly enough room for 8 characters and the NUL, then one byte less. */
    g_assert_cmpint(moat_stun_local_ufrag(request, length, ufrag, 9), ==, 0);
    g_assert_cmpstr(ufrag, ==, TEST_LOCAL_UFRAG);
    g_assert_cmpint(moat_stun_local_ufrag(request, length, ufrag, 8), ==, -1);
    g_assert_cmpstr(ufrag, ==, "");
    g_assert_cmpint(moat_stun_local_ufrag(request, length, NULL, 8), ==, -1);
    g_assert_cmpint(moat_stun_local_ufrag(request, length, ufrag, 0), ==, -1);
}

static void test_bad_usernames(void)
{
    static const char *const usernames[] = {
        TEST_LOCAL_UFRAG,        /* no ':' */
        (":" TEST_REMOTE_UFRAG), /* empty local part */
        "Lk9f Qm2x:peer",        /* space is not an ice-char */
        "Lk9f\x01Qm2:peer",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(usernames); i++) {
        uint8_t request[512];
        size_t length = request_with_username(request, sizeof request, usernames[i]);
        char ufrag[64];
        g_assert_cmpint(moat_stun_local_ufrag(request, length, ufrag, sizeof ufrag), ==, -1);
    }

    /* A peer part may be empty here: routing only needs our half. */
    uint8_t request[512];
    size_t length = request_with_username(request, sizeof request, "ab+/:");
    char ufrag[64];
    g_assert_cmpint(moat_stun_local_ufrag(request, length, ufrag, sizeof ufrag), ==, 0);
    g_assert_cmpstr(ufrag, ==, "ab+/");
}

static void test_no_username(void)
{
    uint8_t request[512];
    size_t length = request_with_username(request, sizeof request, NULL);
    char ufrag[64];
    g_assert_cmpint(moat_stun_local_ufrag(request, length, ufrag, sizeof ufrag), ==, -1);
}

static void test_hand_made(void)
{
    uint8_t message[64] = {0};
    char ufrag[64];

    /* USERNAME after MESSAGE-INTEGRITY is not covered by it: ignored. */
    test_put_stun_header(message, 0x0001, 36);
    test_put16(message + 20, 0x0008);
    test_put16(message + 22, 20);
    test_put16(message + 44, 0x0006);
    test_put16(message + 46, 6);
    memcpy(message + 48, "abcd:e", 6);
    g_assert_cmpint(moat_stun_local_ufrag(message, 56, ufrag, sizeof ufrag), ==, -1);
    /* The same USERNAME first is found. */
    memset(message + 20, 0, 44);
    test_put16(message + 20, 0x0006);
    test_put16(message + 22, 6);
    memcpy(message + 24, "abcd:e", 6);
    test_put16(message + 32, 0x0008);
    test_put16(message + 34, 20);
    g_assert_cmpint(moat_stun_local_ufrag(message, 56, ufrag, sizeof ufrag), ==, 0);
    g_assert_cmpstr(ufrag, ==, "abcd");

    /* USERNAME claiming more bytes than the datagram has. */
    memset(message, 0, sizeof message);
    test_put_stun_header(message, 0x0001, 12);
    test_put16(message + 20, 0x0006);
    test_put16(message + 22, 400);
    memcpy(message + 24, "abcd:efg", 8);
    g_assert_cmpint(moat_stun_local_ufrag(message, 32, ufrag, sizeof ufrag), ==, -1);

    /* Not STUN at all. */
    message[0] = 0x80;
    g_assert_cmpint(moat_stun_local_ufrag(message, 32, ufrag, sizeof ufrag), ==, -1);
}

static void test_truncated_everywhere(void)
{
    uint8_t request[512];
    size_t length = request_with_username(request, sizeof request, TEST_USERNAME);
    char ufrag[64];

    for (size_t cut = 0; cut < length; cut++) {
        uint8_t *copy = g_memdup2(request, cut);
        g_assert_cmpint(moat_stun_local_ufrag(copy, cut, ufrag, sizeof ufrag), ==, -1);
        g_free(copy);
    }
    /* With the length field patched to each cut, USERNAME (libnice puts it
     * just before MESSAGE-INTEGRITY and FINGERPRINT, 32 bytes) is found
     * exactly when the cut keeps all of it. */
    size_t username_end = length - 32;
    for (size_t cut = 20; cut < length; cut += 4) {
        uint8_t *copy = g_memdup2(request, cut);
        copy[2] = (uint8_t)((cut - 20) >> 8);
        copy[3] = (uint8_t)(cut - 20);
        int r = moat_stun_local_ufrag(copy, cut, ufrag, sizeof ufrag);
        g_assert_cmpint(r, ==, cut >= username_end ? 0 : -1);
        if (r == 0)
            g_assert_cmpstr(ufrag, ==, TEST_LOCAL_UFRAG);
        g_free(copy);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ice/stun-username/libnice-request", test_libnice_request);
    g_test_add_func("/ice/stun-username/bad-usernames", test_bad_usernames);
    g_test_add_func("/ice/stun-username/no-username", test_no_username);
    g_test_add_func("/ice/stun-username/hand-made", test_hand_made);
    g_test_add_func("/ice/stun-username/truncated-everywhere", test_truncated_everywhere);
    return g_test_run();
}
