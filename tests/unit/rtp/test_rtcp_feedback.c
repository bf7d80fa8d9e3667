/* RTCP feedback: generic NACK packing and expansion, PLI, FIR and REMB,
 * built and parsed back, and hostile feedback packets. */
#include <glib.h>
#include <string.h>

#include "rtp/rtcp_feedback.h"

static moat_rtcp_fb parse_only_fb(const uint8_t *buf, size_t len)
{
    moat_rtcp_iter it;
    moat_rtcp_header h;
    moat_rtcp_iter_init(&it, buf, len);
    g_assert_cmpint(moat_rtcp_iter_next(&it, &h), ==, 1);
    moat_rtcp_fb fb;
    g_assert_cmpint(moat_rtcp_parse_fb(&h, &fb), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtcp_iter_next(&it, &h), ==, 0);
    return fb;
}

static void test_nack_roundtrip(void)
{
    /* 100 is a PID; 101, 105 and 116 fit its bitmask; 117 is 17 away and
     * starts a second pair; 200 a third. */
    const uint16_t lost[] = {100, 101, 105, 116, 117, 200};
    uint8_t buf[64];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_nack(&w, 0xAAAA, 0xBBBB, lost, G_N_ELEMENTS(lost)), ==,
                    MOAT_RTP_OK);
    g_assert_cmpuint(w.length, ==, 12 + 3 * 4);
    g_assert_cmpuint(buf[0], ==, 0x81);
    g_assert_cmpuint(buf[1], ==, 205);
    /* First pair: PID 100, BLP bits 0 (101), 4 (105), 15 (116). */
    static const uint8_t fci[] = {0x00, 100,  0x80, 0x11, 0x00, 117,
                                  0x00, 0x00, 0x00, 200,  0x00, 0x00};
    g_assert_cmpmem(buf + 12, 12, fci, sizeof(fci));

    moat_rtcp_fb fb = parse_only_fb(buf, w.length);
    g_assert_true(moat_rtcp_fb_is_nack(&fb));
    g_assert_false(moat_rtcp_fb_is_pli(&fb));
    g_assert_cmpuint(fb.sender_ssrc, ==, 0xAAAA);
    g_assert_cmpuint(fb.media_ssrc, ==, 0xBBBB);
    uint16_t seqs[64];
    int n = moat_rtcp_nack_expand(&fb, seqs, G_N_ELEMENTS(seqs));
    g_assert_cmpint(n, ==, G_N_ELEMENTS(lost));
    g_assert_cmpmem(seqs, n * sizeof(uint16_t), lost, sizeof(lost));
}

static void test_nack_wrap_and_unsorted(void)
{
    const uint16_t wrap[] = {65534, 65535, 0, 1, 14};
    uint8_t buf[64];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_nack(&w, 1, 2, wrap, G_N_ELEMENTS(wrap)), ==, MOAT_RTP_OK);
    g_assert_cmpuint(w.length, ==, 16); /* one pair across the wrap */
    moat_rtcp_fb fb = parse_only_fb(buf, w.length);
    uint16_t seqs[32];
    int n = moat_rtcp_nack_expand(&fb, seqs, G_N_ELEMENTS(seqs));
    g_assert_cmpint(n, ==, 5);
    g_assert_cmpmem(seqs, sizeof(wrap), wrap, sizeof(wrap));

    /* Out of order and duplicated input still names every number. */
    const uint16_t messy[] = {50, 10, 50, 11, 9, 10};
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_nack(&w, 1, 2, messy, G_N_ELEMENTS(messy)), ==, MOAT_RTP_OK);
    fb = parse_only_fb(buf, w.length);
    n = moat_rtcp_nack_expand(&fb, seqs, G_N_ELEMENTS(seqs));
    g_assert_cmpint(n, >, 0);
    const uint16_t want[] = {9, 10, 11, 50};
    for (size_t k = 0; k < G_N_ELEMENTS(want); k++) {
        gboolean found = FALSE;
        for (int i = 0; i < n; i++)
            found |= seqs[i] == want[k];
        g_assert_true(found);
    }
    g_assert_cmpint(moat_rtcp_build_nack(&w, 1, 2, messy, 0), ==, MOAT_RTP_ERR_INVALID);
}

static void test_nack_expand_bounded(void)
{
    /* Two pairs with every bit set: 34 numbers, but the caller has room for
     * 20 and gets exactly 20, in order. */
    static const uint8_t pkt[] = {0x81, 205, 0x00, 0x04, 0,    0,    0,    1,    0,    0,
                                  0,    2,   0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x10, 0xFF, 0xFF};
    moat_rtcp_fb fb = parse_only_fb(pkt, sizeof(pkt));
    uint16_t seqs[40];
    g_assert_cmpint(moat_rtcp_nack_expand(&fb, seqs, 40), ==, 34);
    g_assert_cmpuint(seqs[0], ==, 65535);
    g_assert_cmpuint(seqs[1], ==, 0);
    g_assert_cmpuint(seqs[16], ==, 15);
    g_assert_cmpuint(seqs[17], ==, 16);
    g_assert_cmpuint(seqs[33], ==, 32);
    g_assert_cmpint(moat_rtcp_nack_expand(&fb, seqs, 20), ==, 20);
    g_assert_cmpuint(seqs[19], ==, 18);
    g_assert_cmpint(moat_rtcp_nack_expand(&fb, seqs, 0), ==, 0);

    /* An FCI that is not a whole number of pairs (the padding bit takes 2). */
    static const uint8_t odd[] = {0xA1, 205, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 2, 0, 5, 0, 2};
    fb = parse_only_fb(odd, sizeof(odd));
    g_assert_cmpuint(fb.fci_length, ==, 2);
    g_assert_cmpint(moat_rtcp_nack_expand(&fb, seqs, 40), ==, MOAT_RTP_ERR_MALFORMED);
}

static void test_pli(void)
{
    uint8_t buf[12];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_pli(&w, 0x01020304, 0x05060708), ==, MOAT_RTP_OK);
    static const uint8_t want[] = {0x81, 206, 0x00, 0x02, 1, 2, 3, 4, 5, 6, 7, 8};
    g_assert_cmpmem(buf, w.length, want, sizeof(want));
    moat_rtcp_fb fb = parse_only_fb(buf, w.length);
    g_assert_true(moat_rtcp_fb_is_pli(&fb));
    g_assert_false(moat_rtcp_fb_is_fir(&fb));
    g_assert_false(moat_rtcp_fb_is_nack(&fb));
    g_assert_cmpuint(fb.fci_length, ==, 0);
    g_assert_cmpint(moat_rtcp_build_pli(&w, 1, 2), ==, MOAT_RTP_ERR_NO_SPACE);
}

static void test_fir(void)
{
    const moat_rtcp_fir_entry entries[] = {{0x1111, 7}, {0x2222, 255}};
    uint8_t buf[64];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_fir(&w, 0x9999, entries, 2), ==, MOAT_RTP_OK);
    g_assert_cmpuint(w.length, ==, 12 + 16);
    moat_rtcp_fb fb = parse_only_fb(buf, w.length);
    g_assert_true(moat_rtcp_fb_is_fir(&fb));
    g_assert_cmpuint(fb.sender_ssrc, ==, 0x9999);
    g_assert_cmpuint(fb.media_ssrc, ==, 0);
    moat_rtcp_fir_entry out[4];
    g_assert_cmpint(moat_rtcp_parse_fir(&fb, out, 4), ==, 2);
    g_assert_cmpuint(out[0].ssrc, ==, 0x1111);
    g_assert_cmpuint(out[0].sequence, ==, 7);
    g_assert_cmpuint(out[1].ssrc, ==, 0x2222);
    g_assert_cmpuint(out[1].sequence, ==, 255);
    /* Room for one: the count still says two, only one is written. */
    memset(out, 0, sizeof(out));
    g_assert_cmpint(moat_rtcp_parse_fir(&fb, out, 1), ==, 2);
    g_assert_cmpuint(out[1].ssrc, ==, 0);

    /* FIR with no entry, and with half an entry. */
    static const uint8_t empty[] = {0x84, 206, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 0};
    fb = parse_only_fb(empty, sizeof(empty));
    g_assert_cmpint(moat_rtcp_parse_fir(&fb, out, 4), ==, MOAT_RTP_ERR_MALFORMED);
    static const uint8_t half[] = {0x84, 206, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1};
    fb = parse_only_fb(half, sizeof(half));
    g_assert_cmpint(moat_rtcp_parse_fir(&fb, out, 4), ==, MOAT_RTP_ERR_MALFORMED);
    g_assert_cmpint(moat_rtcp_build_fir(&w, 1, entries, 0), ==, MOAT_RTP_ERR_INVALID);
}

static void test_remb(void)
{
    const uint32_t ssrcs[] = {0xA1, 0xB2};
    uint8_t buf[64];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    /* 1 000 000 = 250 000 << 2: exact. */
    g_assert_cmpint(moat_rtcp_build_remb(&w, 0x77, 1000000, ssrcs, 2), ==, MOAT_RTP_OK);
    g_assert_cmpuint(w.length, ==, 12 + 8 + 8);
    g_assert_cmpuint(buf[0], ==, 0x8F);
    g_assert_cmpmem(buf + 12, 4, "REMB", 4);
    moat_rtcp_fb fb = parse_only_fb(buf, w.length);
    g_assert_true(moat_rtcp_fb_is_remb(&fb));
    moat_rtcp_remb remb;
    g_assert_cmpint(moat_rtcp_parse_remb(&fb, &remb), ==, MOAT_RTP_OK);
    g_assert_cmpuint(remb.bitrate, ==, 1000000);
    g_assert_cmpuint(remb.n_ssrcs, ==, 2);
    g_assert_cmpuint(remb.ssrcs[1], ==, 0xB2);

    /* A value needing more than 18 bits loses only low bits. */
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_remb(&w, 0x77, 123456789, NULL, 0), ==, MOAT_RTP_OK);
    fb = parse_only_fb(buf, w.length);
    g_assert_cmpint(moat_rtcp_parse_remb(&fb, &remb), ==, MOAT_RTP_OK);
    g_assert_cmpuint(remb.bitrate, <=, 123456789);
    g_assert_cmpuint(remb.bitrate, >, 123456789 - (123456789 >> 17));

    /* Exponent 63 with a non-zero mantissa saturates instead of overflowing. */
    static const uint8_t huge[] = {0x8F, 206, 0x00, 0x04, 0,   0,   0,    1,    0,    0,
                                   0,    0,   'R',  'E',  'M', 'B', 0x00, 0xFF, 0xFF, 0xFF};
    fb = parse_only_fb(huge, sizeof(huge));
    g_assert_cmpint(moat_rtcp_parse_remb(&fb, &remb), ==, MOAT_RTP_OK);
    g_assert_cmpuint(remb.bitrate, ==, UINT64_MAX);
    /* Built from that, it stays a rate a signed 64-bit reader takes. */
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_remb(&w, 0x77, UINT64_MAX, NULL, 0), ==, MOAT_RTP_OK);
    fb = parse_only_fb(buf, w.length);
    g_assert_cmpint(moat_rtcp_parse_remb(&fb, &remb), ==, MOAT_RTP_OK);
    g_assert_cmpuint(remb.bitrate, <=, INT64_MAX);
    g_assert_cmpuint(remb.bitrate, >, INT64_MAX - (INT64_MAX >> 17));

    /* An SSRC count larger than the packet. */
    static const uint8_t short_list[] = {0x8F, 206, 0x00, 0x04, 0,   0,   0,    1,    0, 0,
                                         0,    0,   'R',  'E',  'M', 'B', 0x03, 0x00, 0, 1};
    fb = parse_only_fb(short_list, sizeof(short_list));
    g_assert_cmpint(moat_rtcp_parse_remb(&fb, &remb), ==, MOAT_RTP_ERR_TRUNCATED);

    /* Application feedback that is not REMB. */
    static const uint8_t other[] = {0x8F, 206, 0x00, 0x03, 0,   0,   0,   1,
                                    0,    0,   0,    0,    'X', 'Y', 'Z', 'W'};
    fb = parse_only_fb(other, sizeof(other));
    g_assert_false(moat_rtcp_fb_is_remb(&fb));
    g_assert_cmpint(moat_rtcp_parse_remb(&fb, &remb), ==, MOAT_RTP_ERR_TYPE);
}

static void test_fb_errors(void)
{
    moat_rtcp_iter it;
    moat_rtcp_header h;
    moat_rtcp_fb fb;
    /* Feedback with no media SSRC. */
    static const uint8_t short_fb[] = {0x81, 206, 0x00, 0x01, 0, 0, 0, 1};
    moat_rtcp_iter_init(&it, short_fb, sizeof(short_fb));
    g_assert_cmpint(moat_rtcp_iter_next(&it, &h), ==, 1);
    g_assert_cmpint(moat_rtcp_parse_fb(&h, &fb), ==, MOAT_RTP_ERR_TRUNCATED);
    /* Not feedback at all. */
    static const uint8_t rr[] = {0x80, 201, 0x00, 0x01, 0, 0, 0, 1};
    moat_rtcp_iter_init(&it, rr, sizeof(rr));
    g_assert_cmpint(moat_rtcp_iter_next(&it, &h), ==, 1);
    g_assert_cmpint(moat_rtcp_parse_fb(&h, &fb), ==, MOAT_RTP_ERR_TYPE);
    /* Parsers refuse feedback of another kind. */
    uint8_t buf[16];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_pli(&w, 1, 2), ==, MOAT_RTP_OK);
    fb = parse_only_fb(buf, w.length);
    uint16_t seqs[4];
    moat_rtcp_fir_entry fir[2];
    moat_rtcp_remb remb;
    g_assert_cmpint(moat_rtcp_nack_expand(&fb, seqs, 4), ==, MOAT_RTP_ERR_TYPE);
    g_assert_cmpint(moat_rtcp_parse_fir(&fb, fir, 2), ==, MOAT_RTP_ERR_TYPE);
    g_assert_cmpint(moat_rtcp_parse_remb(&fb, &remb), ==, MOAT_RTP_ERR_TYPE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rtcp/feedback/nack-roundtrip", test_nack_roundtrip);
    g_test_add_func("/rtcp/feedback/nack-wrap-and-unsorted", test_nack_wrap_and_unsorted);
    g_test_add_func("/rtcp/feedback/nack-expand-bounded", test_nack_expand_bounded);
    g_test_add_func("/rtcp/feedback/pli", test_pli);
    g_test_add_func("/rtcp/feedback/fir", test_fir);
    g_test_add_func("/rtcp/feedback/remb", test_remb);
    g_test_add_func("/rtcp/feedback/errors", test_fb_errors);
    return g_test_run();
}
