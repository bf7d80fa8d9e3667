/* libFuzzer target for RTCP: the input is a compound packet. Every packet is
 * handed to every parser; what parses is rebuilt with the builders and
 * parsed again, and must come back the same. Any broken invariant aborts. */
#include <stdlib.h>
#include <string.h>

#include "rtp/rtcp_feedback.h"
#include "rtp/rtcp_packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

#define MAX_NACK 1024

static bool inside(const uint8_t *p, size_t len, const moat_rtcp_header *h)
{
    return p >= h->body && p + len <= h->body + h->body_length;
}

static moat_rtcp_header only(const uint8_t *buf, size_t len)
{
    moat_rtcp_iter it;
    moat_rtcp_header h;
    moat_rtcp_iter_init(&it, buf, len);
    CHECK(moat_rtcp_iter_next(&it, &h) == 1);
    return h;
}

static bool same_block(const moat_rtcp_report_block *a, const moat_rtcp_report_block *b)
{
    return a->ssrc == b->ssrc && a->fraction_lost == b->fraction_lost &&
           a->cumulative_lost == b->cumulative_lost && a->highest_sequence == b->highest_sequence &&
           a->jitter == b->jitter && a->last_sr == b->last_sr &&
           a->delay_since_last_sr == b->delay_since_last_sr;
}

static void fuzz_sr_rr(const moat_rtcp_header *h)
{
    uint8_t buf[1024];
    moat_rtcp_writer w;
    moat_rtcp_sr sr, sr2;
    moat_rtcp_rr rr, rr2;
    if (moat_rtcp_parse_sr(h, &sr) == MOAT_RTP_OK) {
        moat_rtcp_writer_init(&w, buf, sizeof(buf));
        CHECK(moat_rtcp_build_sr(&w, &sr) == MOAT_RTP_OK);
        moat_rtcp_header h2 = only(buf, w.length);
        CHECK(moat_rtcp_parse_sr(&h2, &sr2) == MOAT_RTP_OK);
        CHECK(sr2.ssrc == sr.ssrc && sr2.ntp_timestamp == sr.ntp_timestamp &&
              sr2.rtp_timestamp == sr.rtp_timestamp && sr2.packet_count == sr.packet_count &&
              sr2.octet_count == sr.octet_count && sr2.n_reports == sr.n_reports);
        for (size_t i = 0; i < sr.n_reports; i++)
            CHECK(same_block(&sr.reports[i], &sr2.reports[i]));
    }
    if (moat_rtcp_parse_rr(h, &rr) == MOAT_RTP_OK) {
        moat_rtcp_writer_init(&w, buf, sizeof(buf));
        CHECK(moat_rtcp_build_rr(&w, rr.ssrc, rr.reports, rr.n_reports) == MOAT_RTP_OK);
        moat_rtcp_header h2 = only(buf, w.length);
        CHECK(moat_rtcp_parse_rr(&h2, &rr2) == MOAT_RTP_OK);
        CHECK(rr2.ssrc == rr.ssrc && rr2.n_reports == rr.n_reports);
        for (size_t i = 0; i < rr.n_reports; i++)
            CHECK(same_block(&rr.reports[i], &rr2.reports[i]));
    }
}

static void fuzz_sdes_bye(const moat_rtcp_header *h)
{
    moat_rtcp_sdes sdes, sdes2;
    if (moat_rtcp_parse_sdes(h, &sdes) == MOAT_RTP_OK) {
        CHECK(sdes.n_chunks == h->count);
        for (size_t i = 0; i < sdes.n_chunks; i++) {
            const moat_rtcp_sdes_chunk *c = &sdes.chunks[i];
            if (c->cname == NULL)
                continue;
            CHECK(inside(c->cname, c->cname_length, h));
            if (c->cname_length == 0)
                continue;
            uint8_t buf[300];
            moat_rtcp_writer w;
            moat_rtcp_writer_init(&w, buf, sizeof(buf));
            CHECK(moat_rtcp_build_sdes_cname(&w, c->ssrc, (const char *)c->cname,
                                             c->cname_length) == MOAT_RTP_OK);
            moat_rtcp_header h2 = only(buf, w.length);
            CHECK(moat_rtcp_parse_sdes(&h2, &sdes2) == MOAT_RTP_OK);
            CHECK(sdes2.n_chunks == 1 && sdes2.chunks[0].ssrc == c->ssrc &&
                  sdes2.chunks[0].cname_length == c->cname_length &&
                  memcmp(sdes2.chunks[0].cname, c->cname, c->cname_length) == 0);
        }
    }
    moat_rtcp_bye bye;
    if (moat_rtcp_parse_bye(h, &bye) == MOAT_RTP_OK && bye.reason != NULL)
        CHECK(inside(bye.reason, bye.reason_length, h));
}

static void fuzz_nack(const moat_rtcp_fb *fb)
{
    uint16_t seqs[MAX_NACK];
    int n = moat_rtcp_nack_expand(fb, seqs, MAX_NACK);
    CHECK(n <= MAX_NACK);
    if (n <= 0)
        return;
    /* Rebuilt from the expansion, the NACK names the same set of numbers. */
    static const size_t bitmap_words = 65536 / 64;
    uint64_t *want = calloc(bitmap_words, sizeof(uint64_t));
    uint64_t *got = calloc(bitmap_words, sizeof(uint64_t));
    size_t cap = 12 + 4 * (size_t)n;
    uint8_t *buf = malloc(cap);
    uint16_t *again = malloc(sizeof(uint16_t) * 17 * (size_t)n);
    if (want == NULL || got == NULL || buf == NULL || again == NULL)
        goto out;
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, buf, cap);
    CHECK(moat_rtcp_build_nack(&w, fb->sender_ssrc, fb->media_ssrc, seqs, (size_t)n) ==
          MOAT_RTP_OK);
    moat_rtcp_header h2 = only(buf, w.length);
    moat_rtcp_fb fb2;
    CHECK(moat_rtcp_parse_fb(&h2, &fb2) == MOAT_RTP_OK);
    int m = moat_rtcp_nack_expand(&fb2, again, 17 * (size_t)n);
    CHECK(m > 0);
    for (int i = 0; i < n; i++)
        want[seqs[i] / 64] |= (uint64_t)1 << (seqs[i] % 64);
    for (int i = 0; i < m; i++)
        got[again[i] / 64] |= (uint64_t)1 << (again[i] % 64);
    CHECK(memcmp(want, got, bitmap_words * sizeof(uint64_t)) == 0);
out:
    free(want);
    free(got);
    free(buf);
    free(again);
}

static void fuzz_feedback(const moat_rtcp_header *h)
{
    moat_rtcp_fb fb;
    if (moat_rtcp_parse_fb(h, &fb) != MOAT_RTP_OK)
        return;
    CHECK(inside(fb.fci, fb.fci_length, h));
    fuzz_nack(&fb);

    moat_rtcp_fir_entry fir[8];
    int n = moat_rtcp_parse_fir(&fb, fir, 8);
    if (n > 0) {
        uint8_t buf[12 + 8 * 8];
        moat_rtcp_writer w;
        moat_rtcp_writer_init(&w, buf, sizeof(buf));
        size_t kept = n < 8 ? (size_t)n : 8;
        CHECK(moat_rtcp_build_fir(&w, fb.sender_ssrc, fir, kept) == MOAT_RTP_OK);
        moat_rtcp_header h2 = only(buf, w.length);
        moat_rtcp_fb fb2;
        moat_rtcp_fir_entry fir2[8];
        CHECK(moat_rtcp_parse_fb(&h2, &fb2) == MOAT_RTP_OK);
        CHECK(moat_rtcp_parse_fir(&fb2, fir2, 8) == (int)kept);
        for (size_t i = 0; i < kept; i++)
            CHECK(fir2[i].ssrc == fir[i].ssrc && fir2[i].sequence == fir[i].sequence);
    }

    moat_rtcp_remb remb, remb2;
    if (moat_rtcp_parse_remb(&fb, &remb) == MOAT_RTP_OK) {
        size_t kept =
            remb.n_ssrcs < MOAT_RTCP_REMB_MAX_SSRCS ? remb.n_ssrcs : MOAT_RTCP_REMB_MAX_SSRCS;
        uint8_t buf[12 + 8 + 4 * MOAT_RTCP_REMB_MAX_SSRCS];
        moat_rtcp_writer w;
        moat_rtcp_writer_init(&w, buf, sizeof(buf));
        CHECK(moat_rtcp_build_remb(&w, fb.sender_ssrc, remb.bitrate, remb.ssrcs, kept) ==
              MOAT_RTP_OK);
        moat_rtcp_header h2 = only(buf, w.length);
        moat_rtcp_fb fb2;
        CHECK(moat_rtcp_parse_fb(&h2, &fb2) == MOAT_RTP_OK);
        CHECK(moat_rtcp_parse_remb(&fb2, &remb2) == MOAT_RTP_OK);
        CHECK(remb2.bitrate <= remb.bitrate && remb2.n_ssrcs == kept);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int total = moat_rtcp_check_compound(data, size);
    moat_rtcp_iter it;
    moat_rtcp_header h;
    int count = 0;
    int rc;
    size_t covered = 0;
    moat_rtcp_iter_init(&it, data, size);
    while ((rc = moat_rtcp_iter_next(&it, &h)) > 0) {
        CHECK(h.packet == data + covered);
        CHECK(h.length >= 4 && h.length % 4 == 0 && covered + h.length <= size);
        CHECK(h.body + h.body_length <= h.packet + h.length);
        covered += h.length;
        count++;
        fuzz_sr_rr(&h);
        fuzz_sdes_bye(&h);
        fuzz_feedback(&h);
    }
    /* The iterator and the whole-compound check agree. */
    if (rc == 0) {
        CHECK(covered == size);
        CHECK(total == count || (size == 0 && total < 0));
    } else {
        CHECK(total == rc);
    }
    return 0;
}
