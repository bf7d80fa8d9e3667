/* a=crypto (RFC 4568): the RFC's own examples, what Moat writes parsing back
 * to the same key, the SDES policy of ng requests, and hostile values. */
#include <glib.h>
#include <string.h>

#include "sdp/sdp_crypto.h"

static moat_sdp_span span_of(const char *text)
{
    return (moat_sdp_span){text, strlen(text)};
}

static void parse_ok(const char *value, moat_sdp_crypto *out)
{
    const char *why = NULL;
    int status = moat_sdp_crypto_parse(span_of(value), out, &why);
    if (status != 0)
        g_error("\"%s\": status %d (%s)", value, status, why ? why : "");
}

static void parse_fails(const char *value, const char *expected)
{
    moat_sdp_crypto c;
    const char *why = "";
    g_assert_cmpint(moat_sdp_crypto_parse(span_of(value), &c, &why), ==, -1);
    if (strstr(why, expected) == NULL)
        g_error("\"%s\": \"%s\" does not contain \"%s\"", value, why, expected);
}

/* RFC 4568 §4 and §9.1 examples. */
static void test_rfc_examples(void)
{
    moat_sdp_crypto c;
    parse_ok("1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^20|1:4",
             &c);
    g_assert_cmpuint(c.tag, ==, 1);
    g_assert_cmpint(c.suite, ==, MOAT_SRTP_PROFILE_AES128_CM_SHA1_80);
    g_assert_cmpuint(c.key_salt_length, ==, 30);
    /* "PS1u" is 0x3d 0x2d 0x6e; the last quantum "aVBR" is 0x69 0x50 0x51. */
    g_assert_cmphex(c.key_salt[0], ==, 0x3d);
    g_assert_cmphex(c.key_salt[1], ==, 0x2d);
    g_assert_cmphex(c.key_salt[2], ==, 0x6e);
    g_assert_cmphex(c.key_salt[29], ==, 0x51);
    g_assert_cmpuint(c.lifetime, ==, 1u << 20);
    g_assert_cmpuint(c.mki, ==, 1);
    g_assert_cmpuint(c.mki_length, ==, 4);
    g_assert_false(moat_sdp_crypto_usable(&c)); /* MKI: Moat keys without one */

    parse_ok("1 AES_CM_128_HMAC_SHA1_32 inline:NzB4d1BINUAvLEw6UzF3WSJ+PSdFcGdUJShpX1Zj|2^20|1:32",
             &c);
    g_assert_cmpint(c.suite, ==, MOAT_SRTP_PROFILE_AES128_CM_SHA1_32);
    g_assert_cmpuint(c.mki_length, ==, 32);

    parse_ok("1 AES_CM_128_HMAC_SHA1_80 "
             "inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz|2^20|1:4;"
             "inline:QUJjZGVmMTIzNDU2Nzg5QUJDREUwMTIzNDU2Nzg5|2^20|2:4 FEC_ORDER=FEC_SRTP",
             &c);
    g_assert_true(c.more_keys);
    g_assert_true(c.session_params);
    g_assert_false(moat_sdp_crypto_usable(&c));

    /* What SIP phones send: no lifetime, no MKI. Usable. */
    parse_ok("2 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR", &c);
    g_assert_cmpuint(c.tag, ==, 2);
    g_assert_cmpuint(c.lifetime, ==, 0);
    g_assert_true(moat_sdp_crypto_usable(&c));
    parse_ok("3 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|1048576",
             &c);
    g_assert_cmpuint(c.lifetime, ==, 1048576);
    g_assert_true(moat_sdp_crypto_usable(&c));
    parse_ok("4 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|7:1", &c);
    g_assert_cmpuint(c.mki, ==, 7);
    g_assert_cmpuint(c.lifetime, ==, 0);

    /* AES-GCM: 28 bytes, with or without base64 padding. */
    parse_ok("5 AEAD_AES_128_GCM inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw==", &c);
    g_assert_cmpint(c.suite, ==, MOAT_SRTP_PROFILE_AEAD_AES_128_GCM);
    g_assert_cmpuint(c.key_salt_length, ==, 28);
    g_assert_cmphex(c.key_salt[27], ==, 0x1b);
    parse_ok("5 AEAD_AES_128_GCM inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw", &c);
    g_assert_cmpuint(c.key_salt_length, ==, 28);
    moat_sdp_crypto_clear(&c);
    g_assert_cmpuint(c.key_salt_length, ==, 0);
    g_assert_cmphex(c.key_salt[27], ==, 0);
}

static void test_ignored_suites(void)
{
    moat_sdp_crypto c;
    const char *why = NULL;
    const char *values[] = {
        "1 AES_256_CM_HMAC_SHA1_80 inline:whatever",
        "1 F8_128_HMAC_SHA1_80 inline:x",
        "1 aes_cm_128_hmac_sha1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(values); i++)
        g_assert_cmpint(moat_sdp_crypto_parse(span_of(values[i]), &c, &why), ==, 1);
}

static void test_hostile(void)
{
    parse_fails("", "bad tag");
    parse_fails("x AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR",
                "bad tag");
    parse_fails("-1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR",
                "bad tag");
    parse_fails(
        "1000000000 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR",
        "bad tag");
    parse_fails("99999999999999999999999 AES_CM_128_HMAC_SHA1_80 inline:x", "bad tag");
    parse_fails("1", "missing crypto-suite");
    parse_fails("1 AES_CM_128_HMAC_SHA1_80", "missing key parameters");
    parse_fails("1 AES_CM_128_HMAC_SHA1_80 uri:http://example.com/key", "not inline");
    parse_fails("1 AES_CM_128_HMAC_SHA1_80 INLINE:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR",
                "not inline");
    const char *bad_keys[] = {
        "inline:",
        "inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVB",      /* 29 bytes and a dangling char */
        "inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaV",       /* 28 bytes + 2 chars */
        "inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBRAAAA", /* 33 bytes */
        "inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaV!R",     /* not base64 */
        "inline:PS1uQCVeeCFCanVmcjkp Pywj",
        "inline:PS1uQCVe=CFCanVmcjkpPywjNWhcYD0mXXtxaVBR",  /* padding inside */
        "inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR=", /* padding after a full quantum */
        "inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGx==",  /* non-zero bits in the padding */
        "inline:====",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad_keys); i++) {
        char *value = g_strdup_printf("1 AES_CM_128_HMAC_SHA1_80 %s", bad_keys[i]);
        moat_sdp_crypto c;
        const char *why = "";
        int status = moat_sdp_crypto_parse(span_of(value), &c, &why);
        /* A space splits the key parameters: then the rest is a session
         * parameter and the key is short. Either way: refused. */
        if (status != -1)
            g_error("\"%s\" accepted", value);
        g_free(value);
    }
    /* A 30-byte key on the GCM suite (28) is the wrong length. */
    parse_fails("1 AEAD_AES_128_GCM inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR", "length");
    const char *bad_params[] = {
        "|",         "|2^0",       "|2^49",    "|2^",        "|0",          "|281474976710657",
        "|x",        "|1:0",       "|1:129",   "|:4",        "|1:",         "|4294967296:4",
        "|1:4|2^20", "|2^20|2^20", "|1:4|1:4", "|2^20|1:4|", "|2^20|1:4|1",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad_params); i++) {
        char *value = g_strdup_printf(
            "1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR%s",
            bad_params[i]);
        moat_sdp_crypto c;
        const char *why = "";
        if (moat_sdp_crypto_parse(span_of(value), &c, &why) != -1)
            g_error("\"%s\" accepted", value);
        g_assert_true(strstr(why, "MKI") || strstr(why, "lifetime"));
        g_free(value);
    }
    /* Not NUL-terminated: the parser stays inside the span. */
    const char text[] = "1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR";
    char *copy = g_memdup2(text, sizeof text - 1);
    moat_sdp_crypto c;
    const char *why = NULL;
    g_assert_cmpint(moat_sdp_crypto_parse((moat_sdp_span){copy, sizeof text - 1}, &c, &why), ==, 0);
    g_assert_cmpint(moat_sdp_crypto_parse((moat_sdp_span){copy, sizeof text - 2}, &c, &why), ==,
                    -1);
    g_free(copy);
}

static void test_write_round_trip(void)
{
    moat_sdp_crypto c = {
        .tag = 7, .suite = MOAT_SRTP_PROFILE_AEAD_AES_128_GCM, .key_salt_length = 28};
    for (size_t i = 0; i < 28; i++)
        c.key_salt[i] = (uint8_t)i;
    GString *out = g_string_new(NULL);
    moat_sdp_crypto_write(out, &c);
    g_assert_cmpstr(
        out->str, ==,
        "a=crypto:7 AEAD_AES_128_GCM inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw==\r\n");
    moat_sdp_crypto again;
    moat_sdp_span value = {out->str + 9, out->len - 11};
    const char *why = NULL;
    g_assert_cmpint(moat_sdp_crypto_parse(value, &again, &why), ==, 0);
    g_assert_cmpmem(again.key_salt, again.key_salt_length, c.key_salt, c.key_salt_length);
    g_string_free(out, TRUE);
}

static moat_sdp_crypto line(uint32_t tag, moat_srtp_profile suite)
{
    moat_sdp_crypto c = {
        .tag = tag, .suite = suite, .key_salt_length = moat_sdp_crypto_key_salt_length(suite)};
    return c;
}

static void test_policy_and_choice(void)
{
    moat_sdp_crypto offered[4] = {
        line(1, MOAT_SRTP_PROFILE_AES128_CM_SHA1_80),
        line(2, MOAT_SRTP_PROFILE_AES128_CM_SHA1_32),
        line(3, MOAT_SRTP_PROFILE_AEAD_AES_128_GCM),
        line(4, MOAT_SRTP_PROFILE_AES128_CM_SHA1_80),
    };
    offered[0].mki_length = 4; /* unusable: the next one is taken */
    g_assert_cmpint(moat_sdp_crypto_choose(offered, 4, NULL), ==, 1);
    const char *only_gcm[] = {"AEAD_AES_128_GCM"};
    moat_sdes_policy policy = {.only = only_gcm, .n_only = 1};
    g_assert_cmpint(moat_sdp_crypto_choose(offered, 4, &policy), ==, 2);
    const char *no_32[] = {"aes_cm_128_hmac_sha1_32"};
    policy = (moat_sdes_policy){.no = no_32, .n_no = 1};
    g_assert_cmpint(moat_sdp_crypto_choose(offered, 4, &policy), ==, 2);
    policy = (moat_sdes_policy){.off = true};
    g_assert_cmpint(moat_sdp_crypto_choose(offered, 4, &policy), ==, -1);
    g_assert_cmpint(moat_sdp_crypto_choose(offered, 0, NULL), ==, -1);

    moat_srtp_profile suites[4];
    g_assert_cmpuint(moat_sdp_crypto_offer_suites(NULL, suites, 4), ==, 3);
    g_assert_cmpint(suites[0], ==, MOAT_SRTP_PROFILE_AES128_CM_SHA1_80);
    policy = (moat_sdes_policy){.no = no_32, .n_no = 1};
    g_assert_cmpuint(moat_sdp_crypto_offer_suites(&policy, suites, 4), ==, 2);
    policy = (moat_sdes_policy){.only = only_gcm, .n_only = 1};
    g_assert_cmpuint(moat_sdp_crypto_offer_suites(&policy, suites, 4), ==, 1);
    g_assert_cmpint(suites[0], ==, MOAT_SRTP_PROFILE_AEAD_AES_128_GCM);
    g_assert_cmpuint(moat_sdp_crypto_offer_suites(&policy, suites, 0), ==, 0);
    g_assert_cmpstr(moat_sdp_crypto_suite_name(99), ==, NULL);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sdp-crypto/rfc-examples", test_rfc_examples);
    g_test_add_func("/sdp-crypto/ignored-suites", test_ignored_suites);
    g_test_add_func("/sdp-crypto/hostile", test_hostile);
    g_test_add_func("/sdp-crypto/write-round-trip", test_write_round_trip);
    g_test_add_func("/sdp-crypto/policy-and-choice", test_policy_and_choice);
    return g_test_run();
}
