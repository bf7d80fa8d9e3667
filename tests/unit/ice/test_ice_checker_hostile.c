/* moat_ice_checker against forged, damaged and malformed requests: none is
 * accepted, none draws a reply, none makes it (or libnice) read out of
 * bounds. */
#include "ice/ice_checker.h"
#include "ice_check_harness.h"
#include "stun_test_bytes.h"
#include "stun_test_client.h"

#include <string.h>

#include <glib.h>

static void test_wrong_password(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, true);
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME,
                                        "not-the-right-password!!", true, true, PRIORITY, 1);
    outcome out;

    g_assert_cmpint(test_check(c, request, length, &out), ==, MOAT_ICE_CHECK_UNAUTHORIZED);
    test_assert_nothing_written(&out);
    moat_ice_checker_free(c);
}

static void test_wrong_ufrags(void)
{
    static const char *const usernames[] = {
        "Lk9fQm2y:" TEST_REMOTE_UFRAG, /* other local ufrag */
        TEST_LOCAL_UFRAG ":rEmX",      /* other remote ufrag */
        TEST_LOCAL_UFRAG,              /* no separator */
        TEST_LOCAL_UFRAG ":",          /* empty remote part */
        TEST_LOCAL_UFRAG "x:" TEST_REMOTE_UFRAG,
        ":" TEST_REMOTE_UFRAG,
        TEST_REMOTE_UFRAG ":" TEST_LOCAL_UFRAG, /* halves swapped */
    };
    moat_ice_checker *c = moat_ice_checker_new();
    for (size_t i = 0; i < G_N_ELEMENTS(usernames); i++) {
        StunAgent client;
        uint8_t request[512];
        test_client_init(&client, true);
        size_t length = test_client_request(&client, request, sizeof request, usernames[i],
                                            TEST_LOCAL_PWD, true, true, PRIORITY, 1);
        outcome out;
        g_assert_cmpint(test_check(c, request, length, &out), ==, MOAT_ICE_CHECK_UNAUTHORIZED);
        test_assert_nothing_written(&out);
    }
    moat_ice_checker_free(c);
}

static void test_missing_fingerprint(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, false);
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME,
                                        TEST_LOCAL_PWD, true, true, PRIORITY, 1);
    outcome out;

    g_assert_cmpint(test_check(c, request, length, &out), ==, MOAT_ICE_CHECK_BAD_FINGERPRINT);
    test_assert_nothing_written(&out);
    moat_ice_checker_free(c);
}

static void test_wrong_fingerprint(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = test_valid_request(&client, request, sizeof request);
    request[length - 1] ^= 0x01;
    outcome out;

    g_assert_cmpint(test_check(c, request, length, &out), ==, MOAT_ICE_CHECK_BAD_FINGERPRINT);
    test_assert_nothing_written(&out);
    moat_ice_checker_free(c);
}

static void test_missing_integrity(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, true);
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME, NULL, true,
                                        true, PRIORITY, 1);
    outcome out;

    g_assert_cmpint(test_check(c, request, length, &out), ==, MOAT_ICE_CHECK_UNAUTHORIZED);
    test_assert_nothing_written(&out);
    moat_ice_checker_free(c);
}

static void test_missing_username(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, true);
    size_t length = test_client_request(&client, request, sizeof request, NULL, TEST_LOCAL_PWD,
                                        true, true, PRIORITY, 1);
    outcome out;

    g_assert_cmpint(test_check(c, request, length, &out), ==, MOAT_ICE_CHECK_UNAUTHORIZED);
    test_assert_nothing_written(&out);
    moat_ice_checker_free(c);
}

static void test_truncated_everywhere(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = test_valid_request(&client, request, sizeof request);
    outcome out;

    for (size_t cut = 0; cut < length; cut++) {
        /* A heap copy of exactly cut bytes lets ASan see any overread. */
        uint8_t *copy = g_memdup2(request, cut);
        g_assert_cmpint(test_check(c, copy, cut, &out), ==, MOAT_ICE_CHECK_MALFORMED);
        test_assert_nothing_written(&out);
        g_free(copy);
    }
    /* Also with the header's length field rewritten to match the cut, so the
     * attribute walk itself meets the truncation. */
    for (size_t cut = 20; cut < length; cut += 4) {
        uint8_t *copy = g_memdup2(request, cut);
        copy[2] = (uint8_t)((cut - 20) >> 8);
        copy[3] = (uint8_t)(cut - 20);
        g_assert_cmpint(test_check(c, copy, cut, &out), !=, MOAT_ICE_CHECK_OK);
        test_assert_nothing_written(&out);
        g_free(copy);
    }
    moat_ice_checker_free(c);
}

static void test_every_bit_flip_rejected(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t request[512];
    size_t length = test_valid_request(&client, request, sizeof request);
    outcome out;

    for (size_t i = 0; i < length * 8; i++) {
        uint8_t *copy = g_memdup2(request, length);
        copy[i / 8] ^= (uint8_t)(1u << (i % 8));
        moat_ice_check_result r = test_check(c, copy, length, &out);
        g_assert_cmpint(r, !=, MOAT_ICE_CHECK_OK);
        g_assert_cmpint(r, !=, MOAT_ICE_CHECK_ROLE_CONFLICT);
        test_assert_nothing_written(&out);
        g_free(copy);
    }
    moat_ice_checker_free(c);
}

static void test_attribute_past_end(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    uint8_t *request = g_malloc0(32);
    test_put_stun_header(request, 0x0001, 12);
    test_put16(request + 20, 0x0006); /* USERNAME claiming 200 bytes, 8 present */
    test_put16(request + 22, 200);
    memcpy(request + 24, TEST_LOCAL_UFRAG, 8);
    outcome out;

    g_assert_cmpint(test_check(c, request, 32, &out), ==, MOAT_ICE_CHECK_MALFORMED);
    test_assert_nothing_written(&out);

    /* A valid PRIORITY, then an attribute whose 8-byte value is missing. */
    memset(request, 0, 32);
    test_put_stun_header(request, 0x0001, 12);
    test_put16(request + 20, 0x0024);
    test_put16(request + 22, 4);
    test_put16(request + 28, 0x0025);
    test_put16(request + 30, 8);
    g_assert_cmpint(test_check(c, request, 32, &out), ==, MOAT_ICE_CHECK_MALFORMED);
    test_assert_nothing_written(&out);
    g_free(request);
    moat_ice_checker_free(c);
}

/* libnice hashes 20 bytes from MESSAGE-INTEGRITY whatever its length says;
 * a short one placed last, behind a correct FINGERPRINT so that libnice would
 * get that far, must be refused before it reads 8 bytes past the datagram.
 * (libnice is not instrumented, so ASan cannot see that read: the result
 * code is what proves the refusal.) */
static void test_short_integrity_attribute(void)
{
    moat_ice_checker *c = moat_ice_checker_new();
    StunAgent client;
    uint8_t full[512];
    size_t length = test_valid_request(&client, full, sizeof full);
    /* Keep everything before MESSAGE-INTEGRITY, then put a 4-byte one and a
     * FINGERPRINT. */
    size_t integrity_at = length - 8 - 24;
    uint32_t libnice_crc = test_stun_fingerprint(full, length - 8);
    g_assert_cmpuint(full[length - 4], ==, (uint8_t)(libnice_crc >> 24));
    g_assert_cmpuint(full[length - 1], ==, (uint8_t)libnice_crc);
    g_assert_cmpuint(full[integrity_at], ==, 0x00);
    g_assert_cmpuint(full[integrity_at + 1], ==, 0x08);
    size_t short_length = integrity_at + 8 + 8;
    uint8_t *request = g_malloc0(short_length);
    memcpy(request, full, integrity_at);
    test_put16(request + 2, (uint16_t)(short_length - 20));
    test_put16(request + integrity_at, 0x0008);
    test_put16(request + integrity_at + 2, 4);
    test_put16(request + integrity_at + 8, 0x8028);
    test_put16(request + integrity_at + 10, 4);
    uint32_t crc = test_stun_fingerprint(request, integrity_at + 8);
    test_put16(request + integrity_at + 12, (uint16_t)(crc >> 16));
    test_put16(request + integrity_at + 14, (uint16_t)crc);
    outcome out;

    g_assert_cmpint(test_check(c, request, short_length, &out), ==, MOAT_ICE_CHECK_MALFORMED);
    test_assert_nothing_written(&out);
    g_free(request);
    moat_ice_checker_free(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ice/checker-hostile/wrong-password", test_wrong_password);
    g_test_add_func("/ice/checker-hostile/wrong-ufrags", test_wrong_ufrags);
    g_test_add_func("/ice/checker-hostile/missing-fingerprint", test_missing_fingerprint);
    g_test_add_func("/ice/checker-hostile/wrong-fingerprint", test_wrong_fingerprint);
    g_test_add_func("/ice/checker-hostile/missing-integrity", test_missing_integrity);
    g_test_add_func("/ice/checker-hostile/missing-username", test_missing_username);
    g_test_add_func("/ice/checker-hostile/truncated-everywhere", test_truncated_everywhere);
    g_test_add_func("/ice/checker-hostile/every-bit-flip-rejected", test_every_bit_flip_rejected);
    g_test_add_func("/ice/checker-hostile/attribute-past-end", test_attribute_past_end);
    g_test_add_func("/ice/checker-hostile/short-integrity-attribute",
                    test_short_integrity_attribute);
    return g_test_run();
}
