/* The record pre-parser on hand-built datagrams, valid and hostile. */
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "dtls/dtls_record.h"

static gsize put_record(guint8 *out, guint8 type, guint16 version, guint16 epoch, guint64 seq,
                        guint16 length)
{
    out[0] = type;
    out[1] = version >> 8;
    out[2] = version & 0xff;
    out[3] = epoch >> 8;
    out[4] = epoch & 0xff;
    for (int i = 0; i < 6; i++)
        out[5 + i] = (guint8)(seq >> (8 * (5 - i)));
    out[11] = length >> 8;
    out[12] = length & 0xff;
    memset(out + 13, 0xab, length);
    return 13u + length;
}

static void test_valid(void)
{
    guint8 d[256];
    gsize n = put_record(d, 22, 0xfefd, 0x0102, 0x030405060708ull, 20);
    size_t count = 0;
    g_assert_cmpint(moat_dtls_record_scan(d, n, 0, &count), ==, MOAT_DTLS_RECORD_OK);
    g_assert_cmpuint(count, ==, 1);

    size_t offset = 0;
    moat_dtls_record r;
    g_assert_cmpint(moat_dtls_record_next(d, n, &offset, &r), ==, MOAT_DTLS_RECORD_OK);
    g_assert_cmpuint(offset, ==, n);
    g_assert_cmpuint(r.content_type, ==, 22);
    g_assert_cmpuint(r.version, ==, 0xfefd);
    g_assert_cmpuint(r.epoch, ==, 0x0102);
    g_assert_cmpuint(r.sequence, ==, 0x030405060708ull);
    g_assert_true(r.fragment == d + 13);
    g_assert_cmpuint(r.length, ==, 20);

    /* Three records, DTLS 1.0 record version, an empty fragment, every
     * content type from 20 to 25. */
    n = put_record(d, 20, 0xfeff, 0, 0, 1);
    n += put_record(d + n, 23, 0xfefd, 1, 1, 0);
    n += put_record(d + n, 25, 0xfefd, 1, 2, 30);
    g_assert_cmpint(moat_dtls_record_scan(d, n, 0, &count), ==, MOAT_DTLS_RECORD_OK);
    g_assert_cmpuint(count, ==, 3);
    g_assert_cmpuint(moat_dtls_record_first_protected(d, n), ==, 13 + 1);
    /* Epoch 1 twice; once epoch 1 is read, only its application data. */
    g_assert_cmpuint(moat_dtls_record_count_unread(d, n, 0), ==, 2);
    g_assert_cmpuint(moat_dtls_record_count_unread(d, n, 1), ==, 1);
    g_assert_cmpuint(moat_dtls_record_count_unread(d, n, 2), ==, 0);
    g_assert_cmpuint(moat_dtls_record_first_protected(d, 13 + 1), ==, 13 + 1);
    g_assert_cmpint(moat_dtls_record_scan(d, n, 0, NULL), ==, MOAT_DTLS_RECORD_OK);
    for (guint8 type = 20; type <= 25; type++) {
        n = put_record(d, type, 0xfefd, 0, 0, 4);
        g_assert_cmpint(moat_dtls_record_scan(d, n, 0, &count), ==, MOAT_DTLS_RECORD_OK);
    }
}

static void test_largest(void)
{
    gsize n = 13 + MOAT_DTLS_RECORD_MAX_LENGTH;
    guint8 *d = g_malloc(n + 1);
    put_record(d, 23, 0xfefd, 1, 9, MOAT_DTLS_RECORD_MAX_LENGTH);
    size_t count = 0;
    g_assert_cmpint(moat_dtls_record_scan(d, n, 0, &count), ==, MOAT_DTLS_RECORD_OK);
    g_assert_cmpuint(count, ==, 1);
    d[11] = (MOAT_DTLS_RECORD_MAX_LENGTH + 1) >> 8;
    d[12] = (MOAT_DTLS_RECORD_MAX_LENGTH + 1) & 0xff;
    g_assert_cmpint(moat_dtls_record_scan(d, n + 1, 0, &count), ==, MOAT_DTLS_RECORD_TOO_LONG);
    g_free(d);
}

static void test_malformed(void)
{
    guint8 d[256] = {0};
    size_t count = 99;
    g_assert_cmpint(moat_dtls_record_scan(d, 0, 0, &count), ==, MOAT_DTLS_RECORD_EMPTY);
    g_assert_cmpint(moat_dtls_record_scan(NULL, 10, 0, &count), ==, MOAT_DTLS_RECORD_EMPTY);
    g_assert_cmpuint(count, ==, 99);

    gsize n = put_record(d, 22, 0xfefd, 0, 0, 10);
    for (gsize cut = 1; cut < 13; cut++)
        g_assert_cmpint(moat_dtls_record_scan(d, cut, 0, &count), ==,
                        MOAT_DTLS_RECORD_SHORT_HEADER);
    for (gsize cut = 13; cut < n; cut++)
        g_assert_cmpint(moat_dtls_record_scan(d, cut, 0, &count), ==, MOAT_DTLS_RECORD_BAD_LENGTH);
    /* A valid record followed by a stray byte. */
    g_assert_cmpint(moat_dtls_record_scan(d, n + 1, 0, &count), ==, MOAT_DTLS_RECORD_SHORT_HEADER);

    const guint8 bad_types[] = {0, 19, 26, 0x80, 0xff};
    for (gsize i = 0; i < sizeof bad_types; i++) {
        n = put_record(d, bad_types[i], 0xfefd, 0, 0, 4);
        g_assert_cmpint(moat_dtls_record_scan(d, n, 0, &count), ==,
                        MOAT_DTLS_RECORD_BAD_CONTENT_TYPE);
    }
    const guint16 bad_versions[] = {0x0303, 0xfefe, 0xfefc, 0xfeff + 1, 0};
    for (gsize i = 0; i < G_N_ELEMENTS(bad_versions); i++) {
        n = put_record(d, 22, bad_versions[i], 0, 0, 4);
        g_assert_cmpint(moat_dtls_record_scan(d, n, 0, &count), ==, MOAT_DTLS_RECORD_BAD_VERSION);
    }
    /* The second of two records is bad: the whole datagram is. */
    n = put_record(d, 22, 0xfefd, 0, 0, 4);
    n += put_record(d + n, 22, 0x0303, 0, 1, 4);
    g_assert_cmpint(moat_dtls_record_scan(d, n, 0, &count), ==, MOAT_DTLS_RECORD_BAD_VERSION);

    /* next() leaves its outputs alone on error. */
    size_t offset = 5;
    moat_dtls_record r = {.length = 77};
    g_assert_cmpint(moat_dtls_record_next(d, 10, &offset, &r), ==, MOAT_DTLS_RECORD_SHORT_HEADER);
    g_assert_cmpuint(offset, ==, 5);
    g_assert_cmpuint(r.length, ==, 77);
    offset = 300;
    g_assert_cmpint(moat_dtls_record_next(d, 10, &offset, &r), ==, MOAT_DTLS_RECORD_SHORT_HEADER);
}

static void test_short_protected(void)
{
    guint8 d[256];
    size_t count = 0;
    /* Epoch 0 is plaintext: no minimum. */
    gsize n = put_record(d, 22, 0xfefd, 0, 0, 2);
    g_assert_cmpint(moat_dtls_record_scan(d, n, 24, &count), ==, MOAT_DTLS_RECORD_OK);
    n = put_record(d, 23, 0xfefd, 1, 0, 23);
    g_assert_cmpint(moat_dtls_record_scan(d, n, 24, &count), ==, MOAT_DTLS_RECORD_SHORT_PROTECTED);
    g_assert_cmpint(moat_dtls_record_scan(d, n, 0, &count), ==, MOAT_DTLS_RECORD_OK);
    n = put_record(d, 21, 0xfefd, 1, 0, 24);
    g_assert_cmpint(moat_dtls_record_scan(d, n, 24, &count), ==, MOAT_DTLS_RECORD_OK);
    /* A short one behind a good one spoils the datagram. */
    n += put_record(d + n, 23, 0xfefd, 2, 0, 0);
    g_assert_cmpint(moat_dtls_record_scan(d, n, 24, &count), ==, MOAT_DTLS_RECORD_SHORT_PROTECTED);
    /* No cipher yet: nothing encrypted can be right. */
    g_assert_cmpint(moat_dtls_record_scan(d, n, SIZE_MAX, &count), ==,
                    MOAT_DTLS_RECORD_SHORT_PROTECTED);
}

static void test_names(void)
{
    g_assert_cmpstr(moat_dtls_record_result_name(MOAT_DTLS_RECORD_OK), ==, "ok");
    g_assert_cmpstr(moat_dtls_record_result_name(MOAT_DTLS_RECORD_BAD_VERSION), ==, "bad_version");
    for (int r = 0; r < MOAT_DTLS_RECORD_RESULT_COUNT; r++)
        g_assert_cmpstr(moat_dtls_record_result_name(r), !=, "unknown");
    g_assert_cmpstr(moat_dtls_record_result_name(MOAT_DTLS_RECORD_RESULT_COUNT), ==, "unknown");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/dtls/record/valid", test_valid);
    g_test_add_func("/dtls/record/largest", test_largest);
    g_test_add_func("/dtls/record/malformed", test_malformed);
    g_test_add_func("/dtls/record/short-protected", test_short_protected);
    g_test_add_func("/dtls/record/names", test_names);
    return g_test_run();
}
