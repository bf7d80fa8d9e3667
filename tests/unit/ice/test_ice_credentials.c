/* moat_ice_credentials_generate: lengths, charset, and that the output is
 * not constant. */
#include "ice/ice_credentials.h"

#include <string.h>

#include <glib.h>

static void test_charset_predicate(void)
{
    int valid = 0;
    for (int c = 0; c < 256; c++) {
        bool expected = g_ascii_isalnum(c) || c == '+' || c == '/';
        g_assert_cmpint(moat_ice_char_valid((uint8_t)c), ==, expected);
        valid += expected;
    }
    g_assert_cmpint(valid, ==, 64);
}

static void test_length_and_charset(void)
{
    for (int i = 0; i < 2000; i++) {
        char ufrag[MOAT_ICE_UFRAG_LENGTH + 1];
        char pwd[MOAT_ICE_PWD_LENGTH + 1];
        memset(ufrag, 'X', sizeof ufrag);
        memset(pwd, 'X', sizeof pwd);
        g_assert_cmpint(moat_ice_credentials_generate(ufrag, pwd), ==, 0);
        g_assert_cmpuint(strlen(ufrag), ==, 8);
        g_assert_cmpuint(strlen(pwd), ==, 24);
        for (size_t k = 0; k < 8; k++)
            g_assert_true(moat_ice_char_valid((uint8_t)ufrag[k]));
        for (size_t k = 0; k < 24; k++)
            g_assert_true(moat_ice_char_valid((uint8_t)pwd[k]));
    }
}

/* 2000 x 32 symbols: every one of the 64 appears and no credential repeats;
 * a broken generator (constant, or a small charset) fails this. */
static void test_spread(void)
{
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    unsigned counts[256] = {0};
    for (int i = 0; i < 2000; i++) {
        char ufrag[MOAT_ICE_UFRAG_LENGTH + 1];
        char pwd[MOAT_ICE_PWD_LENGTH + 1];
        g_assert_cmpint(moat_ice_credentials_generate(ufrag, pwd), ==, 0);
        g_assert_true(g_hash_table_add(seen, g_strdup(pwd)));
        g_assert_true(g_hash_table_add(seen, g_strconcat("u:", ufrag, NULL)));
        for (size_t k = 0; k < 8; k++)
            counts[(uint8_t)ufrag[k]]++;
        for (size_t k = 0; k < 24; k++)
            counts[(uint8_t)pwd[k]]++;
    }
    for (int c = 0; c < 256; c++) {
        if (moat_ice_char_valid((uint8_t)c))
            g_assert_cmpuint(counts[c], >, 0);
    }
    g_hash_table_destroy(seen);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ice/credentials/charset-predicate", test_charset_predicate);
    g_test_add_func("/ice/credentials/length-and-charset", test_length_and_charset);
    g_test_add_func("/ice/credentials/spread", test_spread);
    return g_test_run();
}
