/* moat_rtp_put_extension: an element into a packet without extensions,
 * appended to a one-byte-header block, overwritten in place, and every
 * refusal at its limit (capacity, two-byte blocks, a different size, a
 * block past the packet, ids and sizes out of range). */
#include "rtp/rtp_extension_put.h"
#include "rtp/rtp_packet.h"

#include <glib.h>
#include <string.h>

/* A 12-byte header, `csrcs` CSRCs, then a 4-byte payload 0xaa.. */
static size_t make_packet(uint8_t *d, unsigned csrcs)
{
    memset(d, 0, 64);
    d[0] = (uint8_t)(0x80 | csrcs);
    d[1] = 96;
    size_t n = 12 + 4 * csrcs;
    memset(d + n, 0xaa, 4);
    return n + 4;
}

/* The element's value as moat_rtp_find_extension reads it back. */
static void assert_element(const uint8_t *d, size_t n, uint8_t id, const uint8_t *value,
                           size_t size)
{
    moat_rtp_header h;
    g_assert_cmpint(moat_rtp_parse(d, n, &h), ==, MOAT_RTP_OK);
    const uint8_t *got = NULL;
    size_t length = 0;
    g_assert_cmpint(moat_rtp_find_extension(d, &h, id, &got, &length), ==, MOAT_RTP_OK);
    g_assert_cmpmem(got, length, value, size);
    g_assert_cmpmem(d + n - 4, 4, "\xaa\xaa\xaa\xaa", 4); /* the payload moved intact */
}

static void test_new_block_then_append_then_overwrite(void)
{
    uint8_t d[64];
    size_t n = make_packet(d, 2);
    const uint8_t seq[2] = {0x12, 0x34}, delay[3] = {0x00, 0x63, 0xe8};
    g_assert_true(moat_rtp_put_extension(d, &n, sizeof d, 3, seq, 2));
    g_assert_cmpuint(n, ==, 12 + 8 + 8 + 4);
    assert_element(d, n, 3, seq, 2);
    g_assert_true(moat_rtp_put_extension(d, &n, sizeof d, 5, delay, 3));
    g_assert_cmpuint(n, ==, 12 + 8 + 12 + 4);
    assert_element(d, n, 3, seq, 2);
    assert_element(d, n, 5, delay, 3);
    const uint8_t later[3] = {0x01, 0x23, 0xe8};
    g_assert_true(moat_rtp_put_extension(d, &n, sizeof d, 5, later, 3));
    g_assert_cmpuint(n, ==, 12 + 8 + 12 + 4); /* in place */
    assert_element(d, n, 5, later, 3);
}

static void test_refusals(void)
{
    uint8_t d[64];
    const uint8_t v[16] = {1};
    size_t n = make_packet(d, 0);
    /* capacity: a new block needs 8 bytes for a 2-byte element */
    g_assert_false(moat_rtp_put_extension(d, &n, n + 7, 3, v, 2));
    g_assert_cmpuint(n, ==, 16);
    g_assert_true(moat_rtp_put_extension(d, &n, n + 8, 3, v, 2));
    /* the element is there with another size */
    g_assert_false(moat_rtp_put_extension(d, &n, sizeof d, 3, v, 3));
    /* ids and sizes outside the one-byte form */
    g_assert_false(moat_rtp_put_extension(d, &n, sizeof d, 0, v, 2));
    g_assert_false(moat_rtp_put_extension(d, &n, sizeof d, 15, v, 2));
    g_assert_false(moat_rtp_put_extension(d, &n, sizeof d, 4, v, 0));
    g_assert_false(moat_rtp_put_extension(d, &n, sizeof d, 4, v, 17));
    /* shorter than a header; CSRCs past the packet */
    size_t short_length = 11;
    g_assert_false(moat_rtp_put_extension(d, &short_length, sizeof d, 4, v, 2));
    uint8_t e[64];
    size_t m = make_packet(e, 0);
    e[0] |= 0x0f;
    g_assert_false(moat_rtp_put_extension(e, &m, sizeof e, 4, v, 2));
    /* a two-byte-header block (0x1000) is left alone */
    m = make_packet(e, 0);
    e[0] |= 0x10;
    memmove(e + 16, e + 12, 4);
    e[12] = 0x10, e[13] = 0x00, e[14] = 0, e[15] = 0;
    m += 4;
    g_assert_false(moat_rtp_put_extension(e, &m, sizeof e, 4, v, 2));
    /* a block where processing ends (id 15, or an id-0 octet with a length)
     * before its end: an element after it would be read by no receiver */
    const uint8_t stops[] = {0xF0, 0x01};
    for (size_t k = 0; k < sizeof stops; k++) {
        m = make_packet(e, 0);
        e[0] |= 0x10;
        memmove(e + 20, e + 12, 4);
        e[12] = 0xbe, e[13] = 0xde, e[14] = 0, e[15] = 1;
        e[16] = stops[k], e[17] = 0, e[18] = 0, e[19] = 0;
        m += 8;
        size_t before = m;
        g_assert_false(moat_rtp_put_extension(e, &m, sizeof e, 4, v, 2));
        g_assert_cmpuint(m, ==, before);
    }
    /* a block whose length runs past the packet */
    m = make_packet(e, 0);
    e[0] |= 0x10;
    e[12] = 0xbe, e[13] = 0xde, e[14] = 0, e[15] = 9;
    g_assert_false(moat_rtp_put_extension(e, &m, sizeof e, 4, v, 2));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rtp_extension_put/new_append_overwrite",
                    test_new_block_then_append_then_overwrite);
    g_test_add_func("/rtp_extension_put/refusals", test_refusals);
    return g_test_run();
}
