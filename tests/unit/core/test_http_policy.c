/* The HTTP layer's pure parts: per-source offer buckets (keys, refill,
 * Retry-After, bounded table) and JSON error bodies that stay valid UTF-8
 * whatever bytes the detail carries. */
#include "session/http_admission.h"
#include "http/http_host.h"
#include "http/http_message.h"

#include <glib.h>
#include <jansson.h>
#include <string.h>

static void test_source_keys(void)
{
    char key[48];
    moat_admission_source_key("192.0.2.7", key, sizeof key);
    g_assert_cmpstr(key, ==, "4:192.0.2.7");
    moat_admission_source_key("::ffff:192.0.2.7", key, sizeof key);
    g_assert_cmpstr(key, ==, "4:192.0.2.7");
    /* One /64 is one source. */
    char other[48];
    moat_admission_source_key("2001:db8:1:2::1", key, sizeof key);
    moat_admission_source_key("2001:db8:1:2:ffff::9", other, sizeof other);
    g_assert_cmpstr(key, ==, other);
    moat_admission_source_key("2001:db8:1:3::1", other, sizeof other);
    g_assert_cmpstr(key, !=, other);
    moat_admission_source_key(NULL, key, sizeof key);
    g_assert_cmpstr(key, ==, "?");
    moat_admission_source_key("not an address", key, sizeof key);
    g_assert_cmpstr(key, ==, "?");
}

/* Held sessions are counted per /56: the /64s of one customer share a key;
 * IPv4 keys stay the address. */
static void test_source_keys_per_56(void)
{
    char key[48], other[48];
    moat_admission_source_key_prefix("2001:db8:1:200::1", 56, key, sizeof key);
    g_assert_cmpstr(key, ==, "6/56:20010db8000102");
    moat_admission_source_key_prefix("2001:db8:1:2ff:ffff::9", 56, other, sizeof other);
    g_assert_cmpstr(key, ==, other);
    moat_admission_source_key_prefix("2001:db8:1:300::1", 56, other, sizeof other);
    g_assert_cmpstr(key, !=, other);
    moat_admission_source_key_prefix("::ffff:192.0.2.7", 56, key, sizeof key);
    g_assert_cmpstr(key, ==, "4:192.0.2.7");
    moat_admission_source_key_prefix("2001:db8:1:2::1", 64, key, sizeof key);
    moat_admission_source_key("2001:db8:1:2::1", other, sizeof other);
    g_assert_cmpstr(key, ==, other);
}

/* Per-source counters: one per key, kept while held, dropped once zero
 * and the table is large. */
static void test_source_counts(void)
{
    moat_source_counts *counts = moat_source_counts_new();
    int *a = moat_source_counts_get(counts, "4:192.0.2.1");
    g_assert_true(moat_source_counts_get(counts, "4:192.0.2.1") == a);
    g_atomic_int_inc(a);
    char key[32];
    for (int i = 0; i < 1000; i++) {
        g_snprintf(key, sizeof key, "4:198.51.%d.%d", i / 256, i % 256);
        moat_source_counts_get(counts, key);
    }
    g_assert_cmpuint(moat_source_counts_size(counts), <=, 257);
    g_assert_true(moat_source_counts_get(counts, "4:192.0.2.1") == a);
    g_assert_cmpint(g_atomic_int_get(a), ==, 1);
    g_atomic_int_add(a, -1);
    moat_source_counts_free(counts);
}

static void test_bucket(void)
{
    moat_admission *admission = moat_admission_new(2, 3, 100);
    uint64_t t = 1000000;
    for (int i = 0; i < 3; i++)
        g_assert_cmpuint(moat_admission_take(admission, "192.0.2.1", t), ==, 0);
    g_assert_cmpuint(moat_admission_take(admission, "192.0.2.1", t), ==, 1);
    /* Another source has its own bucket. */
    g_assert_cmpuint(moat_admission_take(admission, "192.0.2.2", t), ==, 0);
    /* Two per second: half a second later one more is allowed. */
    g_assert_cmpuint(moat_admission_take(admission, "192.0.2.1", t + 500000), ==, 0);
    g_assert_cmpuint(moat_admission_take(admission, "192.0.2.1", t + 500000), ==, 1);
    moat_admission_free(admission);

    /* A slow rate asks for a longer wait. */
    admission = moat_admission_new(1, 1, 100);
    g_assert_cmpuint(moat_admission_take(admission, "192.0.2.1", t), ==, 0);
    g_assert_cmpuint(moat_admission_take(admission, "192.0.2.1", t), ==, 1);
    moat_admission_free(admission);

    /* Rate 0: no limit. */
    admission = moat_admission_new(0, 1, 100);
    for (int i = 0; i < 100; i++)
        g_assert_cmpuint(moat_admission_take(admission, "192.0.2.1", t), ==, 0);
    moat_admission_free(admission);
}

static void test_table_is_bounded(void)
{
    moat_admission *admission = moat_admission_new(1, 2, 64);
    uint64_t t = 1000000;
    for (unsigned i = 0; i < 10000; i++) {
        char peer[32];
        g_snprintf(peer, sizeof peer, "10.%u.%u.%u", (i >> 16) & 255, (i >> 8) & 255, i & 255);
        moat_admission_take(admission, peer, t + i);
        g_assert_cmpuint(moat_admission_sources(admission), <=, 64);
    }
    moat_admission_free(admission);
}

static void assert_valid_json(const char *body, size_t length)
{
    g_assert_true(g_utf8_validate(body, (gssize)length, NULL));
    json_error_t error;
    json_t *value = json_loadb(body, length, 0, &error);
    g_assert_nonnull(value);
    g_assert_nonnull(json_string_value(json_object_get(value, "error")));
    g_assert_nonnull(json_string_value(json_object_get(value, "detail")));
    json_decref(value);
}

static void test_error_json_is_utf8(void)
{
    static const char *const details[] = {
        "plain",
        "/\xff\xfe",
        "\xe2\x82",
        "\xc3",
        "ok \xe2\x82\xac and \x80 and \xed\xa0\x80",
        "\"quotes\" \\ and \n newlines \x01",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(details); i++) {
        size_t length = 0;
        char *body = moat_http_error_json(404, "not_found", details[i], &length);
        g_assert_cmpuint(length, ==, strlen(body));
        assert_valid_json(body, length);
        g_free(body);
    }
    /* Every cut of a long multi-byte detail stays on a character boundary. */
    GString *detail = g_string_new("");
    for (int i = 0; i < 300; i++)
        g_string_append(detail, i % 2 ? "\xe2\x82\xac" : "\xc3\xa9");
    for (size_t cut = 0; cut < detail->len; cut += 7) {
        char *prefix = g_strndup(detail->str, cut);
        moat_http_response response = {0};
        moat_http_response_error(&response, 400, "bad", "detail %s", prefix);
        assert_valid_json(response.body, response.body_length);
        moat_http_response_clear(&response);
        g_free(prefix);
    }
    g_string_free(detail, TRUE);
    char *cut = moat_utf8_sanitize("\xe2\x82\xac\xe2\x82\xac", 4);
    g_assert_cmpstr(cut, ==, "\xe2\x82\xac");
    g_free(cut);
}

/* DNS rebinding: the Host must name the gateway. */
static void test_host_names(void)
{
    char **names = moat_http_host_names("0.0.0.0", " moat.example.org, [2001:db8::5] ", false);
    const char *const *list = (const char *const *)names;
    g_assert_true(moat_http_host_allowed("localhost", list));
    g_assert_true(moat_http_host_allowed("LOCALHOST:8088", list));
    g_assert_true(moat_http_host_allowed("127.0.0.1:8088", list));
    g_assert_true(moat_http_host_allowed("[::1]:8088", list));
    g_assert_true(moat_http_host_allowed("moat.example.org", list));
    g_assert_true(moat_http_host_allowed("Moat.Example.org.:443", list));
    g_assert_true(moat_http_host_allowed("[2001:db8::5]:8088", list));
    g_assert_false(moat_http_host_allowed("evil.example", list));
    g_assert_false(moat_http_host_allowed("evil.example:8088", list));
    g_assert_false(moat_http_host_allowed("moat.example.org.evil.example", list));
    g_assert_false(moat_http_host_allowed("0.0.0.0", list)); /* a wildcard names nothing */
    g_assert_false(moat_http_host_allowed("::1", list));     /* IPv6 needs brackets */
    g_assert_false(moat_http_host_allowed("[::1", list));
    g_assert_false(moat_http_host_allowed("", list));
    g_assert_false(moat_http_host_allowed(NULL, list));
    g_strfreev(names);
    /* The bind address counts; "*" turns the check off. */
    names = moat_http_host_names("192.0.2.10", "", false);
    g_assert_true(moat_http_host_allowed("192.0.2.10:8088", (const char *const *)names));
    g_strfreev(names);
    names = moat_http_host_names("0.0.0.0", "*", false);
    g_assert_true(moat_http_host_allowed("evil.example", (const char *const *)names));
    g_strfreev(names);
    /* The interfaces' addresses: loopback at least. */
    names = moat_http_host_names("::", "", true);
    g_assert_true(moat_http_host_allowed("127.0.0.1", (const char *const *)names));
    g_strfreev(names);
}

/* Content-Length as RFC 9110 §8.6 writes it: 1*DIGIT, or one value
 * repeated; libsoup itself reads "-1" and an overflow as a length of -1 and
 * "5, 7" as 7. */
static void test_content_length(void)
{
    static const struct {
        const char *value;
        uint64_t length; /* UINT64_MAX: refused */
    } cases[] = {
        {"0", 0},
        {"5", 5},
        {"0005", 5},
        {"65536", 65536},
        {"9223372036854775807", 9223372036854775807ull},
        {"5, 5", 5},
        {"5,5,5", 5},
        {"-1", UINT64_MAX},
        {"-0", UINT64_MAX},
        {"+5", UINT64_MAX},
        {"", UINT64_MAX},
        {" ", UINT64_MAX},
        {"5, 7", UINT64_MAX},
        {"5,", UINT64_MAX},
        {",5", UINT64_MAX},
        {"5 7", UINT64_MAX},
        {"0x10", UINT64_MAX},
        {"1e3", UINT64_MAX},
        {"9223372036854775808", UINT64_MAX},
        {"18446744073709551615", UINT64_MAX},
        {"18446744073709551616", UINT64_MAX},
        {"99999999999999999999999", UINT64_MAX},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        uint64_t length = 12345;
        bool valid = moat_http_content_length_parse(cases[i].value, &length);
        g_assert_true(valid == (cases[i].length != UINT64_MAX));
        if (valid)
            g_assert_cmpuint(length, ==, cases[i].length);
    }
    g_assert_false(moat_http_content_length_parse(NULL, NULL));
    g_assert_true(moat_http_content_length_parse("12", NULL));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/http/admission/source-keys", test_source_keys);
    g_test_add_func("/http/admission/source-keys-56", test_source_keys_per_56);
    g_test_add_func("/http/admission/source-counts", test_source_counts);
    g_test_add_func("/http/admission/bucket", test_bucket);
    g_test_add_func("/http/admission/bounded", test_table_is_bounded);
    g_test_add_func("/http/error-json-utf8", test_error_json_is_utf8);
    g_test_add_func("/http/content-length", test_content_length);
    g_test_add_func("/http/host-names", test_host_names);
    return g_test_run();
}
