/* Scheme prn end to end with libsrtp: sender prepare/protect/tag, receiver
 * check/unprotect/confirm, across ROC wrap, reordering, duplicates, forged tags, the
 * plausibility window, the budget, RTCP and every profile. */
#include "srtpplus_test_srtp.h"

#include <glib.h>
#include <string.h>

static const uint8_t master_key[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                       0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
static const uint8_t master_salt[14] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
#define SSRC 0x5eed0001u

struct fixture {
    enum srtpplus_profile profile;
    srtp_t srtp_tx, srtp_rx;
    struct srtpplus_sender *tx;
    struct srtpplus_receiver *rx;
};

static void fixture_open(struct fixture *f, enum srtpplus_profile profile, uint32_t budget_rate)
{
    struct srtpplus_profile_sizes sizes;
    g_assert_cmpint(srtpplus_profile_sizes(profile, &sizes), ==, SRTPPLUS_OK);
    f->profile = profile;
    f->srtp_tx = test_srtp_session(profile, master_key, master_salt, SSRC, 0);
    f->srtp_rx = test_srtp_session(profile, master_key, master_salt, SSRC, 0);
    struct srtpplus_sender_config scfg;
    srtpplus_sender_config_init(&scfg, SRTPPLUS_SCHEME_PRN, profile);
    g_assert_cmpint(srtpplus_sender_new(&scfg, master_key, sizes.master_key_len, master_salt,
                                        sizes.master_salt_len, &f->tx),
                    ==, SRTPPLUS_OK);
    struct srtpplus_receiver_config rcfg;
    srtpplus_receiver_config_init(&rcfg, SRTPPLUS_SCHEME_PRN, profile);
    rcfg.budget_rate = budget_rate;
    rcfg.budget_burst = budget_rate ? budget_rate : 1;
    g_assert_cmpint(srtpplus_receiver_new(&rcfg, master_key, sizes.master_key_len, master_salt,
                                          sizes.master_salt_len, &f->rx),
                    ==, SRTPPLUS_OK);
    g_assert_cmpint(srtpplus_receiver_add_ssrc(f->rx, SSRC, 0), ==, SRTPPLUS_OK);
}

static void fixture_close(struct fixture *f)
{
    srtpplus_receiver_free(f->rx);
    srtpplus_sender_free(f->tx);
    srtp_dealloc(f->srtp_tx);
    srtp_dealloc(f->srtp_rx);
}

/* Protects count packets from first_seq on into out[]; originals into plain[] if set. */
static void send_run(struct fixture *f, uint16_t first_seq, size_t count, struct test_packet *out,
                     struct test_packet *plain)
{
    for (size_t i = 0; i < count; i++) {
        uint16_t seq = (uint16_t)(first_seq + i);
        test_rtp_packet(&out[i], SSRC, seq, (uint32_t)(seq * 160));
        if (plain)
            plain[i] = out[i];
        test_send_rtp(f->srtp_tx, f->tx, &out[i]);
    }
}

static void expect_delivered(struct fixture *f, const struct test_packet *wire,
                             const struct test_packet *original)
{
    struct test_packet plain;
    bool unprotected;
    enum srtpplus_confirm confirm = SRTPPLUS_CONFIRM_COUNT;
    enum srtpplus_verdict v =
        test_receive_rtp(f->rx, f->srtp_rx, wire, true, 0, &plain, &unprotected, &confirm);
    g_assert_cmpstr(srtpplus_verdict_name(v), ==, "pass");
    g_assert_true(unprotected);
    g_assert_cmpint(confirm, ==, SRTPPLUS_CONFIRMED);
    if (original)
        g_assert_cmpmem(plain.data, plain.len, original->data, original->len);
}

static enum srtpplus_verdict check_only(struct fixture *f, const struct test_packet *p)
{
    struct srtpplus_check chk;
    return srtpplus_receiver_check_rtp(f->rx, p->data, p->len, true, 0, &chk);
}

static void test_roc_wrap(void)
{
    enum { N = 3000 };
    struct fixture f;
    fixture_open(&f, SRTPPLUS_PROFILE_AES128_CM_SHA1_80, 0);
    struct test_packet *wire = g_new(struct test_packet, N), *plain = g_new(struct test_packet, N);
    send_run(&f, 65000, N, wire, plain);
    for (size_t i = 0; i < N; i++) {
        expect_delivered(&f, &wire[i], &plain[i]);
        if (i % 64 == 63)
            g_assert_cmpint(srtpplus_receiver_maintain(f.rx), ==, SRTPPLUS_OK);
    }
    uint64_t highest;
    g_assert_true(srtpplus_receiver_highest_index(f.rx, SSRC, &highest));
    g_assert_cmpuint(highest, ==, 65000 + N - 1);
    g_assert_cmpuint(highest >> 16, ==, 1); /* crossed the ROC wrap */
    const struct srtpplus_receiver_stats *st = srtpplus_receiver_stats(f.rx);
    g_assert_cmpuint(st->refill_tags, >, 0);
    /* Only the packets before the first maintenance needed a tag computed inline. */
    g_assert_cmpuint(st->inline_tags, <=, 64);
    g_free(wire);
    g_free(plain);
    fixture_close(&f);
}

static void test_without_maintenance(void)
{
    enum { N = 1500 };
    struct fixture f;
    fixture_open(&f, SRTPPLUS_PROFILE_AES128_CM_SHA1_80, 0);
    struct test_packet *wire = g_new(struct test_packet, N);
    send_run(&f, 100, N, wire, NULL);
    for (size_t i = 0; i < N; i++)
        expect_delivered(&f, &wire[i], NULL);
    g_assert_true(srtpplus_receiver_maintenance_pending(f.rx));
    g_assert_cmpuint(srtpplus_receiver_stats(f.rx)->inline_tags, ==, N);
    g_assert_cmpint(srtpplus_receiver_maintain(f.rx), ==, SRTPPLUS_OK);
    g_assert_false(srtpplus_receiver_maintenance_pending(f.rx));
    g_free(wire);
    fixture_close(&f);
}

/* With the detector off nothing is precomputed; switching it on refills the window at
 * the next maintenance, and until then tags are computed one by one. */
static void test_detector_off_costs_no_tags(void)
{
    enum { N = 600 };
    struct fixture f;
    fixture_open(&f, SRTPPLUS_PROFILE_AES128_CM_SHA1_80, 0);
    struct test_packet *wire = g_new(struct test_packet, N);
    send_run(&f, 40000, N, wire, NULL);
    const struct srtpplus_receiver_stats *st = srtpplus_receiver_stats(f.rx);
    bool unprotected;
    for (size_t i = 0; i < 500; i++) {
        g_assert_cmpint(
            test_receive_rtp(f.rx, f.srtp_rx, &wire[i], false, 0, NULL, &unprotected, NULL), ==,
            SRTPPLUS_PASS);
        g_assert_true(unprotected);
        g_assert_cmpint(srtpplus_receiver_maintain(f.rx), ==, SRTPPLUS_OK);
    }
    g_assert_cmpuint(st->refill_tags + st->inline_tags, ==, 0);
    g_assert_false(srtpplus_receiver_maintenance_pending(f.rx));
    uint64_t highest;
    g_assert_true(srtpplus_receiver_highest_index(f.rx, SSRC, &highest));
    g_assert_cmpuint(highest, ==, 40000 + 499);

    expect_delivered(&f, &wire[500], NULL);
    g_assert_cmpuint(st->inline_tags, ==, 1);
    g_assert_true(srtpplus_receiver_maintenance_pending(f.rx));
    g_assert_cmpint(srtpplus_receiver_maintain(f.rx), ==, SRTPPLUS_OK);
    g_assert_cmpuint(st->refill_tags, >, 4096);
    for (size_t i = 501; i < N; i++)
        expect_delivered(&f, &wire[i], NULL);
    g_assert_cmpuint(st->inline_tags, ==, 1);
    g_free(wire);
    fixture_close(&f);
}

static void test_reordering(void)
{
    enum { N = 2048 };
    struct fixture f;
    fixture_open(&f, SRTPPLUS_PROFILE_AES128_CM_SHA1_80, 0);
    struct test_packet *wire = g_new(struct test_packet, N), *plain = g_new(struct test_packet, N);
    send_run(&f, 65400, N, wire, plain);
    GRand *rand = g_rand_new_with_seed(7);
    size_t order[N];
    for (size_t i = 0; i < N; i++)
        order[i] = i;
    /* Shuffle within blocks of 32, and hold a few packets back by up to 900 places,
     * inside both the SRTP+ window (1024 behind) and libsrtp's (1024). */
    for (size_t b = 0; b < N; b += 32) {
        for (size_t i = 31; i > 0; i--) {
            size_t j = (size_t)g_rand_int_range(rand, 0, (gint32)i + 1);
            size_t t = order[b + i];
            order[b + i] = order[b + j];
            order[b + j] = t;
        }
    }
    /* Held back and delivered 900 places later (40, 41, 300, 1000), or never until the
     * window has moved past it (5). */
    size_t late[] = {5, 40, 41, 300, 1000};
    size_t delivered = 0;
    for (size_t i = 0; i < N; i++) {
        size_t k = order[i];
        bool held = false;
        for (size_t l = 0; l < G_N_ELEMENTS(late); l++)
            held |= k == late[l];
        if (!held) {
            expect_delivered(&f, &wire[k], &plain[k]);
            delivered++;
        }
        for (size_t l = 1; l < G_N_ELEMENTS(late); l++) {
            if (i == late[l] + 900) {
                expect_delivered(&f, &wire[late[l]], &plain[late[l]]);
                delivered++;
            }
        }
        if (i % 64 == 0)
            srtpplus_receiver_maintain(f.rx);
    }
    g_assert_cmpuint(delivered, ==, N - 1);
    g_assert_cmpint(check_only(&f, &wire[5]), ==, SRTPPLUS_DROP_INDEX);
    g_rand_free(rand);
    g_free(wire);
    g_free(plain);
    fixture_close(&f);
}

static void test_duplicates_and_forgeries(void)
{
    enum { N = 200 };
    struct fixture f;
    fixture_open(&f, SRTPPLUS_PROFILE_AES128_CM_SHA1_80, 0);
    struct test_packet wire[N];
    send_run(&f, 10, N, wire, NULL);
    for (size_t i = 0; i < 100; i++)
        expect_delivered(&f, &wire[i], NULL);
    srtpplus_receiver_maintain(f.rx);

    /* A duplicate of an authenticated packet never reaches srtp_unprotect. */
    g_assert_cmpint(check_only(&f, &wire[50]), ==, SRTPPLUS_DROP_REPLAY);
    g_assert_cmpint(check_only(&f, &wire[99]), ==, SRTPPLUS_DROP_REPLAY);

    /* A wrong tag is dropped before the HMAC, whatever index it claims. */
    struct test_packet forged = wire[100];
    forged.data[forged.len - 1] ^= 0x01;
    g_assert_cmpint(check_only(&f, &forged), ==, SRTPPLUS_DROP_TAG);
    GRand *rand = g_rand_new_with_seed(11);
    for (int i = 0; i < 20000; i++) {
        forged = wire[100];
        uint16_t seq = (uint16_t)(10 + g_rand_int_range(rand, 0, 4000));
        forged.data[2] = (uint8_t)(seq >> 8);
        forged.data[3] = (uint8_t)seq;
        srtpplus_store_be32(forged.data + forged.len - 4, g_rand_int(rand));
        g_assert_cmpint(check_only(&f, &forged), ==, SRTPPLUS_DROP_TAG);
    }
    g_rand_free(rand);

    /* An on-path copy of a prn tag onto a forged body passes the check once, fails
     * srtp_unprotect, and does not stop the real packet. */
    forged = wire[100];
    forged.data[20] ^= 0xff;
    bool unprotected;
    g_assert_cmpint(test_receive_rtp(f.rx, f.srtp_rx, &forged, true, 0, NULL, &unprotected, NULL),
                    ==, SRTPPLUS_PASS);
    g_assert_false(unprotected);
    expect_delivered(&f, &wire[100], NULL);
    g_assert_cmpint(check_only(&f, &forged), ==, SRTPPLUS_DROP_REPLAY);

    /* Not enforcing: the tag is stripped and not checked; libsrtp catches the duplicate. */
    enum srtpplus_verdict v =
        test_receive_rtp(f.rx, f.srtp_rx, &wire[50], false, 0, NULL, &unprotected, NULL);
    g_assert_cmpint(v, ==, SRTPPLUS_PASS);
    g_assert_false(unprotected);
    forged = wire[101];
    forged.data[forged.len - 2] ^= 0x40;
    v = test_receive_rtp(f.rx, f.srtp_rx, &forged, false, 0, NULL, &unprotected, NULL);
    g_assert_cmpint(v, ==, SRTPPLUS_PASS);
    g_assert_true(unprotected);
    fixture_close(&f);
}

static void test_plausibility_and_malformed(void)
{
    struct fixture f;
    fixture_open(&f, SRTPPLUS_PROFILE_AES128_CM_SHA1_80, 0);
    enum { N = 6000 };
    struct test_packet *wire = g_new(struct test_packet, N);
    send_run(&f, 0, N, wire, NULL);
    for (size_t i = 0; i <= 1100; i++)
        expect_delivered(&f, &wire[i], NULL);
    /* highest = 1100: 1024 behind and 4096 ahead are the edges. */
    g_assert_cmpint(check_only(&f, &wire[75]), ==, SRTPPLUS_DROP_INDEX);
    g_assert_cmpint(check_only(&f, &wire[76]), ==, SRTPPLUS_DROP_REPLAY);
    g_assert_cmpint(check_only(&f, &wire[1100 + 4096]), ==, SRTPPLUS_PASS);
    g_assert_cmpint(check_only(&f, &wire[1100 + 4097]), ==, SRTPPLUS_DROP_INDEX);

    struct test_packet short_packet = wire[1101];
    short_packet.len = 12 + 10 + 4 - 1;
    struct srtpplus_check chk;
    g_assert_cmpint(
        srtpplus_receiver_check_rtp(f.rx, short_packet.data, short_packet.len, false, 0, &chk), ==,
        SRTPPLUS_DROP_MALFORMED);
    g_assert_cmpint(srtpplus_receiver_check_rtp(f.rx, short_packet.data, 0, true, 0, &chk), ==,
                    SRTPPLUS_DROP_MALFORMED);
    short_packet.len++;
    g_assert_cmpint(check_only(&f, &short_packet), ==, SRTPPLUS_DROP_TAG);
    g_free(wire);
    fixture_close(&f);
}

static void test_unknown_ssrc_budget(void)
{
    struct fixture f;
    fixture_open(&f, SRTPPLUS_PROFILE_AES128_CM_SHA1_80, 20);
    g_assert_cmpint(srtpplus_receiver_remove_ssrc(f.rx, SSRC), ==, SRTPPLUS_OK);
    g_assert_cmpint(srtpplus_receiver_remove_ssrc(f.rx, SSRC), ==, SRTPPLUS_ERR_NOT_FOUND);
    enum { N = 60 };
    struct test_packet wire[N];
    send_run(&f, 500, N, wire, NULL);
    struct srtpplus_check chk;
    const uint64_t second = 1000000000ull;
    /* Untracked, a genuine packet passes by its tag (tag_prn at ROC 0)... */
    g_assert_cmpint(
        srtpplus_receiver_check_rtp(f.rx, wire[0].data, wire[0].len, true, second, &chk), ==,
        SRTPPLUS_PASS);
    /* ...while forged tags compete for the budget: a burst of 20 at t = 1 s,
     * then nothing until tokens return; genuine ones still pass. */
    struct test_packet forged[21];
    for (int i = 0; i < 21; i++) {
        forged[i] = wire[i];
        forged[i].data[forged[i].len - 1] ^= 0x5a;
    }
    for (int i = 0; i < 20; i++)
        g_assert_cmpint(
            srtpplus_receiver_check_rtp(f.rx, forged[i].data, forged[i].len, true, second, &chk),
            ==, SRTPPLUS_UNVERIFIED_BUDGET_OK);
    g_assert_cmpint(
        srtpplus_receiver_check_rtp(f.rx, forged[20].data, forged[20].len, true, second, &chk), ==,
        SRTPPLUS_DROP_BUDGET);
    g_assert_cmpint(
        srtpplus_receiver_check_rtp(f.rx, wire[20].data, wire[20].len, true, second, &chk), ==,
        SRTPPLUS_PASS);
    g_assert_cmpint(srtpplus_receiver_check_rtp(f.rx, forged[20].data, forged[20].len, true,
                                                second + second / 20, &chk),
                    ==, SRTPPLUS_UNVERIFIED_BUDGET_OK);

    /* Authenticated but untracked: nothing is recorded until the caller adds the SSRC. */
    bool unprotected;
    enum srtpplus_confirm confirm;
    g_assert_cmpint(
        test_receive_rtp(f.rx, f.srtp_rx, &wire[21], false, 0, NULL, &unprotected, &confirm), ==,
        SRTPPLUS_PASS);
    g_assert_true(unprotected);
    g_assert_cmpint(confirm, ==, SRTPPLUS_CONFIRM_UNKNOWN_SSRC);
    g_assert_cmpint(srtpplus_receiver_add_ssrc(f.rx, SSRC, 0), ==, SRTPPLUS_OK);
    g_assert_cmpint(srtpplus_receiver_add_ssrc(f.rx, SSRC, 0), ==, SRTPPLUS_ERR_EXISTS);
    for (size_t i = 22; i < N; i++)
        expect_delivered(&f, &wire[i], NULL);
    for (uint32_t s = 1; s < SRTPPLUS_RECEIVER_MAX_SSRCS; s++)
        g_assert_cmpint(srtpplus_receiver_add_ssrc(f.rx, s, 0), ==, SRTPPLUS_OK);
    g_assert_cmpint(srtpplus_receiver_add_ssrc(f.rx, 0xabcdef, 0), ==, SRTPPLUS_ERR_FULL);
    fixture_close(&f);
}

static void run_rtcp(enum srtpplus_profile profile)
{
    struct fixture f;
    fixture_open(&f, profile, 0);
    enum { N = 400 };
    struct test_packet *wire = g_new(struct test_packet, N);
    for (size_t i = 0; i < N; i++) {
        test_rtcp_packet(&wire[i], SSRC);
        test_send_rtcp(f.srtp_tx, f.tx, &wire[i]);
    }
    struct srtpplus_check chk;
    bool unprotected;
    for (size_t i = 0; i < N; i++) {
        if (i == N - 60)
            continue; /* arrives last, inside libsrtp's 128-packet SRTCP replay window */
        g_assert_cmpint(test_receive_rtcp(f.rx, f.srtp_rx, &wire[i], true, 0, &unprotected), ==,
                        SRTPPLUS_PASS);
        g_assert_true(unprotected);
        if (i % 50 == 0)
            srtpplus_receiver_maintain(f.rx);
    }
    g_assert_cmpint(test_receive_rtcp(f.rx, f.srtp_rx, &wire[N - 60], true, 0, &unprotected), ==,
                    SRTPPLUS_PASS);
    g_assert_true(unprotected);
    g_assert_cmpint(
        srtpplus_receiver_check_rtcp(f.rx, wire[N - 1].data, wire[N - 1].len, true, 0, &chk), ==,
        SRTPPLUS_DROP_REPLAY);
    g_assert_cmpuint(chk.index, ==, N); /* libsrtp numbers SRTCP packets from 1 */
    g_assert_cmphex(chk.ssrc, ==, SSRC);
    struct test_packet forged = wire[N - 1];
    forged.data[forged.len - 3] ^= 0x10;
    g_assert_cmpint(srtpplus_receiver_check_rtcp(f.rx, forged.data, forged.len, true, 0, &chk), ==,
                    SRTPPLUS_DROP_TAG);
    g_assert_cmpint(srtpplus_receiver_check_rtcp(f.rx, forged.data, forged.len, false, 0, &chk), ==,
                    SRTPPLUS_PASS);
    g_assert_cmpint(srtpplus_receiver_check_rtcp(f.rx, forged.data, 10, true, 0, &chk), ==,
                    SRTPPLUS_DROP_MALFORMED);
    /* An SRTCP index far ahead of the highest authenticated one. */
    struct srtpplus_profile_sizes sizes;
    srtpplus_profile_sizes(profile, &sizes);
    uint8_t *index_field = forged.data + forged.len - 4 - sizes.srtcp_auth_len - 4;
    srtpplus_store_be32(index_field, 0x80000000u | (N + 5000));
    g_assert_cmpint(srtpplus_receiver_check_rtcp(f.rx, forged.data, forged.len, true, 0, &chk), ==,
                    SRTPPLUS_DROP_INDEX);
    g_free(wire);
    fixture_close(&f);
}

static void run_profile(enum srtpplus_profile profile)
{
    enum { N = 300 };
    struct fixture f;
    fixture_open(&f, profile, 0);
    struct test_packet wire[N], plain[N];
    send_run(&f, 65500, N, wire, plain);
    struct srtpplus_profile_sizes sizes;
    srtpplus_profile_sizes(profile, &sizes);
    g_assert_cmpuint(wire[0].len, ==, 172 + sizes.srtp_tag_len + 4);
    for (size_t i = 0; i < N; i++)
        expect_delivered(&f, &wire[i], &plain[i]);
    fixture_close(&f);
    run_rtcp(profile);
}

/* An SRTCP packet: header of a receiver report from `ssrc`, the E bit and
 * `index`, room for an 80-bit HMAC (zeros: only the tag is checked here). */
static size_t srtcp_packet(uint8_t *p, uint32_t ssrc, uint32_t index)
{
    memset(p, 0, 64);
    p[0] = 0x80;
    p[1] = 201;
    p[3] = 1;
    for (int i = 0; i < 4; i++) {
        p[4 + i] = (uint8_t)(ssrc >> (24 - 8 * i));
        p[8 + i] = (uint8_t)((0x80000000u | index) >> (24 - 8 * i));
    }
    return 12 + 10;
}

/* A sender SSRC that never sent RTP (a receive-only leg's RTCP SSRC): its
 * SRTCP passes by its tag_prn while forged SRTCP from random SSRCs has
 * spent the RTCP budget. */
static void test_untracked_rtcp_sender_passes_by_its_tag(void)
{
    uint8_t key[16], salt[14];
    memset(key, 7, sizeof key);
    memset(salt, 9, sizeof salt);
    struct srtpplus_sender_config tc;
    srtpplus_sender_config_init(&tc, SRTPPLUS_SCHEME_PRN, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    struct srtpplus_sender *tx = NULL;
    g_assert_cmpint(srtpplus_sender_new(&tc, key, 16, salt, 14, &tx), ==, SRTPPLUS_OK);
    struct srtpplus_receiver_config rc;
    srtpplus_receiver_config_init(&rc, SRTPPLUS_SCHEME_PRN, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    rc.budget_rate = rc.budget_burst = 48;
    struct srtpplus_receiver *rx = NULL;
    g_assert_cmpint(srtpplus_receiver_new(&rc, key, 16, salt, 14, &rx), ==, SRTPPLUS_OK);
    g_assert_cmpint(srtpplus_receiver_add_ssrc(rx, 0xAAAA0001, 0), ==, SRTPPLUS_OK);
    uint64_t now = 1000000000ull;
    struct srtpplus_check chk;
    uint8_t p[64];
    unsigned forged_through = 0;
    for (uint32_t i = 0; i < 500; i++) {
        size_t len = srtcp_packet(p, 0x10000 + i, 1000 + i);
        memcpy(p + len, "\x01\x02\x03\x04", 4);
        forged_through += !srtpplus_verdict_is_drop(
            srtpplus_receiver_check_rtcp(rx, p, len + 4, true, now, &chk));
    }
    g_assert_cmpuint(forged_through, <=, 48);
    for (uint32_t index = 1; index <= 10; index++) {
        size_t len = srtcp_packet(p, 0xBBBB0002, index);
        g_assert_cmpint(srtpplus_sender_append_tag_rtcp(tx, p, &len, sizeof p), ==, SRTPPLUS_OK);
        g_assert_cmpint(srtpplus_receiver_check_rtcp(rx, p, len, true, now, &chk), ==,
                        SRTPPLUS_PASS);
    }
    srtpplus_receiver_free(rx);
    srtpplus_sender_free(tx);
}

static void test_profile_sha1_80(void)
{
    run_profile(SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
}

static void test_profile_sha1_32(void)
{
    run_profile(SRTPPLUS_PROFILE_AES128_CM_SHA1_32);
}

static void test_profile_gcm(void)
{
    run_profile(SRTPPLUS_PROFILE_AEAD_AES_128_GCM);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_assert_cmpint(srtp_init(), ==, srtp_err_status_ok);
    g_test_add_func("/srtpplus/prn/roc-wrap", test_roc_wrap);
    g_test_add_func("/srtpplus/prn/without-maintenance", test_without_maintenance);
    g_test_add_func("/srtpplus/prn/detector-off-costs-no-tags", test_detector_off_costs_no_tags);
    g_test_add_func("/srtpplus/prn/reordering", test_reordering);
    g_test_add_func("/srtpplus/prn/duplicates-and-forgeries", test_duplicates_and_forgeries);
    g_test_add_func("/srtpplus/prn/plausibility-and-malformed", test_plausibility_and_malformed);
    g_test_add_func("/srtpplus/prn/unknown-ssrc-budget", test_unknown_ssrc_budget);
    g_test_add_func("/srtpplus/prn/untracked-rtcp-sender",
                    test_untracked_rtcp_sender_passes_by_its_tag);
    g_test_add_func("/srtpplus/prn/profile-sha1-80", test_profile_sha1_80);
    g_test_add_func("/srtpplus/prn/profile-sha1-32", test_profile_sha1_32);
    g_test_add_func("/srtpplus/prn/profile-gcm", test_profile_gcm);
    int rc = g_test_run();
    srtp_shutdown();
    return rc;
}
