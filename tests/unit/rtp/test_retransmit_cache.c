/* Retransmission cache: hits, misses after overwrite, sequence wrap, resend
 * rate limit, age limit and argument checks. */
#include <glib.h>
#include <string.h>

#include "rtp/retransmit_cache.h"

/* An RTP packet whose payload is derived from seq, so copies can be told
 * apart; its length varies with seq too. */
static size_t make_packet(uint8_t *p, uint16_t seq)
{
    size_t len = 12 + 20 + seq % 50;
    memset(p, 0, len);
    p[0] = 0x80;
    p[1] = 96;
    p[2] = (uint8_t)(seq >> 8);
    p[3] = (uint8_t)seq;
    p[8] = 0xAB;
    for (size_t i = 12; i < len; i++)
        p[i] = (uint8_t)(seq * 7 + i);
    return len;
}

static void assert_holds(const moat_retransmit_cache *c, uint16_t seq)
{
    uint8_t want[128];
    size_t want_len = make_packet(want, seq);
    const uint8_t *got;
    size_t got_len;
    g_assert_cmpint(moat_retransmit_cache_get(c, seq, &got, &got_len), ==, MOAT_RTP_OK);
    g_assert_cmpmem(got, got_len, want, want_len);
}

static void assert_absent(const moat_retransmit_cache *c, uint16_t seq)
{
    const uint8_t *got;
    size_t got_len;
    g_assert_cmpint(moat_retransmit_cache_get(c, seq, &got, &got_len), ==, MOAT_RTP_ERR_NOT_FOUND);
}

static void store(moat_retransmit_cache *c, uint16_t seq, uint64_t now)
{
    uint8_t p[128];
    size_t len = make_packet(p, seq);
    g_assert_cmpint(moat_retransmit_cache_store(c, p, len, now), ==, MOAT_RTP_OK);
}

static void test_hit_miss_overwrite(void)
{
    moat_retransmit_cache *c = moat_retransmit_cache_new(512, 10000, 0);
    g_assert_nonnull(c);
    assert_absent(c, 1);
    for (uint16_t seq = 1; seq <= 600; seq++)
        store(c, seq, seq);
    /* The last 512 (89..600) are there; 1..88 were overwritten by 513..600
     * and a lookup must not return the newer packet in their slot. */
    for (uint16_t seq = 89; seq <= 600; seq++)
        assert_holds(c, seq);
    for (uint16_t seq = 1; seq <= 88; seq++)
        assert_absent(c, seq);
    /* 601 was never stored; its slot holds 89. */
    assert_absent(c, 601);
    moat_retransmit_cache_clear(c);
    assert_absent(c, 600);
    moat_retransmit_cache_free(c);
}

static void test_wrap(void)
{
    /* 65400..65535 then 0..19: the last 64 are 65492..65535 and 0..19. */
    moat_retransmit_cache *c = moat_retransmit_cache_new(64, 0, 0);
    for (uint32_t seq = 65400; seq < 65536 + 20; seq++)
        store(c, (uint16_t)seq, 0);
    assert_holds(c, 65535);
    assert_holds(c, 0);
    assert_holds(c, 19);
    assert_holds(c, 65492);
    assert_absent(c, 65491);
    assert_absent(c, 20);
    moat_retransmit_cache_free(c);
}

static void test_resend_rate_limit(void)
{
    moat_retransmit_cache *c = moat_retransmit_cache_new(
        MOAT_RETRANSMIT_DEFAULT_SLOTS, MOAT_RETRANSMIT_DEFAULT_MIN_INTERVAL_US, 1000000);
    const uint8_t *p;
    size_t len;
    store(c, 42, 1000);
    g_assert_cmpint(moat_retransmit_cache_resend(c, 42, 2000, &p, &len), ==, MOAT_RTP_OK);
    g_assert_cmpuint(p[3], ==, 42);
    g_assert_cmpint(moat_retransmit_cache_resend(c, 42, 2000 + 9999, &p, &len), ==,
                    MOAT_RTP_ERR_RATE_LIMITED);
    g_assert_cmpint(moat_retransmit_cache_resend(c, 42, 2000 + 10000, &p, &len), ==, MOAT_RTP_OK);
    g_assert_cmpint(moat_retransmit_cache_resend(c, 42, 2000 + 15000, &p, &len), ==,
                    MOAT_RTP_ERR_RATE_LIMITED);
    /* Rate limiting is per packet. */
    store(c, 43, 1000);
    g_assert_cmpint(moat_retransmit_cache_resend(c, 43, 2000 + 15000, &p, &len), ==, MOAT_RTP_OK);
    /* Storing a packet again (a new one with that number) resets its limit. */
    store(c, 42, 20000);
    g_assert_cmpint(moat_retransmit_cache_resend(c, 42, 20001, &p, &len), ==, MOAT_RTP_OK);
    /* Older than max_age: not resent. */
    g_assert_cmpint(moat_retransmit_cache_resend(c, 43, 1000 + 1000001, &p, &len), ==,
                    MOAT_RTP_ERR_NOT_FOUND);
    g_assert_cmpint(moat_retransmit_cache_resend(c, 44, 3000, &p, &len), ==,
                    MOAT_RTP_ERR_NOT_FOUND);
    moat_retransmit_cache_free(c);
}

static void test_bad_arguments(void)
{
    g_assert_null(moat_retransmit_cache_new(0, 0, 0));
    g_assert_null(moat_retransmit_cache_new(3, 0, 0));
    g_assert_null(moat_retransmit_cache_new(65536, 0, 0));
    moat_retransmit_cache *c = moat_retransmit_cache_new(1, 0, 0);
    g_assert_nonnull(c);
    uint8_t p[MOAT_RETRANSMIT_MAX_PACKET + 1];
    memset(p, 0, sizeof(p));
    p[0] = 0x80;
    g_assert_cmpint(moat_retransmit_cache_store(c, p, 11, 0), ==, MOAT_RTP_ERR_TRUNCATED);
    g_assert_cmpint(moat_retransmit_cache_store(c, p, sizeof(p), 0), ==, MOAT_RTP_ERR_NO_SPACE);
    g_assert_cmpint(moat_retransmit_cache_store(c, p, MOAT_RETRANSMIT_MAX_PACKET, 0), ==,
                    MOAT_RTP_OK);
    p[0] = 0x40;
    g_assert_cmpint(moat_retransmit_cache_store(c, p, 12, 0), ==, MOAT_RTP_ERR_VERSION);
    const uint8_t *got;
    size_t len;
    g_assert_cmpint(moat_retransmit_cache_get(c, 0, &got, &len), ==, MOAT_RTP_OK);
    g_assert_cmpuint(len, ==, MOAT_RETRANSMIT_MAX_PACKET);
    moat_retransmit_cache_free(c);
    moat_retransmit_cache_free(NULL);
}

/* Growing keeps every packet; shrinking keeps the newest of those that share
 * a slot (across the sequence wrap too). */
static void test_resized(void)
{
    moat_retransmit_cache *small = moat_retransmit_cache_new(16, 10000, 0);
    for (uint32_t seq = 65530; seq < 65530 + 16; seq++)
        store(small, (uint16_t)seq, 1000);
    moat_retransmit_cache *big = moat_retransmit_cache_resized(small, 64);
    g_assert_nonnull(big);
    g_assert_cmpuint(moat_retransmit_cache_slots(big), ==, 64);
    for (uint32_t seq = 65530; seq < 65530 + 16; seq++)
        assert_holds(big, (uint16_t)seq);
    store(big, 100, 2000);
    assert_holds(big, 100);
    moat_retransmit_cache *tiny = moat_retransmit_cache_resized(big, 4);
    /* 65530..65535 and 0..9 were stored; 100 came last and took slot 0
     * from 8. */
    assert_holds(tiny, 100);
    assert_holds(tiny, 6);
    assert_holds(tiny, 7);
    assert_holds(tiny, 9);
    assert_absent(tiny, 8);
    assert_absent(tiny, 65530);
    g_assert_null(moat_retransmit_cache_resized(big, 3));
    moat_retransmit_cache_free(tiny);
    moat_retransmit_cache_free(big);
    moat_retransmit_cache_free(small);
}

/* An arena of 1500 bytes (the least) for 64 slots: packets of 32..81
 * bytes are kept back to back, a packet that would cross the arena's end
 * starts again at 0, and what the arena wrote over is gone even though its
 * slot still names it. */
static void test_arena(void)
{
    moat_retransmit_cache *c = moat_retransmit_cache_new_bytes(64, 100, 0, 0);
    g_assert_nonnull(c);
    g_assert_cmpuint(moat_retransmit_cache_bytes(c), ==, MOAT_RETRANSMIT_MAX_PACKET);
    size_t total = 0;
    uint16_t seq = 0;
    for (; total < 3 * MOAT_RETRANSMIT_MAX_PACKET; seq++) {
        uint8_t p[128];
        total += make_packet(p, seq);
        store(c, seq, 0);
        assert_holds(c, seq); /* across the wrap too */
    }
    /* The newest ~1500 bytes are there (at least 18 packets of <= 81),
     * the oldest are not. */
    for (uint16_t back = 1; back <= 18; back++)
        assert_holds(c, (uint16_t)(seq - back));
    assert_absent(c, (uint16_t)(seq - 40));
    /* Shrinking the slots keeps the newest; growing the arena keeps all. */
    moat_retransmit_cache *small = moat_retransmit_cache_resized_bytes(c, 8, 0);
    for (uint16_t back = 1; back <= 8; back++)
        assert_holds(small, (uint16_t)(seq - back));
    moat_retransmit_cache *wide = moat_retransmit_cache_resized_bytes(c, 64, 64 * 1500);
    g_assert_cmpuint(moat_retransmit_cache_bytes(wide), ==, 64 * 1500);
    for (uint16_t back = 1; back <= 18; back++)
        assert_holds(wide, (uint16_t)(seq - back));
    /* More than n_slots largest packets is of no use: capped. */
    moat_retransmit_cache *one = moat_retransmit_cache_new_bytes(1, 1 << 20, 0, 0);
    g_assert_cmpuint(moat_retransmit_cache_bytes(one), ==, MOAT_RETRANSMIT_MAX_PACKET);
    moat_retransmit_cache_free(one);
    moat_retransmit_cache_free(wide);
    moat_retransmit_cache_free(small);
    moat_retransmit_cache_free(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rtp/retransmit-cache/hit-miss-overwrite", test_hit_miss_overwrite);
    g_test_add_func("/rtp/retransmit-cache/wrap", test_wrap);
    g_test_add_func("/rtp/retransmit-cache/resend-rate-limit", test_resend_rate_limit);
    g_test_add_func("/rtp/retransmit-cache/bad-arguments", test_bad_arguments);
    g_test_add_func("/rtp/retransmit-cache/resized", test_resized);
    g_test_add_func("/rtp/retransmit-cache/arena", test_arena);
    return g_test_run();
}
