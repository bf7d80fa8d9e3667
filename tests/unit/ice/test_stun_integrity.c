/* The MESSAGE-INTEGRITY check sessions run before anything else
 * (stun_integrity.c): it agrees with libnice on what libnice's own client
 * signs, for passwords up to and past an HMAC block, and refuses what is
 * forged, damaged or malformed without reading past the message. */
#include "ice/ice_checker.h"
#include "ice/stun_integrity.h"
#include "ice_check_harness.h"
#include "stun_test_bytes.h"
#include "stun_test_client.h"

#include <string.h>

#include <glib.h>

static moat_ice_check_result libnice_says(const uint8_t *request, size_t length,
                                          const char *password)
{
    moat_ice_checker *c = moat_ice_checker_new();
    struct sockaddr_in from = test_v4_sender();
    uint8_t reply[MOAT_ICE_REPLY_CAPACITY];
    size_t reply_length = sizeof reply;
    moat_ice_check_result r = moat_ice_checker_handle_request(
        c, request, length, TEST_LOCAL_UFRAG, password, TEST_REMOTE_UFRAG,
        (const struct sockaddr *)&from, sizeof from, reply, &reply_length, NULL);
    moat_ice_checker_free(c);
    return r;
}

/* Passwords of 1, 22 (RFC 8839's shortest), 64 (one block), 65 (hashed
 * first) and 256 (the longest) characters, with and without FINGERPRINT. */
static void test_agrees_with_libnice(void)
{
    static const size_t lengths[] = {1, 22, 24, 64, 65, 256};
    for (size_t i = 0; i < G_N_ELEMENTS(lengths); i++) {
        char *password = g_strnfill(lengths[i], (gchar)('a' + i));
        password[0] = 'P';
        char *other = g_strdup(password);
        other[lengths[i] - 1] ^= 1;
        moat_stun_integrity *key = moat_stun_integrity_new(password);
        moat_stun_integrity *wrong = moat_stun_integrity_new(other);
        g_assert_nonnull(key);
        g_assert_true(moat_stun_integrity_is_for(key, password));
        g_assert_false(moat_stun_integrity_is_for(key, other));
        for (int fingerprint = 0; fingerprint < 2; fingerprint++) {
            StunAgent client;
            uint8_t request[1024];
            test_client_init(&client, fingerprint);
            size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME,
                                                password, true, true, PRIORITY, TIE_BREAKER);
            /* The checker insists on FINGERPRINT; the integrity is the same. */
            g_assert_cmpint(libnice_says(request, length, password), ==,
                            fingerprint ? MOAT_ICE_CHECK_OK : MOAT_ICE_CHECK_BAD_FINGERPRINT);
            g_assert_cmpint(moat_stun_integrity_verify(key, request, length), ==,
                            MOAT_STUN_INTEGRITY_OK);
            g_assert_cmpint(moat_stun_integrity_verify(wrong, request, length), ==,
                            MOAT_STUN_INTEGRITY_BAD);
        }
        moat_stun_integrity_free(key);
        moat_stun_integrity_free(wrong);
        g_free(password);
        g_free(other);
    }
}

/* Every byte before MESSAGE-INTEGRITY (and its value) is covered; the
 * FINGERPRINT after it is not. */
static void test_every_covered_byte_counts(void)
{
    moat_stun_integrity *key = moat_stun_integrity_new(TEST_LOCAL_PWD);
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, true);
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME,
                                        TEST_LOCAL_PWD, false, true, PRIORITY, TIE_BREAKER);
    size_t fingerprint = length - 8;
    for (size_t i = 0; i < length; i++) {
        if (i == 2 || i == 3)
            continue; /* the length field: a change there makes another message */
        request[i] ^= 0x01;
        moat_stun_integrity_result r = moat_stun_integrity_verify(key, request, length);
        if (i >= fingerprint)
            g_assert_cmpint(r, ==, MOAT_STUN_INTEGRITY_OK);
        else
            g_assert_cmpint(r, !=, MOAT_STUN_INTEGRITY_OK);
        request[i] ^= 0x01;
    }
    g_assert_cmpint(moat_stun_integrity_verify(key, request, length), ==, MOAT_STUN_INTEGRITY_OK);
    moat_stun_integrity_free(key);
}

static void test_forged_and_malformed(void)
{
    moat_stun_integrity *key = moat_stun_integrity_new(TEST_LOCAL_PWD);
    StunAgent client;
    uint8_t request[512];
    test_client_init(&client, false);
    /* No MESSAGE-INTEGRITY at all. */
    size_t length = test_client_request(&client, request, sizeof request, TEST_USERNAME, NULL, true,
                                        true, PRIORITY, TIE_BREAKER);
    g_assert_cmpint(moat_stun_integrity_verify(key, request, length), ==, MOAT_STUN_INTEGRITY_BAD);
    g_assert_cmpint(moat_stun_integrity_verify(key, request, 19), ==,
                    MOAT_STUN_INTEGRITY_MALFORMED);
    g_assert_cmpint(moat_stun_integrity_verify(NULL, request, length), ==,
                    MOAT_STUN_INTEGRITY_MALFORMED);

    /* A header, then MESSAGE-INTEGRITY of 16 bytes; of 20 bytes cut short;
     * an attribute running past the end. Copies of exact size, so that a
     * read past the end is ASan's to see. */
    uint8_t m[20 + 24] = {0};
    test_put_stun_header(m, 0x0001, 20);
    test_put16(m + 20, 0x0008);
    test_put16(m + 22, 16);
    uint8_t *exact = g_memdup2(m, 40);
    g_assert_cmpint(moat_stun_integrity_verify(key, exact, 40), ==, MOAT_STUN_INTEGRITY_MALFORMED);
    g_free(exact);
    test_put16(m + 22, 20);
    exact = g_memdup2(m, 40);
    g_assert_cmpint(moat_stun_integrity_verify(key, exact, 40), ==, MOAT_STUN_INTEGRITY_MALFORMED);
    g_free(exact);
    exact = g_memdup2(m, 44);
    g_assert_cmpint(moat_stun_integrity_verify(key, exact, 44), ==, MOAT_STUN_INTEGRITY_BAD);
    g_free(exact);
    test_put16(m + 20, 0x0006);
    test_put16(m + 22, 200);
    exact = g_memdup2(m, 44);
    g_assert_cmpint(moat_stun_integrity_verify(key, exact, 44), ==, MOAT_STUN_INTEGRITY_MALFORMED);
    g_free(exact);

    char too_long[258];
    memset(too_long, 'x', 257);
    too_long[257] = '\0';
    g_assert_null(moat_stun_integrity_new(too_long));
    g_assert_null(moat_stun_integrity_new(""));
    g_assert_null(moat_stun_integrity_new(NULL));
    g_assert_false(moat_stun_integrity_is_for(NULL, TEST_LOCAL_PWD));
    moat_stun_integrity_free(NULL);
    moat_stun_integrity_free(key);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/stun/integrity/agrees-with-libnice", test_agrees_with_libnice);
    g_test_add_func("/stun/integrity/every-covered-byte", test_every_covered_byte_counts);
    g_test_add_func("/stun/integrity/forged-and-malformed", test_forged_and_malformed);
    return g_test_run();
}
