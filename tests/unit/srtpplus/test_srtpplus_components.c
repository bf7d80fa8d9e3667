/* The building blocks on their own: index estimation, replay record, budget, chain
 * block and tables, the prn window, sender and receiver argument checks. */
#include "srtpplus_test_srtp.h"

#include "srtpplus_chain_table.h"
#include "srtpplus_index.h"
#include "srtpplus_prn_window.h"
#include "srtpplus_replay.h"
#include "srtpplus_rtp.h"

#include <glib.h>
#include <string.h>

static const uint8_t key16[16] = {0xa0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const uint8_t salt14[14] = {0xb0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};

static void test_index_estimate(void)
{
    static const struct {
        uint64_t highest;
        uint16_t seq;
        bool ok;
        uint64_t index;
    } cases[] = {
        {0, 0, true, 0},
        {100, 101, true, 101},
        {100, 50, true, 50},
        {100, 40000, false, 0},                  /* before index 0 */
        {65535, 0, true, 65536},                 /* wrap forward */
        {65536 + 10, 65530, true, 65530},        /* late packet from before the wrap */
        {65536 + 40000, 2, true, 2 * 65536 + 2}, /* s_l >= 2^15: next ROC */
        {(uint64_t)5 << 16 | 32768, 0, true, (uint64_t)5 << 16},
        {(uint64_t)5 << 16 | 32769, 0, true, (uint64_t)6 << 16},
        {((uint64_t)1 << 48) - 1, 3, false, 0}, /* past 2^48 - 1 */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        uint64_t index = 0;
        bool ok = srtpplus_index_estimate(cases[i].highest, cases[i].seq, &index);
        g_assert_cmpint(ok, ==, cases[i].ok);
        if (ok)
            g_assert_cmpuint(index, ==, cases[i].index);
    }
}

static void test_replay(void)
{
    struct srtpplus_replay r;
    srtpplus_replay_init(&r);
    g_assert_false(srtpplus_replay_seen(&r, 0));
    srtpplus_replay_mark(&r, 1000);
    g_assert_true(srtpplus_replay_seen(&r, 1000));
    g_assert_false(srtpplus_replay_seen(&r, 999));
    g_assert_false(srtpplus_replay_seen(&r, 1001));
    srtpplus_replay_mark(&r, 1003);
    g_assert_false(srtpplus_replay_seen(&r, 1001));
    g_assert_false(srtpplus_replay_seen(&r, 1002));
    srtpplus_replay_mark(&r, 1001);
    g_assert_true(srtpplus_replay_seen(&r, 1001));
    g_assert_cmpuint(r.highest, ==, 1003);
    g_assert_cmpuint(r.lowest, ==, 1000);
    /* A slot reused after the window slid must not remember its previous index. */
    srtpplus_replay_mark(&r, 1003 + SRTPPLUS_REPLAY_BITS - 1);
    g_assert_false(srtpplus_replay_seen(&r, 1001 + SRTPPLUS_REPLAY_BITS));
    g_assert_true(srtpplus_replay_seen(&r, 1003));
    g_assert_true(srtpplus_replay_seen(&r, 900)); /* older than the record */
    srtpplus_replay_mark(&r, 1003 + 3 * SRTPPLUS_REPLAY_BITS);
    g_assert_false(srtpplus_replay_seen(&r, 1003 + 3 * SRTPPLUS_REPLAY_BITS - 1));
    g_assert_true(srtpplus_replay_seen(&r, 1003 + 3 * SRTPPLUS_REPLAY_BITS));
}

static void test_budget(void)
{
    const uint64_t s = 1000000000ull;
    struct srtpplus_budget b;
    srtpplus_budget_init(&b, 10, 3);
    for (int i = 0; i < 3; i++)
        g_assert_true(srtpplus_budget_take(&b, 5 * s));
    g_assert_false(srtpplus_budget_take(&b, 5 * s));
    g_assert_false(srtpplus_budget_take(&b, 5 * s + s / 20));
    g_assert_true(srtpplus_budget_take(&b, 5 * s + s / 10));
    g_assert_false(srtpplus_budget_take(&b, 5 * s + s / 10));
    /* Over a long run the rate holds: 10/s for 10 s, plus the burst. */
    srtpplus_budget_init(&b, 10, 3);
    int granted = 0;
    for (uint64_t t = 0; t < 10 * s; t += s / 1000)
        granted += srtpplus_budget_take(&b, 100 * s + t);
    g_assert_cmpint(granted, >=, 100);
    g_assert_cmpint(granted, <=, 103);
    srtpplus_budget_init(&b, 0, 5);
    g_assert_false(srtpplus_budget_take(&b, s));
    g_assert_cmpuint(srtpplus_budget_default_rate(50), ==, 20);
    g_assert_cmpuint(srtpplus_budget_default_rate(5000), ==, 500);
}

static void rtp_with_csrc_and_extension(struct test_packet *p)
{
    test_rtp_packet(p, 0x01020304, 77, 0);
    /* CC = 1 and X: one CSRC and a one-word extension push the payload back 12 octets. */
    p->data[0] = 0x80 | 0x10 | 0x01;
    memset(p->data + 12, 0xcc, 4);
    p->data[16] = 0xbe;
    p->data[17] = 0xde;
    p->data[18] = 0;
    p->data[19] = 1;
}

static void test_chain_block(void)
{
    struct srtpplus_chain_params params = {.depth = 32, .copies = 3};
    uint32_t tags[3] = {0x11111111, 0x22222222, 0x33333333};
    struct test_packet p, original;
    rtp_with_csrc_and_extension(&p);
    size_t header_len;
    g_assert_cmpint(srtpplus_rtp_header_len(p.data, p.len, &header_len), ==, SRTPPLUS_OK);
    g_assert_cmpuint(header_len, ==, 24);
    original = p;

    g_assert_cmpint(srtpplus_chain_append(p.data, &p.len, p.len + 15, &params, tags), ==,
                    SRTPPLUS_ERR_CAPACITY);
    g_assert_cmpmem(p.data, p.len, original.data, original.len);
    g_assert_cmpint(srtpplus_chain_append(p.data, &p.len, sizeof(p.data), &params, tags), ==,
                    SRTPPLUS_OK);
    g_assert_cmpuint(p.len, ==, original.len + 16);
    static const uint8_t trailer[] = {0x33, 0x33, 0x33, 0x33, 32, 3, 0xc5, 16};
    g_assert_cmpmem(p.data + p.len - 8, 8, trailer, 8);
    g_assert_true(p.data[0] & 0x20);

    struct srtpplus_chain_block block = {0};
    g_assert_cmpint(srtpplus_chain_parse(p.data, p.len, &params, &block), ==, SRTPPLUS_OK);
    g_assert_cmphex(block.tags[0], ==, tags[0]);
    g_assert_cmphex(block.tags[2], ==, tags[2]);
    g_assert_cmpuint(block.prior_padding, ==, 0);
    struct test_packet stripped = p;
    srtpplus_chain_strip(stripped.data, &stripped.len, &block);
    g_assert_cmpmem(stripped.data, stripped.len, original.data, original.len);

    /* Negotiated parameters must match what the block says. */
    struct srtpplus_chain_params other = {.depth = 31, .copies = 3};
    g_assert_cmpint(srtpplus_chain_parse(p.data, p.len, &other, &block), ==,
                    SRTPPLUS_ERR_MALFORMED);
    other = (struct srtpplus_chain_params){.depth = 32, .copies = 2};
    g_assert_cmpint(srtpplus_chain_parse(p.data, p.len, &other, &block), ==,
                    SRTPPLUS_ERR_MALFORMED);
    struct test_packet bad = p;
    bad.data[bad.len - 2] = 0xc6;
    g_assert_cmpint(srtpplus_chain_parse(bad.data, bad.len, &params, &block), ==,
                    SRTPPLUS_ERR_MALFORMED);
    bad = p;
    bad.data[0] &= (uint8_t)~0x20;
    g_assert_cmpint(srtpplus_chain_parse(bad.data, bad.len, &params, &block), ==,
                    SRTPPLUS_ERR_MALFORMED);
    bad = p;
    bad.data[bad.len - 1] = 15; /* total smaller than the block */
    g_assert_cmpint(srtpplus_chain_parse(bad.data, bad.len, &params, &block), ==,
                    SRTPPLUS_ERR_MALFORMED);
    bad = p;
    bad.data[bad.len - 1] = 200; /* total reaching into the header */
    g_assert_cmpint(srtpplus_chain_parse(bad.data, bad.len, &params, &block), ==,
                    SRTPPLUS_ERR_MALFORMED);
    bad = p;
    bad.data[bad.len - 1] = 18; /* claims P0 = 2, but the octet before is not 2 */
    g_assert_cmpint(srtpplus_chain_parse(bad.data, bad.len, &params, &block), ==,
                    SRTPPLUS_ERR_MALFORMED);
    for (size_t len = 0; len < p.len; len++)
        g_assert_cmpint(srtpplus_chain_parse(p.data, len, &params, &block), ==,
                        SRTPPLUS_ERR_MALFORMED);

    /* With the application's own padding the block follows it and P stays set. */
    struct test_packet padded;
    test_rtp_packet(&padded, 1, 2, 3);
    padded.data[0] |= 0x20;
    padded.data[padded.len - 1] = 4;
    original = padded;
    g_assert_cmpint(
        srtpplus_chain_append(padded.data, &padded.len, sizeof(padded.data), &params, tags), ==,
        SRTPPLUS_OK);
    g_assert_cmpuint(padded.data[padded.len - 1], ==, 4 + 16);
    g_assert_cmpint(srtpplus_chain_parse(padded.data, padded.len, &params, &block), ==,
                    SRTPPLUS_OK);
    g_assert_cmpuint(block.prior_padding, ==, 4);
    srtpplus_chain_strip(padded.data, &padded.len, &block);
    g_assert_cmpmem(padded.data, padded.len, original.data, original.len);
    padded.data[padded.len - 1] = 0; /* a padding count of 0 is not RTP */
    g_assert_cmpint(
        srtpplus_chain_append(padded.data, &padded.len, sizeof(padded.data), &params, tags), ==,
        SRTPPLUS_ERR_MALFORMED);
    struct srtpplus_chain_params invalid = {.depth = 2, .copies = 3};
    g_assert_false(srtpplus_chain_params_valid(&invalid));
    invalid = (struct srtpplus_chain_params){.depth = 10, .copies = 5};
    g_assert_false(srtpplus_chain_params_valid(&invalid));
}

static void test_chain_table(void)
{
    struct srtpplus_chain_table t;
    g_assert_cmpint(srtpplus_chain_table_init(&t, 100), ==, SRTPPLUS_OK);
    g_assert_cmpuint(t.mask + 1, ==, 128);
    uint32_t tag;
    g_assert_false(srtpplus_chain_table_get(&t, 5, &tag));
    srtpplus_chain_table_put(&t, 5, 0xabcd);
    g_assert_true(srtpplus_chain_table_get(&t, 5, &tag));
    g_assert_cmphex(tag, ==, 0xabcd);
    /* Same slot, another index: neither may answer for the other. */
    g_assert_false(srtpplus_chain_table_get(&t, 5 + 128, &tag));
    srtpplus_chain_table_put(&t, 5 + 128, 0x1234);
    g_assert_false(srtpplus_chain_table_get(&t, 5, &tag));
    g_assert_true(srtpplus_chain_table_get(&t, 5 + 128, &tag));
    g_assert_cmphex(tag, ==, 0x1234);
    srtpplus_chain_table_release(&t);
}

static void expect_window_matches(struct srtpplus_prn_window *w, struct srtpplus_prn *prn,
                                  uint64_t highest, uint32_t behind, uint32_t ahead)
{
    uint64_t lo = highest > behind ? highest - behind : 0;
    for (uint64_t i = lo; i <= highest + ahead; i++) {
        uint32_t got = 0, want = 0;
        g_assert_true(srtpplus_prn_window_lookup(w, i, &got));
        g_assert_cmpint(srtpplus_prn_tag(prn, w->kind, w->ssrc, i, &want), ==, SRTPPLUS_OK);
        g_assert_cmphex(got, ==, want);
    }
}

static void test_prn_window(void)
{
    struct srtpplus_prn *prn;
    g_assert_cmpint(srtpplus_prn_new(key16, &prn), ==, SRTPPLUS_OK);
    struct srtpplus_prn_window w;
    g_assert_cmpint(srtpplus_prn_window_init(&w, SRTPPLUS_KIND_RTP, 99, 1024, 4096, 256,
                                             SRTPPLUS_RTP_INDEX_LIMIT),
                    ==, SRTPPLUS_OK);
    uint32_t tag;
    g_assert_false(srtpplus_prn_window_lookup(&w, 0, &tag));
    uint64_t highest = 10;
    g_assert_true(srtpplus_prn_window_wants_refill(&w, highest));
    g_assert_cmpint(srtpplus_prn_window_refill(&w, prn, highest), ==, SRTPPLUS_OK);
    g_assert_false(srtpplus_prn_window_wants_refill(&w, highest));
    expect_window_matches(&w, prn, highest, 1024, 4096);
    /* Walk the centre forward in steps, across the ring's wrap, refilling as asked. */
    for (int step = 0; step < 40; step++) {
        highest += 700;
        if (srtpplus_prn_window_wants_refill(&w, highest))
            g_assert_cmpint(srtpplus_prn_window_refill(&w, prn, highest), ==, SRTPPLUS_OK);
        expect_window_matches(&w, prn, highest, 1024, 4096);
    }
    /* A jump further than the ring is long restarts it. */
    highest += 100000;
    g_assert_false(srtpplus_prn_window_lookup(&w, highest, &tag));
    g_assert_cmpint(srtpplus_prn_window_refill(&w, prn, highest), ==, SRTPPLUS_OK);
    expect_window_matches(&w, prn, highest, 1024, 4096);
    g_assert_false(srtpplus_prn_window_lookup(&w, highest - 100000, &tag));
    srtpplus_prn_window_release(&w);

    /* The window stops at the index limit instead of computing past it. */
    g_assert_cmpint(
        srtpplus_prn_window_init(&w, SRTPPLUS_KIND_RTCP, 7, 32, 96, 32, SRTPPLUS_RTCP_INDEX_LIMIT),
        ==, SRTPPLUS_OK);
    highest = SRTPPLUS_RTCP_INDEX_LIMIT - 10;
    g_assert_cmpint(srtpplus_prn_window_refill(&w, prn, highest), ==, SRTPPLUS_OK);
    g_assert_cmpuint(w.hi, ==, SRTPPLUS_RTCP_INDEX_LIMIT);
    g_assert_false(srtpplus_prn_window_wants_refill(&w, highest));
    expect_window_matches(&w, prn, highest, 32, 9);
    srtpplus_prn_window_release(&w);
    srtpplus_prn_free(prn);
}

static void test_sender_errors(void)
{
    struct srtpplus_sender_config cfg;
    srtpplus_sender_config_init(&cfg, SRTPPLUS_SCHEME_CHAIN, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    struct srtpplus_sender *tx = NULL;
    g_assert_cmpint(srtpplus_sender_new(&cfg, key16, 16, salt14, 12, &tx), ==, SRTPPLUS_ERR_PARAM);
    cfg.chain.copies = 0;
    g_assert_cmpint(srtpplus_sender_new(&cfg, key16, 16, salt14, 14, &tx), ==, SRTPPLUS_ERR_PARAM);
    cfg.chain.copies = 2;
    cfg.max_ssrcs = 2;
    g_assert_cmpint(srtpplus_sender_new(&cfg, key16, 16, salt14, 14, &tx), ==, SRTPPLUS_OK);
    g_assert_cmpuint(srtpplus_sender_rtp_overhead(tx), ==, 4 + 12);

    struct test_packet p;
    test_rtp_packet(&p, 1, 1, 0);
    size_t len = 11;
    g_assert_cmpint(srtpplus_sender_prepare_rtp(tx, p.data, &len, sizeof(p.data)), ==,
                    SRTPPLUS_ERR_MALFORMED);
    g_assert_cmpint(srtpplus_sender_prepare_rtp(tx, p.data, &p.len, p.len + 11), ==,
                    SRTPPLUS_ERR_CAPACITY);
    g_assert_cmpint(srtpplus_sender_append_tag_rtp(tx, p.data, &p.len, p.len + 3), ==,
                    SRTPPLUS_ERR_CAPACITY);
    len = 21;
    g_assert_cmpint(srtpplus_sender_append_tag_rtp(tx, p.data, &len, sizeof(p.data)), ==,
                    SRTPPLUS_ERR_MALFORMED);
    len = 21;
    g_assert_cmpint(srtpplus_sender_append_tag_rtcp(tx, p.data, &len, sizeof(p.data)), ==,
                    SRTPPLUS_ERR_MALFORMED);
    g_assert_cmpint(srtpplus_sender_add_ssrc(tx, 1, 0), ==, SRTPPLUS_ERR_EXISTS);
    g_assert_cmpint(srtpplus_sender_add_ssrc(tx, 2, 0), ==, SRTPPLUS_OK);
    g_assert_cmpint(srtpplus_sender_add_ssrc(tx, 3, 0), ==, SRTPPLUS_ERR_FULL);
    test_rtp_packet(&p, 4, 1, 0);
    g_assert_cmpint(srtpplus_sender_prepare_rtp(tx, p.data, &p.len, sizeof(p.data)), ==,
                    SRTPPLUS_ERR_FULL);
    srtpplus_sender_free(tx);
}

/* Tags of packets sent again or late: the same tag as the first time while the sender
 * still holds it; for chain, an error once it does not. */
static void run_resend(enum srtpplus_scheme scheme)
{
    enum { N = 3000 };
    struct srtpplus_sender_config cfg;
    srtpplus_sender_config_init(&cfg, scheme, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    struct srtpplus_sender *tx;
    g_assert_cmpint(srtpplus_sender_new(&cfg, key16, 16, salt14, 14, &tx), ==, SRTPPLUS_OK);
    uint32_t *tags = g_new(uint32_t, N);
    for (uint32_t i = 0; i < N; i++) {
        struct test_packet p;
        test_rtp_packet(&p, 9, (uint16_t)(65000 + i), 0);
        g_assert_cmpint(srtpplus_sender_prepare_rtp(tx, p.data, &p.len, sizeof(p.data)), ==,
                        SRTPPLUS_OK);
        p.len += 10; /* stands in for the SRTP tag */
        g_assert_cmpint(srtpplus_sender_append_tag_rtp(tx, p.data, &p.len, sizeof(p.data)), ==,
                        SRTPPLUS_OK);
        tags[i] = srtpplus_load_be32(p.data + p.len - 4);
    }
    uint32_t again[] = {N - 1, N - 500, 3, 40};
    for (size_t k = 0; k < G_N_ELEMENTS(again); k++) {
        uint32_t i = again[k];
        struct test_packet p;
        test_rtp_packet(&p, 9, (uint16_t)(65000 + i), 0);
        p.len += 10;
        int rc = srtpplus_sender_append_tag_rtp(tx, p.data, &p.len, sizeof(p.data));
        bool expect_stale = scheme == SRTPPLUS_SCHEME_CHAIN && i == 40;
        if (expect_stale) {
            g_assert_cmpint(rc, ==, SRTPPLUS_ERR_STALE);
            continue;
        }
        /* Bootstrap tags (i < D = 32) are tag_prn and can always be given again. */
        g_assert_cmpint(rc, ==, SRTPPLUS_OK);
        g_assert_cmphex(srtpplus_load_be32(p.data + p.len - 4), ==, tags[i]);
    }
    g_free(tags);
    srtpplus_sender_free(tx);
}

static void test_sender_resend(void)
{
    run_resend(SRTPPLUS_SCHEME_PRN);
    run_resend(SRTPPLUS_SCHEME_CHAIN);
}

static int failing_random(void *arg, uint8_t *out, size_t len)
{
    return -1;
}

static void test_sender_random_failure(void)
{
    struct srtpplus_sender_config cfg;
    srtpplus_sender_config_init(&cfg, SRTPPLUS_SCHEME_CHAIN, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    cfg.random = failing_random;
    struct srtpplus_sender *tx;
    g_assert_cmpint(srtpplus_sender_new(&cfg, key16, 16, salt14, 14, &tx), ==, SRTPPLUS_OK);
    struct test_packet p;
    test_rtp_packet(&p, 1, 1, 0);
    /* The first D tags are tag_prn; the first random one is T[i0 + D], needed at once. */
    g_assert_cmpint(srtpplus_sender_prepare_rtp(tx, p.data, &p.len, sizeof(p.data)), ==,
                    SRTPPLUS_ERR_RANDOM);
    srtpplus_sender_free(tx);
}

static void test_receiver_config(void)
{
    struct srtpplus_receiver_config cfg;
    srtpplus_receiver_config_init(&cfg, SRTPPLUS_SCHEME_PRN, SRTPPLUS_PROFILE_AEAD_AES_128_GCM);
    struct srtpplus_receiver *rx = NULL;
    g_assert_cmpint(srtpplus_receiver_new(&cfg, key16, 16, salt14, 14, &rx), ==,
                    SRTPPLUS_ERR_PARAM);
    g_assert_null(rx);
    cfg.window_behind = SRTPPLUS_WINDOW_MAX_BEHIND + 1;
    g_assert_cmpint(srtpplus_receiver_new(&cfg, key16, 16, salt14, 12, &rx), ==,
                    SRTPPLUS_ERR_PARAM);
    cfg.window_behind = 100;
    cfg.window_ahead = 0;
    g_assert_cmpint(srtpplus_receiver_new(&cfg, key16, 16, salt14, 12, &rx), ==,
                    SRTPPLUS_ERR_PARAM);
    cfg.window_ahead = 200;
    g_assert_cmpint(srtpplus_receiver_new(&cfg, key16, 16, salt14, 12, &rx), ==, SRTPPLUS_OK);
    uint64_t index;
    g_assert_false(srtpplus_receiver_highest_index(rx, 1, &index));
    g_assert_cmpint(srtpplus_receiver_confirm_rtcp(rx, 1, 5), ==, SRTPPLUS_CONFIRM_UNKNOWN_SSRC);
    g_assert_cmpint(srtpplus_receiver_add_ssrc(rx, 1, 0), ==, SRTPPLUS_OK);
    g_assert_cmpint(srtpplus_receiver_confirm_rtcp(rx, 1, (uint64_t)1 << 31), ==,
                    SRTPPLUS_CONFIRM_MALFORMED);
    struct test_packet p;
    test_rtp_packet(&p, 1, 9, 0);
    g_assert_cmpint(srtpplus_receiver_confirm_rtp(rx, p.data, &p.len, 10), ==,
                    SRTPPLUS_CONFIRM_MALFORMED);
    g_assert_cmpint(srtpplus_receiver_confirm_rtp(rx, p.data, &p.len, 9), ==, SRTPPLUS_CONFIRMED);
    g_assert_true(srtpplus_receiver_highest_index(rx, 1, &index));
    g_assert_cmpuint(index, ==, 9);
    srtpplus_receiver_free(rx);
}

/* A flood of one class of unverifiable packets (RTP of unknown SSRCs) empties
 * its own budget only: SRTCP that cannot be verified yet still has its own. */
static void test_budget_classes(void)
{
    static const uint8_t key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    static const uint8_t salt[14] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    struct srtpplus_receiver_config config;
    srtpplus_receiver_config_init(&config, SRTPPLUS_SCHEME_PRN, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    config.budget_rate = 5;
    config.budget_burst = 5;
    struct srtpplus_receiver *rx;
    g_assert_cmpint(srtpplus_receiver_new(&config, key, 16, salt, 14, &rx), ==, SRTPPLUS_OK);
    g_assert_cmpint(srtpplus_receiver_add_ssrc(rx, 0x1234, 0), ==, SRTPPLUS_OK);
    struct srtpplus_check check;
    uint8_t rtp[64] = {0x80, 0, 0, 1};
    int passed = 0;
    for (uint32_t i = 0; i < 100; i++) {
        uint32_t ssrc = 0x9000 + i;
        rtp[8] = (uint8_t)(ssrc >> 24);
        rtp[9] = (uint8_t)(ssrc >> 16);
        rtp[10] = (uint8_t)(ssrc >> 8);
        rtp[11] = (uint8_t)ssrc;
        passed += srtpplus_receiver_check_rtp(rx, rtp, sizeof rtp, true, 1000, &check) ==
                  SRTPPLUS_UNVERIFIED_BUDGET_OK;
    }
    g_assert_cmpint(passed, ==, 5);
    /* SRTCP of the known SSRC, before its first authenticated packet, with a
     * tag that cannot be checked: its own budget still has tokens. */
    uint8_t rtcp[48] = {0x80, 200, 0, 6, 0, 0, 0x12, 0x34};
    rtcp[48 - 4 - 10 - 4] = 0x80; /* E flag, index 1 */
    rtcp[48 - 4 - 10 - 1] = 1;
    g_assert_cmpint(srtpplus_receiver_check_rtcp(rx, rtcp, sizeof rtcp, true, 1000, &check), ==,
                    SRTPPLUS_UNVERIFIED_BUDGET_OK);
    g_assert_cmpuint(srtpplus_receiver_class_budget(rx, SRTPPLUS_BUDGET_RTCP), ==, 5);
    /* Resizing one class leaves the others alone. */
    srtpplus_receiver_set_class_budget(rx, SRTPPLUS_BUDGET_RTP, 40, 40);
    g_assert_cmpuint(srtpplus_receiver_class_budget(rx, SRTPPLUS_BUDGET_RTP), ==, 40);
    g_assert_cmpuint(srtpplus_receiver_class_budget(rx, SRTPPLUS_BUDGET_UNKNOWN_SSRC), ==, 5);
    g_assert_cmpint(srtpplus_receiver_check_rtp(rx, rtp, sizeof rtp, true, 1000, &check), ==,
                    SRTPPLUS_DROP_BUDGET);
    srtpplus_receiver_free(rx);
}

static void test_names(void)
{
    static const char *const verdicts[] = {
        "pass", "unverified_budget_ok", "malformed", "index", "tag", "replay", "budget"};
    for (int v = 0; v < SRTPPLUS_VERDICT_COUNT; v++)
        g_assert_cmpstr(srtpplus_verdict_name((enum srtpplus_verdict)v), ==, verdicts[v]);
    g_assert_cmpstr(srtpplus_verdict_name(SRTPPLUS_VERDICT_COUNT), ==, "unknown");
    g_assert_true(srtpplus_verdict_is_drop(SRTPPLUS_DROP_TAG));
    g_assert_false(srtpplus_verdict_is_drop(SRTPPLUS_UNVERIFIED_BUDGET_OK));
    g_assert_cmpstr(srtpplus_confirm_name(SRTPPLUS_CONFIRMED_CHAIN_MALFORMED), ==,
                    "chain_malformed");
    g_assert_cmpstr(srtpplus_status_name(SRTPPLUS_ERR_PADDING), ==, "padding");
    g_assert_cmpstr(srtpplus_scheme_name(SRTPPLUS_SCHEME_CHAIN), ==, "chain");
    enum srtpplus_profile profile;
    g_assert_cmpint(srtpplus_profile_from_name("SRTP_AEAD_AES_128_GCM", &profile), ==, SRTPPLUS_OK);
    g_assert_cmpint(profile, ==, SRTPPLUS_PROFILE_AEAD_AES_128_GCM);
    g_assert_cmpstr(srtpplus_profile_name(profile), ==, "SRTP_AEAD_AES_128_GCM");
    g_assert_cmpint(srtpplus_profile_from_name("SRTP_NULL", &profile), ==, SRTPPLUS_ERR_PARAM);
    struct srtpplus_profile_sizes sizes;
    g_assert_cmpint(srtpplus_profile_sizes(SRTPPLUS_PROFILE_AEAD_AES_128_GCM, &sizes), ==,
                    SRTPPLUS_OK);
    g_assert_cmpuint(sizes.min_srtp_len, ==, 28);
    g_assert_cmpuint(sizes.min_srtcp_len, ==, 28);
    g_assert_cmpint(srtpplus_profile_sizes(SRTPPLUS_PROFILE_AES128_CM_SHA1_32, &sizes), ==,
                    SRTPPLUS_OK);
    g_assert_cmpuint(sizes.min_srtp_len, ==, 16);
    g_assert_cmpuint(sizes.min_srtcp_len, ==, 22);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/srtpplus/components/index-estimate", test_index_estimate);
    g_test_add_func("/srtpplus/components/replay", test_replay);
    g_test_add_func("/srtpplus/components/budget", test_budget);
    g_test_add_func("/srtpplus/components/chain-block", test_chain_block);
    g_test_add_func("/srtpplus/components/chain-table", test_chain_table);
    g_test_add_func("/srtpplus/components/prn-window", test_prn_window);
    g_test_add_func("/srtpplus/components/sender-errors", test_sender_errors);
    g_test_add_func("/srtpplus/components/sender-resend", test_sender_resend);
    g_test_add_func("/srtpplus/components/sender-random-failure", test_sender_random_failure);
    g_test_add_func("/srtpplus/components/receiver-config", test_receiver_config);
    g_test_add_func("/srtpplus/components/names", test_names);
    g_test_add_func("/srtpplus/components/budget-classes", test_budget_classes);
    return g_test_run();
}
