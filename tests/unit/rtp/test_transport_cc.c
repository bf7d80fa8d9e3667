/* Transport-wide feedback (rtp/transport_cc.h) against the draft's format
 * (draft-holmer-rmcat-transport-wide-cc-extensions-01 section 3.1): the
 * exact bytes of a feedback with a loss, a negative (large) delta and a
 * run, its parse back, and the recorder's timing and sequence wraparound. */
#include <glib.h>
#include <string.h>

#include "rtp/transport_cc.h"

static int parse_one(const uint8_t *buf, size_t length, moat_twcc_header *h, int64_t *arrival,
                     size_t max)
{
    moat_rtcp_iter it;
    moat_rtcp_header header;
    moat_rtcp_iter_init(&it, buf, length);
    g_assert_cmpint(moat_rtcp_iter_next(&it, &header), >, 0);
    moat_rtcp_fb fb;
    g_assert_cmpint(moat_rtcp_parse_fb(&header, &fb), ==, MOAT_RTP_OK);
    return moat_twcc_parse(&fb, h, arrival, max);
}

static void test_build_bytes(void)
{
    int64_t a[24];
    a[0] = 1000000;
    a[1] = -1;
    a[2] = 1001000;
    a[3] = 1000000; /* reordered: -1 ms, a large delta */
    for (int k = 1; k <= 20; k++)
        a[3 + k] = 1001000 + k * 1000;
    uint8_t buf[256];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof buf);
    g_assert_cmpint(moat_twcc_build(&w, 0x11223344, 0x55667788, 100, a, 24, 7), ==, MOAT_RTP_OK);
    const uint8_t want[] = {
        0x8f, 205,  0x00, 11,                     /* V=2 FMT=15 RTPFB, 12 words after */
        0x11, 0x22, 0x33, 0x44,                   /* sender */
        0x55, 0x66, 0x77, 0x88,                   /* media source */
        0x00, 100,  0x00, 24,                     /* base 100, 24 statuses */
        0x00, 0x00, 15,   7,                      /* reference 15 x 64 ms, fb count 7 */
        0xd1, 0x95,                               /* 2-bit vector: S L S X S S S */
        0x20, 0x11,                               /* run of 17 small */
        160,  4,    0xff, 0xfc, 8, 4, 4, 4, 4, 4, /* deltas, 250 us */
        4,    4,    4,    4,    4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    };
    g_assert_cmpuint(w.length, ==, sizeof want);
    g_assert_cmpmem(buf, w.length, want, sizeof want);

    moat_twcc_header h;
    int64_t back[24];
    g_assert_cmpint(parse_one(buf, w.length, &h, back, 24), ==, 24);
    g_assert_cmpuint(h.base_seq, ==, 100);
    g_assert_cmpuint(h.status_count, ==, 24);
    g_assert_cmpint(h.reference_time, ==, 15);
    g_assert_cmpuint(h.fb_count, ==, 7);
    for (int i = 0; i < 24; i++)
        g_assert_cmpint(back[i], ==, a[i]);
    /* Fewer taken than there are: only those. */
    g_assert_cmpint(parse_one(buf, w.length, &h, back, 3), ==, 3);
    /* Every truncation of the FCI is refused, never read past. */
    for (size_t cut = 16; cut < w.length - 2; cut += 1) {
        moat_rtcp_fb fb = {
            .type = MOAT_RTCP_RTPFB, .fmt = 15, .fci = buf + 12, .fci_length = cut - 12};
        g_assert_cmpint(moat_twcc_parse(&fb, &h, back, 24), <, 0);
    }
}

static void test_one_bit_vector_and_limits(void)
{
    /* Alternating received and lost, no large delta: one-bit vectors. */
    int64_t a[30];
    for (int i = 0; i < 30; i++)
        a[i] = i % 2 ? -1 : 5000000 + i * 500;
    uint8_t buf[256];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof buf);
    g_assert_cmpint(moat_twcc_build(&w, 1, 2, 65530, a, 30, 0), ==, MOAT_RTP_OK);
    g_assert_cmpuint(buf[20], ==, 0xaa); /* 1 0 101010 10101010 */
    g_assert_cmpuint(buf[21], ==, 0xaa);
    moat_twcc_header h;
    int64_t back[30];
    g_assert_cmpint(parse_one(buf, w.length, &h, back, 30), ==, 30);
    for (int i = 0; i < 30; i++)
        g_assert_cmpint(back[i], ==, a[i]);
    g_assert_cmpint(moat_twcc_build(&w, 1, 2, 0, a, 0, 0), ==, MOAT_RTP_ERR_INVALID);
    g_assert_cmpint(moat_twcc_build(&w, 1, 2, 0, a, MOAT_TWCC_MAX_STATUS + 1, 0), ==,
                    MOAT_RTP_ERR_INVALID);
}

static void test_recorder(void)
{
    moat_twcc_recorder *r = g_new(moat_twcc_recorder, 1);
    moat_twcc_recorder_init(r);
    uint8_t buf[1200];
    moat_rtcp_writer w;
    uint64_t t = 10000000;
    /* 65534..3 across the wrap, 0 lost. */
    const uint16_t seqs[] = {65534, 65535, 1, 2, 3};
    for (size_t i = 0; i < G_N_ELEMENTS(seqs); i++)
        moat_twcc_recorder_on_packet(r, seqs[i], t + i * 1000);
    moat_rtcp_writer_init(&w, buf, sizeof buf);
    g_assert_cmpint(moat_twcc_recorder_build(r, &w, 9, 8, t + 5000), ==, 1);
    moat_twcc_header h;
    int64_t back[8];
    g_assert_cmpint(parse_one(buf, w.length, &h, back, 8), ==, 6);
    g_assert_cmpuint(h.base_seq, ==, 65534);
    g_assert_cmpint(back[2], ==, -1);
    g_assert_cmpint(back[3] - back[0], ==, 2000);
    g_assert_cmpuint(h.fb_count, ==, 0);
    /* Nothing before the interval; a late packet already reported lost
     * stays out; the next feedback counts on. */
    moat_twcc_recorder_on_packet(r, 0, t + 6000);
    moat_twcc_recorder_on_packet(r, 4, t + 7000);
    moat_rtcp_writer_init(&w, buf, sizeof buf);
    g_assert_cmpint(moat_twcc_recorder_build(r, &w, 9, 8, t + 10000), ==, 0);
    g_assert_cmpint(moat_twcc_recorder_build(r, &w, 9, 8, t + 5000 + MOAT_TWCC_INTERVAL_US), ==, 1);
    g_assert_cmpint(parse_one(buf, w.length, &h, back, 8), ==, 1);
    g_assert_cmpuint(h.base_seq, ==, 4);
    g_assert_cmpuint(h.fb_count, ==, 1);
    g_free(r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/transport-cc/build-bytes", test_build_bytes);
    g_test_add_func("/transport-cc/one-bit-vector", test_one_bit_vector_and_limits);
    g_test_add_func("/transport-cc/recorder", test_recorder);
    return g_test_run();
}
