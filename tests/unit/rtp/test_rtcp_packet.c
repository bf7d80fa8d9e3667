/* RTCP compound iteration and the SR, RR, SDES and BYE parsers and builders,
 * each builder checked by parsing what it wrote. */
#include <glib.h>
#include <string.h>

#include "rtp/rtcp_packet.h"

static moat_rtcp_report_block block(uint32_t ssrc, int32_t lost)
{
    moat_rtcp_report_block rb = {
        .ssrc = ssrc,
        .fraction_lost = 64,
        .cumulative_lost = lost,
        .highest_sequence = 0x0001FFFF,
        .jitter = 1234,
        .last_sr = 0x89ABCDEF,
        .delay_since_last_sr = 65536,
    };
    return rb;
}

/* Returns the only packet of a buffer. */
static moat_rtcp_header only_packet(const uint8_t *buf, size_t len)
{
    moat_rtcp_iter it;
    moat_rtcp_header h;
    moat_rtcp_iter_init(&it, buf, len);
    g_assert_cmpint(moat_rtcp_iter_next(&it, &h), ==, 1);
    moat_rtcp_header end;
    g_assert_cmpint(moat_rtcp_iter_next(&it, &end), ==, 0);
    return h;
}

static void assert_block_eq(const moat_rtcp_report_block *a, const moat_rtcp_report_block *b)
{
    g_assert_cmpuint(a->ssrc, ==, b->ssrc);
    g_assert_cmpuint(a->fraction_lost, ==, b->fraction_lost);
    g_assert_cmpint(a->cumulative_lost, ==, b->cumulative_lost);
    g_assert_cmpuint(a->highest_sequence, ==, b->highest_sequence);
    g_assert_cmpuint(a->jitter, ==, b->jitter);
    g_assert_cmpuint(a->last_sr, ==, b->last_sr);
    g_assert_cmpuint(a->delay_since_last_sr, ==, b->delay_since_last_sr);
}

static void test_sr_roundtrip(void)
{
    moat_rtcp_sr sr = {
        .ssrc = 0x11111111,
        .ntp_timestamp = 0xE3A1B2C3D4E5F607ull,
        .rtp_timestamp = 90000,
        .packet_count = 1000,
        .octet_count = 1200000,
        .n_reports = 2,
    };
    sr.reports[0] = block(0x22222222, 5);
    sr.reports[1] = block(0x33333333, -3);
    uint8_t buf[256];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_sr(&w, &sr), ==, MOAT_RTP_OK);
    g_assert_cmpuint(w.length, ==, 4 + 24 + 2 * 24);
    /* Header: V=2, RC=2, PT=200, length in words minus one. */
    g_assert_cmpuint(buf[0], ==, 0x82);
    g_assert_cmpuint(buf[1], ==, 200);
    g_assert_cmpuint(buf[3], ==, (4 + 24 + 48) / 4 - 1);

    moat_rtcp_header h = only_packet(buf, w.length);
    moat_rtcp_sr out;
    g_assert_cmpint(moat_rtcp_parse_sr(&h, &out), ==, MOAT_RTP_OK);
    g_assert_cmpuint(out.ssrc, ==, sr.ssrc);
    g_assert_cmpuint(out.ntp_timestamp, ==, sr.ntp_timestamp);
    g_assert_cmpuint(out.rtp_timestamp, ==, sr.rtp_timestamp);
    g_assert_cmpuint(out.packet_count, ==, sr.packet_count);
    g_assert_cmpuint(out.octet_count, ==, sr.octet_count);
    g_assert_cmpuint(out.n_reports, ==, 2);
    assert_block_eq(&out.reports[0], &sr.reports[0]);
    assert_block_eq(&out.reports[1], &sr.reports[1]);
    /* -3 on the wire is 24-bit two's complement. */
    g_assert_cmpmem(buf + 28 + 24 + 5, 3, "\xFF\xFF\xFD", 3);

    moat_rtcp_rr rr;
    g_assert_cmpint(moat_rtcp_parse_rr(&h, &rr), ==, MOAT_RTP_ERR_TYPE);
    /* A count the body cannot hold. */
    buf[0] = 0x83;
    h = only_packet(buf, w.length);
    g_assert_cmpint(moat_rtcp_parse_sr(&h, &out), ==, MOAT_RTP_ERR_TRUNCATED);
}

static void test_rr_roundtrip(void)
{
    moat_rtcp_report_block blocks[MOAT_RTCP_MAX_COUNT + 1];
    for (size_t i = 0; i < G_N_ELEMENTS(blocks); i++)
        blocks[i] = block(0x1000 + (uint32_t)i, (int32_t)i * 1000 - 5000);
    /* Outside the 24-bit range: clamped. */
    blocks[0].cumulative_lost = 9000000;
    blocks[1].cumulative_lost = -9000000;

    uint8_t buf[1024];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_rr(&w, 0xAB, blocks, MOAT_RTCP_MAX_COUNT + 1), ==,
                    MOAT_RTP_ERR_INVALID);
    g_assert_cmpuint(w.length, ==, 0);
    g_assert_cmpint(moat_rtcp_build_rr(&w, 0xAB, blocks, MOAT_RTCP_MAX_COUNT), ==, MOAT_RTP_OK);

    moat_rtcp_header h = only_packet(buf, w.length);
    g_assert_cmpuint(h.count, ==, 31);
    moat_rtcp_rr rr;
    g_assert_cmpint(moat_rtcp_parse_rr(&h, &rr), ==, MOAT_RTP_OK);
    g_assert_cmpuint(rr.ssrc, ==, 0xAB);
    g_assert_cmpuint(rr.n_reports, ==, 31);
    g_assert_cmpint(rr.reports[0].cumulative_lost, ==, 0x7FFFFF);
    g_assert_cmpint(rr.reports[1].cumulative_lost, ==, -0x800000);
    for (size_t i = 2; i < 31; i++)
        assert_block_eq(&rr.reports[i], &blocks[i]);

    /* An empty RR is 8 octets. */
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_rr(&w, 7, NULL, 0), ==, MOAT_RTP_OK);
    g_assert_cmpuint(w.length, ==, 8);
    h = only_packet(buf, w.length);
    g_assert_cmpint(moat_rtcp_parse_rr(&h, &rr), ==, MOAT_RTP_OK);
    g_assert_cmpuint(rr.n_reports, ==, 0);
    g_assert_cmpuint(rr.ssrc, ==, 7);
}

static void test_sdes_roundtrip(void)
{
    char cname[256];
    memset(cname, 'c', sizeof(cname));
    /* Every alignment of the chunk's end. */
    for (size_t len = 1; len <= 255; len++) {
        uint8_t buf[300];
        moat_rtcp_writer w;
        moat_rtcp_writer_init(&w, buf, sizeof(buf));
        g_assert_cmpint(moat_rtcp_build_sdes_cname(&w, 0x5151, cname, len), ==, MOAT_RTP_OK);
        g_assert_cmpuint(w.length % 4, ==, 0);
        moat_rtcp_header h = only_packet(buf, w.length);
        moat_rtcp_sdes sdes;
        g_assert_cmpint(moat_rtcp_parse_sdes(&h, &sdes), ==, MOAT_RTP_OK);
        g_assert_cmpuint(sdes.n_chunks, ==, 1);
        g_assert_cmpuint(sdes.chunks[0].ssrc, ==, 0x5151);
        g_assert_cmpmem(sdes.chunks[0].cname, sdes.chunks[0].cname_length, cname, len);
    }
    uint8_t buf[8];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_sdes_cname(&w, 1, cname, 256), ==, MOAT_RTP_ERR_INVALID);
    g_assert_cmpint(moat_rtcp_build_sdes_cname(&w, 1, cname, 0), ==, MOAT_RTP_ERR_INVALID);
    g_assert_cmpint(moat_rtcp_build_sdes_cname(&w, 1, cname, 4), ==, MOAT_RTP_ERR_NO_SPACE);
}

static void test_sdes_two_chunks(void)
{
    /* Chunk 1: NAME "bob", CNAME "ab", END. Chunk 2: no CNAME, EMAIL "e". */
    static const uint8_t pkt[] = {
        0x82, 202,  0x00, 0x06,                         /* SC=2, 6 words follow */
        0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 'b',  'o',  /* SSRC 1, NAME */
        'b',  0x01, 0x02, 'a',  'b',  0x00, 0x00, 0x00, /* CNAME, END, pad */
        0x00, 0x00, 0x00, 0x02, 0x03, 0x01, 'e',  0x00, /* SSRC 2, EMAIL, END */
    };
    moat_rtcp_header h = only_packet(pkt, sizeof(pkt));
    moat_rtcp_sdes sdes;
    g_assert_cmpint(moat_rtcp_parse_sdes(&h, &sdes), ==, MOAT_RTP_OK);
    g_assert_cmpuint(sdes.n_chunks, ==, 2);
    g_assert_cmpuint(sdes.chunks[0].ssrc, ==, 1);
    g_assert_cmpmem(sdes.chunks[0].cname, sdes.chunks[0].cname_length, "ab", 2);
    g_assert_cmpuint(sdes.chunks[1].ssrc, ==, 2);
    g_assert_null(sdes.chunks[1].cname);

    /* Claiming a third chunk that is not there. */
    uint8_t bad[sizeof(pkt)];
    memcpy(bad, pkt, sizeof(pkt));
    bad[0] = 0x83;
    h = only_packet(bad, sizeof(bad));
    g_assert_cmpint(moat_rtcp_parse_sdes(&h, &sdes), ==, MOAT_RTP_ERR_TRUNCATED);
    /* An item whose length runs past the packet. */
    memcpy(bad, pkt, sizeof(pkt));
    bad[25] = 0x09;
    h = only_packet(bad, sizeof(bad));
    g_assert_cmpint(moat_rtcp_parse_sdes(&h, &sdes), ==, MOAT_RTP_ERR_TRUNCATED);
    /* A chunk without END before the packet ends. */
    memcpy(bad, pkt, sizeof(pkt));
    bad[27] = 'x';
    h = only_packet(bad, sizeof(bad));
    g_assert_cmpint(moat_rtcp_parse_sdes(&h, &sdes), ==, MOAT_RTP_ERR_TRUNCATED);
}

static void test_bye_roundtrip(void)
{
    const uint32_t ssrcs[] = {0xA, 0xB, 0xC};
    uint8_t buf[64];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_bye(&w, ssrcs, 3, "gone", 4), ==, MOAT_RTP_OK);
    g_assert_cmpuint(w.length, ==, 4 + 12 + 8);
    moat_rtcp_header h = only_packet(buf, w.length);
    moat_rtcp_bye bye;
    g_assert_cmpint(moat_rtcp_parse_bye(&h, &bye), ==, MOAT_RTP_OK);
    g_assert_cmpuint(bye.n_ssrcs, ==, 3);
    g_assert_cmpuint(bye.ssrcs[2], ==, 0xC);
    g_assert_cmpmem(bye.reason, bye.reason_length, "gone", 4);

    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    g_assert_cmpint(moat_rtcp_build_bye(&w, ssrcs, 1, NULL, 0), ==, MOAT_RTP_OK);
    h = only_packet(buf, w.length);
    g_assert_cmpint(moat_rtcp_parse_bye(&h, &bye), ==, MOAT_RTP_OK);
    g_assert_cmpuint(bye.n_ssrcs, ==, 1);
    g_assert_null(bye.reason);

    /* A reason length past the end of the packet. */
    static const uint8_t bad[] = {0x81, 203, 0x00, 0x02, 0, 0, 0, 1, 0x09, 'a', 'b', 'c'};
    h = only_packet(bad, sizeof(bad));
    g_assert_cmpint(moat_rtcp_parse_bye(&h, &bye), ==, MOAT_RTP_ERR_MALFORMED);
}

static void test_compound(void)
{
    uint8_t buf[256];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    moat_rtcp_report_block rb = block(0x77, 1);
    uint32_t me = 0x66;
    g_assert_cmpint(moat_rtcp_build_rr(&w, me, &rb, 1), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtcp_build_sdes_cname(&w, me, "moat", 4), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtcp_build_bye(&w, &me, 1, NULL, 0), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_rtcp_check_compound(buf, w.length), ==, 3);

    moat_rtcp_iter it;
    moat_rtcp_header h;
    const uint8_t types[] = {MOAT_RTCP_RR, MOAT_RTCP_SDES, MOAT_RTCP_BYE};
    size_t n = 0;
    size_t total = 0;
    moat_rtcp_iter_init(&it, buf, w.length);
    while (moat_rtcp_iter_next(&it, &h) > 0) {
        g_assert_cmpuint(n, <, 3);
        g_assert_cmpuint(h.type, ==, types[n]);
        g_assert_true(h.packet == buf + total);
        total += h.length;
        n++;
    }
    g_assert_cmpuint(n, ==, 3);
    g_assert_cmpuint(total, ==, w.length);
}

static void test_writer_no_space(void)
{
    uint8_t buf[40];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, sizeof(buf));
    moat_rtcp_report_block rb = block(1, 0);
    g_assert_cmpint(moat_rtcp_build_rr(&w, 1, &rb, 1), ==, MOAT_RTP_OK); /* 32 */
    memset(buf + 32, 0xEE, 8);
    /* Neither fits the 8 octets left; nothing is written. */
    g_assert_cmpint(moat_rtcp_build_rr(&w, 1, &rb, 1), ==, MOAT_RTP_ERR_NO_SPACE);
    g_assert_cmpint(moat_rtcp_build_sdes_cname(&w, 1, "abc", 3), ==, MOAT_RTP_ERR_NO_SPACE);
    g_assert_cmpuint(w.length, ==, 32);
    for (size_t i = 32; i < 40; i++)
        g_assert_cmpuint(buf[i], ==, 0xEE);
    g_assert_cmpint(moat_rtcp_build_rr(&w, 1, NULL, 0), ==, MOAT_RTP_OK);
    g_assert_cmpuint(w.length, ==, 40);

    uint8_t *body;
    g_assert_cmpint(moat_rtcp_writer_begin(&w, 0, 204, 6, &body), ==, MOAT_RTP_ERR_INVALID);
    g_assert_cmpint(moat_rtcp_writer_begin(&w, 32, 204, 8, &body), ==, MOAT_RTP_ERR_INVALID);
}

static void test_iter_errors(void)
{
    moat_rtcp_iter it;
    moat_rtcp_header h;
    /* An empty RR followed by three stray octets. */
    static const uint8_t trailing[] = {0x80, 201, 0, 1, 0, 0, 0, 1, 0x80, 201, 0};
    moat_rtcp_iter_init(&it, trailing, sizeof(trailing));
    g_assert_cmpint(moat_rtcp_iter_next(&it, &h), ==, 1);
    g_assert_cmpint(moat_rtcp_iter_next(&it, &h), ==, MOAT_RTP_ERR_TRUNCATED);
    /* Errors are sticky. */
    g_assert_cmpint(moat_rtcp_iter_next(&it, &h), ==, MOAT_RTP_ERR_TRUNCATED);
    g_assert_cmpint(moat_rtcp_check_compound(trailing, sizeof(trailing)), ==,
                    MOAT_RTP_ERR_TRUNCATED);

    static const uint8_t too_long[] = {0x80, 201, 0, 2, 0, 0, 0, 1};
    g_assert_cmpint(moat_rtcp_check_compound(too_long, sizeof(too_long)), ==, MOAT_RTP_ERR_LENGTH);
    static const uint8_t version[] = {0x40, 201, 0, 1, 0, 0, 0, 1};
    g_assert_cmpint(moat_rtcp_check_compound(version, sizeof(version)), ==, MOAT_RTP_ERR_VERSION);
    static const uint8_t pad_zero[] = {0xA0, 201, 0, 1, 0, 0, 0, 0};
    g_assert_cmpint(moat_rtcp_check_compound(pad_zero, sizeof(pad_zero)), ==, MOAT_RTP_ERR_PADDING);
    static const uint8_t pad_big[] = {0xA0, 201, 0, 1, 0, 0, 0, 5};
    g_assert_cmpint(moat_rtcp_check_compound(pad_big, sizeof(pad_big)), ==, MOAT_RTP_ERR_PADDING);
    g_assert_cmpint(moat_rtcp_check_compound(NULL, 0), ==, MOAT_RTP_ERR_TRUNCATED);

    /* Padding is taken off the body. */
    static const uint8_t padded[] = {0xA0, 201, 0, 2, 0, 0, 0, 9, 0, 0, 0, 4};
    moat_rtcp_iter_init(&it, padded, sizeof(padded));
    g_assert_cmpint(moat_rtcp_iter_next(&it, &h), ==, 1);
    g_assert_cmpuint(h.length, ==, 12);
    g_assert_cmpuint(h.body_length, ==, 4);
    moat_rtcp_rr rr;
    g_assert_cmpint(moat_rtcp_parse_rr(&h, &rr), ==, MOAT_RTP_OK);
    g_assert_cmpuint(rr.ssrc, ==, 9);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rtcp/packet/sr-roundtrip", test_sr_roundtrip);
    g_test_add_func("/rtcp/packet/rr-roundtrip", test_rr_roundtrip);
    g_test_add_func("/rtcp/packet/sdes-roundtrip", test_sdes_roundtrip);
    g_test_add_func("/rtcp/packet/sdes-two-chunks", test_sdes_two_chunks);
    g_test_add_func("/rtcp/packet/bye-roundtrip", test_bye_roundtrip);
    g_test_add_func("/rtcp/packet/compound", test_compound);
    g_test_add_func("/rtcp/packet/writer-no-space", test_writer_no_space);
    g_test_add_func("/rtcp/packet/iter-errors", test_iter_errors);
    return g_test_run();
}
