/* Bencode: round trips, sorted keys on output, and the parser's refusals
 * (truncation, overflow, nesting, lengths past the end). */
#include <glib.h>
#include <string.h>

#include "ng/bencode.h"

static moat_bencode *parse_ok(const char *text)
{
    char error[128] = "";
    moat_bencode *value =
        moat_bencode_parse((const uint8_t *)text, strlen(text), NULL, error, sizeof error);
    if (!value)
        g_error("\"%s\" does not parse: %s", text, error);
    return value;
}

static void parse_fails(const char *text, size_t length, const char *expected)
{
    char error[128] = "";
    moat_bencode *value =
        moat_bencode_parse((const uint8_t *)text, length, NULL, error, sizeof error);
    if (value)
        g_error("\"%.*s\" parsed", (int)length, text);
    if (strstr(error, expected) == NULL)
        g_error("error \"%s\" does not contain \"%s\"", error, expected);
}

static char *encode(const moat_bencode *value)
{
    GByteArray *out = g_byte_array_new();
    moat_bencode_encode(value, out);
    g_byte_array_append(out, (const guint8 *)"", 1);
    return (char *)g_byte_array_free(out, FALSE);
}

static void test_round_trip(void)
{
    const char *canonical[] = {
        "i0e",
        "i-42e",
        "i9223372036854775807e",
        "i-9223372036854775808e",
        "0:",
        "4:spam",
        "le",
        "de",
        "l4:spami42ee",
        "d3:bar4:spam3:fooi42ee",
        "d7:command4:ping6:cookied1:ai1eee",
        "d1:ad1:bd1:cl1:deeee",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(canonical); i++) {
        moat_bencode *value = parse_ok(canonical[i]);
        char *again = encode(value);
        g_assert_cmpstr(again, ==, canonical[i]);
        g_free(again);
        moat_bencode_free(value);
    }
}

static void test_access(void)
{
    moat_bencode *value = parse_ok("d7:command5:offer3:sdp5:v=0\r\n5:flagsl13:trust-addressi7eee");
    g_assert_cmpint(moat_bencode_type_of(value), ==, MOAT_BENCODE_DICTIONARY);
    g_assert_cmpuint(moat_bencode_count(value), ==, 3);
    g_assert_cmpstr(moat_bencode_string(moat_bencode_get(value, "command"), NULL), ==, "offer");
    size_t length = 0;
    const char *sdp = moat_bencode_string(moat_bencode_get(value, "sdp"), &length);
    g_assert_cmpuint(length, ==, 5);
    g_assert_cmpmem(sdp, length, "v=0\r\n", 5);
    const moat_bencode *flags = moat_bencode_get(value, "flags");
    g_assert_cmpuint(moat_bencode_count(flags), ==, 2);
    int64_t number = 0;
    g_assert_true(moat_bencode_integer(moat_bencode_item(flags, 1, NULL, NULL), &number));
    g_assert_cmpint(number, ==, 7);
    g_assert_null(moat_bencode_get(value, "absent"));
    g_assert_null(moat_bencode_get(flags, "command")); /* not a dictionary */
    g_assert_null(moat_bencode_string(flags, NULL));
    g_assert_false(moat_bencode_integer(flags, &number));
    const char *key = NULL;
    size_t key_length = 0;
    moat_bencode_item(value, 2, &key, &key_length);
    g_assert_cmpstr(key, ==, "flags");
    g_assert_null(moat_bencode_item(value, 3, NULL, NULL));
    moat_bencode_free(value);

    /* A byte string may hold NUL bytes; its length says so. */
    char error[64];
    value = moat_bencode_parse((const uint8_t *)"3:a\0b", 5, NULL, error, sizeof error);
    moat_bencode_string(value, &length);
    g_assert_cmpuint(length, ==, 3);
    moat_bencode_free(value);
}

static void test_lenient(void)
{
    /* Kamailio sends keys in insertion order, not sorted; the encoder sorts. */
    moat_bencode *value = parse_ok("d7:command4:ping4:abcd1:xe");
    char *text = encode(value);
    g_assert_cmpstr(text, ==, "d4:abcd1:x7:command4:pinge");
    g_free(text);
    moat_bencode_free(value);
    /* Leading zeros, as strtoll-based parsers accept them. */
    value = parse_ok("i007e");
    int64_t number = 0;
    g_assert_true(moat_bencode_integer(value, &number));
    g_assert_cmpint(number, ==, 7);
    moat_bencode_free(value);
    value = parse_ok("04:spam");
    moat_bencode_free(value);
    /* A repeated key: the first is found. */
    value = parse_ok("d1:ai1e1:ai2ee");
    g_assert_true(moat_bencode_integer(moat_bencode_get(value, "a"), &number));
    g_assert_cmpint(number, ==, 1);
    moat_bencode_free(value);
    /* Trailing bytes are counted when the caller asks for them. */
    size_t consumed = 0;
    value = moat_bencode_parse((const uint8_t *)"dei1e\n", 6, &consumed, NULL, 0);
    g_assert_nonnull(value);
    g_assert_cmpuint(consumed, ==, 2);
    moat_bencode_free(value);
}

static void test_malformed(void)
{
    parse_fails("", 0, "truncated");
    parse_fails("d", 1, "truncated dictionary");
    parse_fails("l", 1, "truncated list");
    parse_fails("d7:command", 10, "truncated value");
    parse_fails("d7:comm", 7, "past the end");
    parse_fails("5:abc", 5, "past the end");
    parse_fails("i", 1, "truncated number");
    parse_fails("i12", 3, "truncated number");
    parse_fails("ie", 2, "malformed number");
    parse_fails("i1x2e", 5, "malformed number");
    parse_fails("i-e", 3, "malformed number");
    parse_fails("i-0e", 4, "negative zero");
    parse_fails("i--1e", 5, "malformed number");
    parse_fails("i9223372036854775808e", 21, "overflow");
    parse_fails("i-9223372036854775809e", 22, "overflow");
    parse_fails("99999999999999999999:", 21, "overflow");
    parse_fails("18446744073709551615:x", 22, "overflow");
    parse_fails("-1:x", 4, "not a bencode value");
    parse_fails("x", 1, "not a bencode value");
    parse_fails("di1ei2ee", 8, "key is not a string");
    parse_fails("dlee", 4, "key is not a string");
    parse_fails("1:ax", 4, "trailing bytes");
    parse_fails("d1:a", 4, "truncated value");
    parse_fails("d1:ai1e", 7, "truncated dictionary");
    parse_fails("{}", 2, "not a bencode value");
}

static void test_depth(void)
{
    GString *deep = g_string_new(NULL);
    for (int i = 0; i < 32; i++)
        g_string_append_c(deep, 'l');
    for (int i = 0; i < 32; i++)
        g_string_append_c(deep, 'e');
    moat_bencode *value = parse_ok(deep->str);
    moat_bencode_free(value);
    g_string_prepend_c(deep, 'l');
    g_string_append_c(deep, 'e');
    parse_fails(deep->str, deep->len, "nesting too deep");
    g_string_truncate(deep, 0);
    for (int i = 0; i < 100000; i++)
        g_string_append(deep, "d1:a");
    parse_fails(deep->str, deep->len, "nesting too deep");
    g_string_free(deep, TRUE);
}

static void test_item_bound(void)
{
    /* 100000 empty strings in a list: refused, not allocated without end. */
    GString *many = g_string_new("l");
    for (int i = 0; i < 100000; i++)
        g_string_append(many, "0:");
    g_string_append_c(many, 'e');
    parse_fails(many->str, many->len, "too many items");
    g_string_free(many, TRUE);
}

static void test_build(void)
{
    moat_bencode *reply = moat_bencode_new_dictionary();
    moat_bencode_set_string(reply, "result", "ok");
    moat_bencode_set_string(reply, "sdp", "v=0\r\n");
    moat_bencode_set_integer(reply, "created", 1700000000);
    moat_bencode *tags = moat_bencode_new_list();
    moat_bencode_append(tags, moat_bencode_new_cstring("a"));
    moat_bencode_append(tags, moat_bencode_new_string("b\0c", 3));
    moat_bencode_set(reply, "tags", tags);
    moat_bencode_set_string(reply, "result", "error"); /* replaces */
    moat_bencode_set(reply, "", moat_bencode_new_integer(-1));
    char *text = encode(reply);
    g_assert_cmpstr(text, ==,
                    "d0:i-1e7:createdi1700000000e6:result5:error3:sdp5:v=0\r\n"
                    "4:tagsl1:a3:b");
    g_free(text);
    g_assert_cmpuint(moat_bencode_count(reply), ==, 5);
    moat_bencode_free(reply);

    /* Keys sort by raw bytes, a prefix first. */
    reply = moat_bencode_new_dictionary();
    moat_bencode_set_integer(reply, "ab", 2);
    moat_bencode_set_integer(reply, "a", 1);
    moat_bencode_set_integer(reply, "B", 0);
    text = encode(reply);
    g_assert_cmpstr(text, ==, "d1:Bi0e1:ai1e2:abi2ee");
    g_free(text);
    moat_bencode_free(reply);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/bencode/round-trip", test_round_trip);
    g_test_add_func("/bencode/access", test_access);
    g_test_add_func("/bencode/lenient", test_lenient);
    g_test_add_func("/bencode/malformed", test_malformed);
    g_test_add_func("/bencode/depth", test_depth);
    g_test_add_func("/bencode/item-bound", test_item_bound);
    g_test_add_func("/bencode/build", test_build);
    return g_test_run();
}
