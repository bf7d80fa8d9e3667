/* Scheme chain end to end with libsrtp: the chain block survives SRTP, is learned only
 * from packets that passed srtp_unprotect, and r copies survive r - 1 consecutive
 * losses. */
#include "srtpplus_test_srtp.h"

#include <glib.h>
#include <string.h>

static const uint8_t master_key[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                                       0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
static const uint8_t master_salt[14] = {0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6,
                                        0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd};
#define SSRC 0x12345678u

struct fixture {
    srtp_t srtp_tx, srtp_rx;
    struct srtpplus_sender *tx;
    struct srtpplus_receiver *rx;
    struct srtpplus_chain_params chain;
};

static void fixture_open(struct fixture *f, uint8_t depth, uint8_t copies, uint32_t budget_rate)
{
    f->chain = (struct srtpplus_chain_params){.depth = depth, .copies = copies};
    f->srtp_tx =
        test_srtp_session(SRTPPLUS_PROFILE_AES128_CM_SHA1_80, master_key, master_salt, SSRC, 0);
    f->srtp_rx =
        test_srtp_session(SRTPPLUS_PROFILE_AES128_CM_SHA1_80, master_key, master_salt, SSRC, 0);
    struct srtpplus_sender_config scfg;
    srtpplus_sender_config_init(&scfg, SRTPPLUS_SCHEME_CHAIN, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    scfg.chain = f->chain;
    g_assert_cmpint(srtpplus_sender_new(&scfg, master_key, 16, master_salt, 14, &f->tx), ==,
                    SRTPPLUS_OK);
    struct srtpplus_receiver_config rcfg;
    srtpplus_receiver_config_init(&rcfg, SRTPPLUS_SCHEME_CHAIN, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    rcfg.chain = f->chain;
    rcfg.budget_rate = budget_rate;
    rcfg.budget_burst = 1;
    g_assert_cmpint(srtpplus_receiver_new(&rcfg, master_key, 16, master_salt, 14, &f->rx), ==,
                    SRTPPLUS_OK);
    g_assert_cmpint(srtpplus_receiver_add_ssrc(f->rx, SSRC, 0), ==, SRTPPLUS_OK);
}

static void fixture_close(struct fixture *f)
{
    srtpplus_receiver_free(f->rx);
    srtpplus_sender_free(f->tx);
    srtp_dealloc(f->srtp_tx);
    srtp_dealloc(f->srtp_rx);
}

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

static enum srtpplus_verdict receive(struct fixture *f, const struct test_packet *wire,
                                     uint64_t now_ns, struct test_packet *plain, bool *unprotected)
{
    enum srtpplus_confirm confirm = SRTPPLUS_CONFIRM_COUNT;
    enum srtpplus_verdict v =
        test_receive_rtp(f->rx, f->srtp_rx, wire, true, now_ns, plain, unprotected, &confirm);
    if (*unprotected)
        g_assert_cmpint(confirm, ==, SRTPPLUS_CONFIRMED);
    return v;
}

static void test_roc_wrap_and_strip(void)
{
    enum { N = 2000 };
    struct fixture f;
    fixture_open(&f, 32, 2, 0);
    struct test_packet *wire = g_new(struct test_packet, N), *plain = g_new(struct test_packet, N);
    send_run(&f, 64900, N, wire, plain);
    g_assert_cmpuint(wire[0].len, ==, 172 + 12 + 10 + 4);
    for (size_t i = 0; i < N; i++) {
        struct test_packet out;
        bool unprotected;
        g_assert_cmpint(receive(&f, &wire[i], 0, &out, &unprotected), ==, SRTPPLUS_PASS);
        g_assert_true(unprotected);
        g_assert_cmpmem(out.data, out.len, plain[i].data, plain[i].len);
    }
    /* Only bootstrap tags were computed: i0 .. i0 + D - 2, since packet i0 already
     * carries T[i0 + D - 1] as its second copy. Every later tag came from the table. */
    g_assert_cmpuint(srtpplus_receiver_stats(f.rx)->inline_tags, ==, 32 - 1);
    uint32_t learned;
    g_assert_true(srtpplus_receiver_learned_tag(f.rx, SSRC, 64900 + N - 1 + 32, &learned));
    g_assert_false(srtpplus_receiver_learned_tag(f.rx, SSRC, 64900 + N - 1 + 33, &learned));
    g_free(wire);
    g_free(plain);
    fixture_close(&f);
}

static void test_existing_padding(void)
{
    struct fixture f;
    fixture_open(&f, 8, 3, 0);
    for (uint16_t seq = 1; seq < 40; seq++) {
        struct test_packet p, original;
        test_rtp_packet(&p, SSRC, seq, seq * 160u);
        /* Five octets of padding of the application's own, ending in their count. */
        p.data[0] |= 0x20;
        memset(p.data + p.len, 0xee, 4);
        p.data[p.len + 4] = 5;
        p.len += 5;
        original = p;
        test_send_rtp(f.srtp_tx, f.tx, &p);
        struct test_packet out;
        bool unprotected;
        g_assert_cmpint(receive(&f, &p, 0, &out, &unprotected), ==, SRTPPLUS_PASS);
        g_assert_true(unprotected);
        g_assert_cmpmem(out.data, out.len, original.data, original.len);
    }
    /* Padding that leaves no room for a block: sent without one, passed on and counted. */
    struct test_packet p;
    test_rtp_packet(&p, SSRC, 40, 40 * 160);
    p.data[0] |= 0x20;
    p.len = 300;
    p.data[p.len - 1] = 250;
    struct test_packet original = p;
    g_assert_cmpint(srtpplus_sender_prepare_rtp(f.tx, p.data, &p.len, sizeof(p.data)), ==,
                    SRTPPLUS_ERR_PADDING);
    g_assert_cmpmem(p.data, p.len, original.data, original.len);
    int len = (int)p.len;
    g_assert_cmpint(srtp_protect(f.srtp_tx, p.data, &len), ==, srtp_err_status_ok);
    p.len = (size_t)len;
    g_assert_cmpint(srtpplus_sender_append_tag_rtp(f.tx, p.data, &p.len, sizeof(p.data)), ==,
                    SRTPPLUS_OK);
    struct test_packet out;
    bool unprotected;
    enum srtpplus_confirm confirm;
    g_assert_cmpint(test_receive_rtp(f.rx, f.srtp_rx, &p, true, 0, &out, &unprotected, &confirm),
                    ==, SRTPPLUS_PASS);
    g_assert_true(unprotected);
    g_assert_cmpint(confirm, ==, SRTPPLUS_CONFIRMED_CHAIN_MALFORMED);
    g_assert_cmpmem(out.data, out.len, original.data, original.len);
    fixture_close(&f);
}

/* Loses `lost` consecutive packets at several places of a 50 packet/s stream. With a
 * budget of zero an unverifiable packet would be dropped, so PASS everywhere proves every
 * tag was learned. When a loss does hide a tag, the budget (20/s) lets that one packet
 * through unverified and the chain goes on from it. */
static void run_losses(uint8_t copies, unsigned lost, bool expect_survival)
{
    enum { N = 400, D = 16 };
    const uint64_t packet_interval_ns = 20000000;
    struct fixture f;
    fixture_open(&f, D, copies, expect_survival ? 0 : 20);
    struct test_packet *wire = g_new(struct test_packet, N);
    send_run(&f, 1000, N, wire, NULL);
    size_t starts[] = {50, 100, 200, 300};
    size_t unverified = 0;
    for (size_t i = 0; i < N; i++) {
        bool skip = false;
        for (size_t s = 0; s < G_N_ELEMENTS(starts); s++)
            skip |= i >= starts[s] && i < starts[s] + lost;
        if (skip)
            continue;
        bool unprotected;
        enum srtpplus_verdict v =
            receive(&f, &wire[i], (uint64_t)i * packet_interval_ns, NULL, &unprotected);
        g_assert_true(unprotected);
        if (v == SRTPPLUS_UNVERIFIED_BUDGET_OK) {
            unverified++;
            /* Only the packet D after a loss's first packet lost every carrier of its tag. */
            bool expected = false;
            for (size_t s = 0; s < G_N_ELEMENTS(starts); s++)
                expected |= i == starts[s] + D;
            g_assert_true(expected);
            continue;
        }
        g_assert_cmpstr(srtpplus_verdict_name(v), ==, "pass");
    }
    g_assert_cmpuint(unverified, ==, expect_survival ? 0 : G_N_ELEMENTS(starts));
    g_free(wire);
    fixture_close(&f);
}

static void test_losses(void)
{
    for (uint8_t r = 1; r <= SRTPPLUS_CHAIN_MAX_COPIES; r++) {
        run_losses(r, r - 1u, true);
        run_losses(r, r, false);
    }
}

static void test_resync_through_budget(void)
{
    enum { N = 120, D = 8 };
    struct fixture f;
    fixture_open(&f, D, 1, 20);
    struct test_packet wire[N];
    send_run(&f, 7, N, wire, NULL);
    bool unprotected;
    for (size_t i = 0; i < N; i++) {
        if (i == 40)
            continue; /* the only carrier of T[48] */
        enum srtpplus_verdict v = receive(&f, &wire[i], 1000000000ull, NULL, &unprotected);
        g_assert_cmpint(v, ==, i == 40 + D ? SRTPPLUS_UNVERIFIED_BUDGET_OK : SRTPPLUS_PASS);
        g_assert_true(unprotected);
    }
    fixture_close(&f);
}

static void test_failed_unprotect_teaches_nothing(void)
{
    enum { N = 80, D = 8 };
    struct fixture f;
    fixture_open(&f, D, 1, 0);
    struct test_packet wire[N];
    send_run(&f, 300, N, wire, NULL);
    bool unprotected;
    for (size_t i = 0; i < 30; i++) {
        g_assert_cmpint(receive(&f, &wire[i], 0, NULL, &unprotected), ==, SRTPPLUS_PASS);
        g_assert_true(unprotected);
    }
    /* Packet 30 arrives with its chain block altered in transit: its SRTP+ tag is right,
     * so it reaches srtp_unprotect, which rejects it. T[30 + D] must stay unknown. */
    struct test_packet damaged = wire[30];
    damaged.data[damaged.len - 4 - 10 - 6] ^= 0x5a;
    g_assert_cmpint(receive(&f, &damaged, 0, NULL, &unprotected), ==, SRTPPLUS_PASS);
    g_assert_false(unprotected);
    uint32_t tag;
    g_assert_false(srtpplus_receiver_learned_tag(f.rx, SSRC, 300 + 30 + D, &tag));
    /* A check never learns, whatever the packet holds: feed one whose tail is a
     * well-formed plaintext chain block for the same index. */
    struct test_packet forged = wire[30];
    size_t block_at = forged.len - 4 - 10 - 8;
    srtpplus_store_be32(forged.data + block_at, 0xdeadbeef);
    forged.data[block_at + 4] = D;
    forged.data[block_at + 5] = 1;
    forged.data[block_at + 6] = 0xc5;
    forged.data[block_at + 7] = 8;
    g_assert_cmpint(receive(&f, &forged, 0, NULL, &unprotected), ==, SRTPPLUS_PASS);
    g_assert_false(unprotected);
    g_assert_false(srtpplus_receiver_learned_tag(f.rx, SSRC, 300 + 30 + D, &tag));
    for (size_t i = 31; i < 30 + D; i++) {
        g_assert_cmpint(receive(&f, &wire[i], 0, NULL, &unprotected), ==, SRTPPLUS_PASS);
        g_assert_true(unprotected);
    }
    g_assert_cmpint(receive(&f, &wire[30 + D], 0, NULL, &unprotected), ==, SRTPPLUS_DROP_BUDGET);
    /* The real packet 30, arriving late, is accepted and teaches T[30 + D], after which
     * packet 30 + D (dropped before, so not a replay) passes on its learned tag. */
    g_assert_cmpint(receive(&f, &wire[30], 0, NULL, &unprotected), ==, SRTPPLUS_PASS);
    g_assert_true(unprotected);
    g_assert_true(srtpplus_receiver_learned_tag(f.rx, SSRC, 300 + 30 + D, &tag));
    for (size_t i = 30 + D; i < N; i++) {
        g_assert_cmpint(receive(&f, &wire[i], 0, NULL, &unprotected), ==, SRTPPLUS_PASS);
        g_assert_true(unprotected);
    }
    fixture_close(&f);
}

static void test_forgeries_and_replay(void)
{
    enum { N = 200, D = 32 };
    struct fixture f;
    fixture_open(&f, D, 2, 0);
    struct test_packet wire[N];
    send_run(&f, 65530, N, wire, NULL);
    bool unprotected;
    for (size_t i = 0; i < 100; i++)
        g_assert_cmpint(receive(&f, &wire[i], 0, NULL, &unprotected), ==, SRTPPLUS_PASS);
    struct srtpplus_check chk;
    g_assert_cmpint(srtpplus_receiver_check_rtp(f.rx, wire[40].data, wire[40].len, true, 0, &chk),
                    ==, SRTPPLUS_DROP_REPLAY);
    /* Forged tags for learned indexes: dropped as tag; for indexes no tag is known for
     * yet: only the budget (here zero) would let them through. */
    GRand *rand = g_rand_new_with_seed(3);
    for (int i = 0; i < 10000; i++) {
        struct test_packet forged = wire[100];
        uint16_t ahead = (uint16_t)g_rand_int_range(rand, 0, 2 * D);
        uint16_t seq = (uint16_t)(65530 + 100 + ahead);
        forged.data[2] = (uint8_t)(seq >> 8);
        forged.data[3] = (uint8_t)seq;
        srtpplus_store_be32(forged.data + forged.len - 4, g_rand_int(rand));
        enum srtpplus_verdict v =
            srtpplus_receiver_check_rtp(f.rx, forged.data, forged.len, true, 0, &chk);
        g_assert_cmpint(v, ==, ahead < D ? SRTPPLUS_DROP_TAG : SRTPPLUS_DROP_BUDGET);
    }
    g_rand_free(rand);
    for (size_t i = 100; i < N; i++)
        g_assert_cmpint(receive(&f, &wire[i], 0, NULL, &unprotected), ==, SRTPPLUS_PASS);
    fixture_close(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_assert_cmpint(srtp_init(), ==, srtp_err_status_ok);
    g_test_add_func("/srtpplus/chain/roc-wrap-and-strip", test_roc_wrap_and_strip);
    g_test_add_func("/srtpplus/chain/existing-padding", test_existing_padding);
    g_test_add_func("/srtpplus/chain/losses", test_losses);
    g_test_add_func("/srtpplus/chain/resync-through-budget", test_resync_through_budget);
    g_test_add_func("/srtpplus/chain/failed-unprotect-teaches-nothing",
                    test_failed_unprotect_teaches_nothing);
    g_test_add_func("/srtpplus/chain/forgeries-and-replay", test_forgeries_and_replay);
    int rc = g_test_run();
    srtp_shutdown();
    return rc;
}
