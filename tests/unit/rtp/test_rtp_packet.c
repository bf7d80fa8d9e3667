/* RTP header parsing, RFC 8285 extension lookup, header rewrites and the
 * RFC 5761 RTP/RTCP split. */
#include <glib.h>
#include <string.h>

#include "rtp/rtp_packet.h"

/* V=2, PT 96, seq 0x1234, ts 0x01020304, SSRC 0xCAFEBABE, 4 payload octets. */
static const uint8_t plain[] = {0x80, 0x60, 0x12, 0x34, 0x01, 0x02, 0x03, 0x04,
                                0xCA, 0xFE, 0xBA, 0xBE, 'a',  'b',  'c',  'd'};

/* P, X, CC=2, M, PT 111; two CSRCs; a one-byte extension of 2 words holding
 * id 1 (1 octet), a padding octet, id 2 (2 octets); 3 payload octets; 5
 * padding octets. */
static const uint8_t complex_packet[] = {
    0xB2, 0xEF, 0x00, 0x01, 0x00, 0x00, 0x00, 0x10, 0x11, 0x22, 0x33, 0x44, /* fixed */
    0xAA, 0xAA, 0xAA, 0xAA, 0xBB, 0xBB, 0xBB, 0xBB,                         /* CSRCs */
    0xBE, 0xDE, 0x00, 0x02,                                                 /* profile, 2 words */
    0x10, 0x55, 0x00, 0x21, 'x',  'y',  0x00, 0x00,                         /* elements */
    'P',  'Q',  'R',                                                        /* payload */
    0x00, 0x00, 0x00, 0x00, 0x05,                                           /* padding */
};

static void test_parse_plain(void)
{
    moat_rtp_header h;
    g_assert_cmpint(moat_rtp_parse(plain, sizeof(plain), &h), ==, MOAT_RTP_OK);
    g_assert_cmpuint(h.version, ==, 2);
    g_assert_false(h.padding);
    g_assert_false(h.extension);
    g_assert_false(h.marker);
    g_assert_cmpuint(h.csrc_count, ==, 0);
    g_assert_cmpuint(h.payload_type, ==, 96);
    g_assert_cmpuint(h.sequence, ==, 0x1234);
    g_assert_cmpuint(h.timestamp, ==, 0x01020304);
    g_assert_cmpuint(h.ssrc, ==, 0xCAFEBABE);
    g_assert_cmpuint(h.header_length, ==, 12);
    g_assert_cmpuint(h.payload_offset, ==, 12);
    g_assert_cmpuint(h.payload_length, ==, 4);
    g_assert_cmpuint(h.padding_length, ==, 0);
    g_assert_cmpuint(h.extension_length, ==, 0);
}

static void test_parse_complex(void)
{
    moat_rtp_header h;
    g_assert_cmpint(moat_rtp_parse(complex_packet, sizeof(complex_packet), &h), ==, MOAT_RTP_OK);
    g_assert_true(h.padding);
    g_assert_true(h.extension);
    g_assert_true(h.marker);
    g_assert_cmpuint(h.csrc_count, ==, 2);
    g_assert_cmpuint(h.payload_type, ==, 111);
    g_assert_cmpuint(h.sequence, ==, 1);
    g_assert_cmpuint(h.timestamp, ==, 16);
    g_assert_cmpuint(h.ssrc, ==, 0x11223344);
    g_assert_cmpuint(h.extension_profile, ==, 0xBEDE);
    g_assert_cmpuint(h.extension_offset, ==, 24);
    g_assert_cmpuint(h.extension_length, ==, 8);
    g_assert_cmpuint(h.header_length, ==, 32);
    g_assert_cmpuint(h.payload_offset, ==, 32);
    g_assert_cmpuint(h.payload_length, ==, 3);
    g_assert_cmpuint(h.padding_length, ==, 5);
    g_assert_cmpmem(complex_packet + h.payload_offset, h.payload_length, "PQR", 3);
}

static void test_parse_padding_only(void)
{
    /* A bandwidth probe: the padding takes the whole payload. */
    uint8_t p[12 + 8];
    memset(p, 0, sizeof(p));
    memcpy(p, plain, 12);
    p[0] |= 0x20;
    p[sizeof(p) - 1] = 8;
    moat_rtp_header h;
    g_assert_cmpint(moat_rtp_parse(p, sizeof(p), &h), ==, MOAT_RTP_OK);
    g_assert_cmpuint(h.payload_length, ==, 0);
    g_assert_cmpuint(h.padding_length, ==, 8);
}

static void test_parse_invalid(void)
{
    moat_rtp_header h;
    uint8_t p[64];

    g_assert_cmpint(moat_rtp_parse(plain, 11, &h), ==, MOAT_RTP_ERR_TRUNCATED);
    g_assert_cmpint(moat_rtp_parse(plain, 0, &h), ==, MOAT_RTP_ERR_TRUNCATED);
    g_assert_cmpint(moat_rtp_parse(NULL, 12, &h), ==, MOAT_RTP_ERR_INVALID);

    memcpy(p, plain, sizeof(plain));
    p[0] = 0x40; /* version 1 */
    g_assert_cmpint(moat_rtp_parse(p, sizeof(plain), &h), ==, MOAT_RTP_ERR_VERSION);
    p[0] = 0xC0; /* version 3 */
    g_assert_cmpint(moat_rtp_parse(p, sizeof(plain), &h), ==, MOAT_RTP_ERR_VERSION);

    /* 15 CSRCs need 72 octets. */
    memcpy(p, plain, sizeof(plain));
    p[0] = 0x8F;
    g_assert_cmpint(moat_rtp_parse(p, sizeof(plain), &h), ==, MOAT_RTP_ERR_CSRC);
    /* 1 CSRC fits exactly in 16 octets. */
    p[0] = 0x81;
    g_assert_cmpint(moat_rtp_parse(p, sizeof(plain), &h), ==, MOAT_RTP_OK);
    g_assert_cmpuint(h.payload_length, ==, 0);

    /* Extension bit with no room for the extension header. */
    memcpy(p, plain, 12);
    p[0] = 0x90;
    g_assert_cmpint(moat_rtp_parse(p, 14, &h), ==, MOAT_RTP_ERR_EXTENSION);
    /* Extension header claiming 2 words with only 1 present. */
    memset(p + 12, 0, 8);
    p[12] = 0xBE;
    p[13] = 0xDE;
    p[15] = 2;
    g_assert_cmpint(moat_rtp_parse(p, 20, &h), ==, MOAT_RTP_ERR_EXTENSION);
    g_assert_cmpint(moat_rtp_parse(p, 24, &h), ==, MOAT_RTP_OK);
    /* The largest length word cannot overflow the offset arithmetic. */
    p[14] = 0xFF;
    p[15] = 0xFF;
    g_assert_cmpint(moat_rtp_parse(p, 24, &h), ==, MOAT_RTP_ERR_EXTENSION);

    /* Padding count 0, and larger than what follows the header. */
    memcpy(p, plain, sizeof(plain));
    p[0] |= 0x20;
    p[15] = 0;
    g_assert_cmpint(moat_rtp_parse(p, sizeof(plain), &h), ==, MOAT_RTP_ERR_PADDING);
    p[15] = 5;
    g_assert_cmpint(moat_rtp_parse(p, sizeof(plain), &h), ==, MOAT_RTP_ERR_PADDING);
    p[15] = 4;
    g_assert_cmpint(moat_rtp_parse(p, sizeof(plain), &h), ==, MOAT_RTP_OK);
    g_assert_cmpuint(h.payload_length, ==, 0);
    /* Padding flag on a bare header: the count octet would be the SSRC's. */
    memcpy(p, plain, 12);
    p[0] |= 0x20;
    g_assert_cmpint(moat_rtp_parse(p, 12, &h), ==, MOAT_RTP_ERR_PADDING);
}

static void test_parse_every_truncation(void)
{
    /* Every prefix of a valid packet either fails or describes regions that
     * lie inside the prefix. */
    for (size_t len = 0; len < sizeof(complex_packet); len++) {
        moat_rtp_header h;
        int rc = moat_rtp_parse(complex_packet, len, &h);
        if (rc == MOAT_RTP_OK) {
            g_assert_cmpuint(h.payload_offset + h.payload_length + h.padding_length, ==, len);
            g_assert_cmpuint(h.extension_offset + h.extension_length, <=, len);
        } else {
            g_assert_cmpint(rc, <, 0);
        }
    }
}

static void test_extension_one_byte(void)
{
    moat_rtp_header h;
    const uint8_t *data;
    size_t len;
    g_assert_cmpint(moat_rtp_parse(complex_packet, sizeof(complex_packet), &h), ==, MOAT_RTP_OK);

    g_assert_cmpint(moat_rtp_find_extension(complex_packet, &h, 1, &data, &len), ==, MOAT_RTP_OK);
    g_assert_cmpuint(len, ==, 1);
    g_assert_cmpuint(data[0], ==, 0x55);

    /* Found past the padding octet between elements. */
    g_assert_cmpint(moat_rtp_find_extension(complex_packet, &h, 2, &data, &len), ==, MOAT_RTP_OK);
    g_assert_cmpmem(data, len, "xy", 2);

    g_assert_cmpint(moat_rtp_find_extension(complex_packet, &h, 3, &data, &len), ==,
                    MOAT_RTP_ERR_NOT_FOUND);
    /* Ids 0 and 15 cannot name an element in this form. */
    g_assert_cmpint(moat_rtp_find_extension(complex_packet, &h, 0, &data, &len), ==,
                    MOAT_RTP_ERR_NOT_FOUND);
    g_assert_cmpint(moat_rtp_find_extension(complex_packet, &h, 15, &data, &len), ==,
                    MOAT_RTP_ERR_NOT_FOUND);

    /* No extension at all. */
    moat_rtp_header hp;
    g_assert_cmpint(moat_rtp_parse(plain, sizeof(plain), &hp), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtp_find_extension(plain, &hp, 1, &data, &len), ==,
                    MOAT_RTP_ERR_NOT_FOUND);
}

/* Builds header + extension (profile, words given by ext_len / 4). */
static size_t with_extension(uint8_t *p, uint16_t profile, const uint8_t *ext, size_t ext_len)
{
    memcpy(p, plain, 12);
    p[0] |= 0x10;
    p[12] = (uint8_t)(profile >> 8);
    p[13] = (uint8_t)profile;
    p[14] = 0;
    p[15] = (uint8_t)(ext_len / 4);
    memcpy(p + 16, ext, ext_len);
    return 16 + ext_len;
}

static void test_extension_one_byte_edges(void)
{
    uint8_t p[64];
    moat_rtp_header h;
    const uint8_t *data;
    size_t len;

    /* id 15 stops processing: id 3 after it is not seen. */
    const uint8_t stop[] = {0xF0, 0x30, 0x07, 0x00};
    size_t n = with_extension(p, 0xBEDE, stop, sizeof(stop));
    g_assert_cmpint(moat_rtp_parse(p, n, &h), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtp_find_extension(p, &h, 3, &data, &len), ==, MOAT_RTP_ERR_NOT_FOUND);

    /* An element of 16 octets (length field 15) fills what follows. */
    uint8_t big[20] = {0x4F};
    for (int i = 1; i <= 16; i++)
        big[i] = (uint8_t)i;
    n = with_extension(p, 0xBEDE, big, sizeof(big));
    g_assert_cmpint(moat_rtp_parse(p, n, &h), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtp_find_extension(p, &h, 4, &data, &len), ==, MOAT_RTP_OK);
    g_assert_cmpuint(len, ==, 16);
    g_assert_cmpuint(data[15], ==, 16);

    /* An element running past the extension is malformed. */
    const uint8_t overrun[] = {0x00, 0x00, 0x13, 0xAA};
    n = with_extension(p, 0xBEDE, overrun, sizeof(overrun));
    g_assert_cmpint(moat_rtp_parse(p, n, &h), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtp_find_extension(p, &h, 1, &data, &len), ==, MOAT_RTP_ERR_MALFORMED);

    /* An id-0 octet with a nonzero length ends processing (as id 15), as
     * libwebrtc reads it, and as the demux and the writer do. */
    const uint8_t id0[] = {0x02, 0x30, 0x07, 0x00};
    n = with_extension(p, 0xBEDE, id0, sizeof(id0));
    g_assert_cmpint(moat_rtp_parse(p, n, &h), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtp_find_extension(p, &h, 3, &data, &len), ==, MOAT_RTP_ERR_NOT_FOUND);

    /* An unknown profile holds no RFC 8285 elements. */
    const uint8_t other[] = {0x10, 0x55, 0x00, 0x00};
    n = with_extension(p, 0x1234, other, sizeof(other));
    g_assert_cmpint(moat_rtp_parse(p, n, &h), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtp_find_extension(p, &h, 1, &data, &len), ==, MOAT_RTP_ERR_NOT_FOUND);
}

/* The walk itself: padding skipped, every stop reported where it is. */
static void test_one_byte_walk(void)
{
    const uint8_t block[] = {0x00, 0x10, 0xAA, 0x00, 0x21, 0xBB, 0xCC, 0x01, 0x30, 0x07};
    size_t at = 0, size = 0;
    uint8_t id = 0;
    const uint8_t *value = NULL;
    g_assert_cmpint(moat_rtp_one_byte_next(block, sizeof block, &at, &id, &value, &size), ==,
                    MOAT_RTP_ONE_BYTE_ELEMENT);
    g_assert_cmpuint(id, ==, 1);
    g_assert_cmpuint(size, ==, 1);
    g_assert_true(value == block + 2);
    g_assert_cmpint(moat_rtp_one_byte_next(block, sizeof block, &at, &id, &value, &size), ==,
                    MOAT_RTP_ONE_BYTE_ELEMENT);
    g_assert_cmpuint(id, ==, 2);
    g_assert_cmpuint(size, ==, 2);
    g_assert_cmpuint(at, ==, 7);
    /* 0x01: id 0, length 2; processing ends there, id 3 is never read. */
    g_assert_cmpint(moat_rtp_one_byte_next(block, sizeof block, &at, &id, &value, &size), ==,
                    MOAT_RTP_ONE_BYTE_END);
    g_assert_cmpuint(at, ==, 7);
    /* A clean end leaves `at` at the block's length. */
    at = 0;
    g_assert_cmpint(moat_rtp_one_byte_next(block, 4, &at, &id, &value, &size), ==,
                    MOAT_RTP_ONE_BYTE_ELEMENT);
    g_assert_cmpint(moat_rtp_one_byte_next(block, 4, &at, &id, &value, &size), ==,
                    MOAT_RTP_ONE_BYTE_END);
    g_assert_cmpuint(at, ==, 4);
    /* An element one octet past the block. */
    at = 4;
    g_assert_cmpint(moat_rtp_one_byte_next(block, 6, &at, &id, &value, &size), ==,
                    MOAT_RTP_ONE_BYTE_OVERRUN);
}

static void test_extension_two_byte(void)
{
    uint8_t p[64];
    moat_rtp_header h;
    const uint8_t *data;
    size_t len;
    /* id 1 with 0 octets, padding, id 200 with 3 octets, padding, id 20 with 1. */
    const uint8_t ext[] = {0x01, 0x00, 0x00, 0xC8, 0x03, 'a', 'b', 'c', 0x00, 0x14, 0x01, 0x77};
    for (uint16_t appbits = 0; appbits < 16; appbits += 15) {
        size_t n = with_extension(p, (uint16_t)(0x1000 | appbits), ext, sizeof(ext));
        g_assert_cmpint(moat_rtp_parse(p, n, &h), ==, MOAT_RTP_OK);
        g_assert_cmpint(moat_rtp_find_extension(p, &h, 1, &data, &len), ==, MOAT_RTP_OK);
        g_assert_cmpuint(len, ==, 0);
        g_assert_cmpint(moat_rtp_find_extension(p, &h, 200, &data, &len), ==, MOAT_RTP_OK);
        g_assert_cmpmem(data, len, "abc", 3);
        g_assert_cmpint(moat_rtp_find_extension(p, &h, 20, &data, &len), ==, MOAT_RTP_OK);
        g_assert_cmpuint(len, ==, 1);
        g_assert_cmpuint(data[0], ==, 0x77);
        g_assert_cmpint(moat_rtp_find_extension(p, &h, 2, &data, &len), ==, MOAT_RTP_ERR_NOT_FOUND);
    }
    /* A lone id octet at the very end has no length octet. */
    const uint8_t cut[] = {0x00, 0x00, 0x00, 0x05};
    size_t n = with_extension(p, 0x1000, cut, sizeof(cut));
    g_assert_cmpint(moat_rtp_parse(p, n, &h), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtp_find_extension(p, &h, 5, &data, &len), ==, MOAT_RTP_ERR_MALFORMED);
    /* A length running past the end. */
    const uint8_t over[] = {0x05, 0x03, 0x00, 0x00};
    n = with_extension(p, 0x1000, over, sizeof(over));
    g_assert_cmpint(moat_rtp_parse(p, n, &h), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtp_find_extension(p, &h, 5, &data, &len), ==, MOAT_RTP_ERR_MALFORMED);
}

static void test_setters(void)
{
    uint8_t p[sizeof(complex_packet)];
    memcpy(p, complex_packet, sizeof(p));
    moat_rtp_set_ssrc(p, 0xDEADBEEF);
    moat_rtp_set_sequence(p, 0xFFFE);
    moat_rtp_set_timestamp(p, 0x80000001);
    moat_rtp_set_payload_type(p, 0xE0); /* masked to 7 bits: 96 */
    moat_rtp_header h;
    g_assert_cmpint(moat_rtp_parse(p, sizeof(p), &h), ==, MOAT_RTP_OK);
    g_assert_cmpuint(h.ssrc, ==, 0xDEADBEEF);
    g_assert_cmpuint(h.sequence, ==, 0xFFFE);
    g_assert_cmpuint(h.timestamp, ==, 0x80000001);
    g_assert_cmpuint(h.payload_type, ==, 96);
    g_assert_true(h.marker);
    /* Nothing after the fixed header moved. */
    g_assert_cmpmem(p + 12, sizeof(p) - 12, complex_packet + 12, sizeof(p) - 12);
}

static void test_is_rtcp(void)
{
    uint8_t p[2] = {0x80, 0};
    for (unsigned v = 0; v < 256; v++) {
        p[1] = (uint8_t)v;
        g_assert_true(moat_rtp_is_rtcp(p, 2) == (v >= 192 && v <= 223));
    }
    p[1] = 200;
    g_assert_false(moat_rtp_is_rtcp(p, 1));
    g_assert_false(moat_rtp_is_rtcp(NULL, 2));
    /* RTP with the marker set and PT 96 (second octet 224) stays RTP. */
    p[1] = 0x80 | 96;
    g_assert_false(moat_rtp_is_rtcp(p, 2));
}

static void test_strerror(void)
{
    for (int rc = MOAT_RTP_OK; rc >= MOAT_RTP_ERR_RATE_LIMITED; rc--) {
        g_assert_nonnull(moat_rtp_strerror(rc));
        g_assert_cmpstr(moat_rtp_strerror(rc), !=, "unknown error");
    }
    g_assert_cmpstr(moat_rtp_strerror(-1000), ==, "unknown error");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rtp/packet/parse-plain", test_parse_plain);
    g_test_add_func("/rtp/packet/parse-complex", test_parse_complex);
    g_test_add_func("/rtp/packet/parse-padding-only", test_parse_padding_only);
    g_test_add_func("/rtp/packet/parse-invalid", test_parse_invalid);
    g_test_add_func("/rtp/packet/parse-every-truncation", test_parse_every_truncation);
    g_test_add_func("/rtp/packet/extension-one-byte", test_extension_one_byte);
    g_test_add_func("/rtp/packet/extension-one-byte-edges", test_extension_one_byte_edges);
    g_test_add_func("/rtp/packet/one-byte-walk", test_one_byte_walk);
    g_test_add_func("/rtp/packet/extension-two-byte", test_extension_two_byte);
    g_test_add_func("/rtp/packet/setters", test_setters);
    g_test_add_func("/rtp/packet/is-rtcp", test_is_rtcp);
    g_test_add_func("/rtp/packet/strerror", test_strerror);
    return g_test_run();
}
