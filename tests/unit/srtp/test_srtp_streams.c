/* The bound on a session's libsrtp streams (srtp_stream_table.h): 10,000
 * fresh SSRCs, protected (RTP and RTCP) and authenticated by a peer, leave
 * each direction at MOAT_SRTP_MAX_STREAMS, every one of them evicting the
 * least recently used stream; a stream in use all along is kept (its replay
 * window still refuses an old packet); an evicted SSRC that comes back works
 * again; forgeries with fresh SSRCs add and evict nothing; a resumed stream
 * is not evicted before its first packet; evictions reach the counter the
 * session was given. Counts only, no timing. */
#include <glib.h>
#include <string.h>

#include "srtp/srtp_session.h"
#include "srtp_test_keys.h"
#include "srtp/srtp_stream_table.h"

#define FRESH 10000u
#define KEPT  0x0badcafeu

static moat_srtp_keying keys_for(bool flip)
{
    return srtp_test_keys(MOAT_SRTP_PROFILE_AES128_CM_SHA1_80, flip);
}

static moat_srtp_session *session(bool flip)
{
    char error[128];
    moat_srtp_keying k = keys_for(flip);
    moat_srtp_session *s = moat_srtp_session_new(&k, error, sizeof error);
    g_assert_nonnull(s);
    return s;
}

static void put32(uint8_t *at, uint32_t value)
{
    at[0] = (uint8_t)(value >> 24), at[1] = (uint8_t)(value >> 16);
    at[2] = (uint8_t)(value >> 8), at[3] = (uint8_t)value;
}

static size_t rtp(uint8_t *out, uint32_t ssrc, uint16_t seq)
{
    memset(out, 0, 256);
    out[0] = 0x80, out[1] = 8, out[2] = (uint8_t)(seq >> 8), out[3] = (uint8_t)seq;
    put32(out + 8, ssrc);
    memset(out + 12, seq & 0xff, 40);
    return 52;
}

/* A receiver report with no blocks, from `ssrc`. */
static size_t rtcp(uint8_t *out, uint32_t ssrc)
{
    memset(out, 0, 256);
    out[0] = 0x80, out[1] = 201, out[3] = 1;
    put32(out + 4, ssrc);
    return 8;
}

/* a protects one RTP packet, b authenticates it: b's status. *copy (when
 * not NULL) keeps the protected packet. */
static int cross(moat_srtp_session *a, moat_srtp_session *b, uint32_t ssrc, uint16_t seq,
                 uint8_t *copy, size_t *copy_length)
{
    uint8_t buffer[256];
    size_t length = rtp(buffer, ssrc, seq);
    g_assert_cmpint(moat_srtp_protect_rtp(a, buffer, &length, sizeof buffer), ==, MOAT_SRTP_OK);
    if (copy)
        memcpy(copy, buffer, length), *copy_length = length;
    return moat_srtp_unprotect_rtp(b, buffer, &length);
}

static void test_fresh_ssrcs_stay_bounded(void)
{
    moat_srtp_session *a = session(false), *b = session(true);
    uint64_t a_counter = 0, b_counter = 0;
    moat_srtp_session_count_evictions(a, &a_counter);
    moat_srtp_session_count_evictions(b, &b_counter);
    uint8_t old[256];
    size_t old_length = 0;
    g_assert_cmpint(cross(a, b, KEPT, 1, old, &old_length), ==, MOAT_SRTP_OK);
    for (uint32_t i = 0; i < FRESH; i++) {
        g_assert_cmpint(cross(a, b, 0x10000 + i, 1, NULL, NULL), ==, MOAT_SRTP_OK);
        g_assert_cmpuint(moat_srtp_session_streams(a, false), <=, MOAT_SRTP_MAX_STREAMS);
        g_assert_cmpuint(moat_srtp_session_streams(b, true), <=, MOAT_SRTP_MAX_STREAMS);
        if (i % 16 == 0) /* a stream in use all along */
            g_assert_cmpint(cross(a, b, KEPT, (uint16_t)(2 + i / 16), NULL, NULL), ==,
                            MOAT_SRTP_OK);
    }
    g_assert_cmpuint(moat_srtp_session_streams(a, false), ==, MOAT_SRTP_MAX_STREAMS);
    g_assert_cmpuint(moat_srtp_session_streams(b, true), ==, MOAT_SRTP_MAX_STREAMS);
    g_assert_cmpuint(moat_srtp_session_evictions(a, false), ==, FRESH + 1 - MOAT_SRTP_MAX_STREAMS);
    g_assert_cmpuint(moat_srtp_session_evictions(b, true), ==, FRESH + 1 - MOAT_SRTP_MAX_STREAMS);
    g_assert_cmpuint(a_counter, ==, FRESH + 1 - MOAT_SRTP_MAX_STREAMS);
    g_assert_cmpuint(b_counter, ==, FRESH + 1 - MOAT_SRTP_MAX_STREAMS);
    /* Nothing went the other way. */
    g_assert_cmpuint(moat_srtp_session_streams(a, true), ==, 0);
    g_assert_cmpuint(moat_srtp_session_streams(b, false), ==, 0);

    /* The stream used all along was never evicted: its replay window still
     * knows the first packet. */
    g_assert_cmpint(moat_srtp_unprotect_rtp(b, old, &old_length), ==, MOAT_SRTP_ERR_REPLAY);

    /* An evicted SSRC (the first fresh one) comes back: both ends start its
     * stream afresh and it goes on. */
    for (uint16_t seq = 2; seq < 12; seq++)
        g_assert_cmpint(cross(a, b, 0x10000, seq, NULL, NULL), ==, MOAT_SRTP_OK);
    g_assert_cmpuint(moat_srtp_session_streams(a, false), ==, MOAT_SRTP_MAX_STREAMS);
    g_assert_cmpuint(moat_srtp_session_streams(b, true), ==, MOAT_SRTP_MAX_STREAMS);
    moat_srtp_session_free(a);
    moat_srtp_session_free(b);
}

static void test_rtcp_fresh_ssrcs_stay_bounded(void)
{
    moat_srtp_session *a = session(false), *b = session(true);
    for (uint32_t i = 0; i < FRESH / 10; i++) {
        uint8_t buffer[256];
        size_t length = rtcp(buffer, 0x20000 + i);
        g_assert_cmpint(moat_srtp_protect_rtcp(a, buffer, &length, sizeof buffer), ==,
                        MOAT_SRTP_OK);
        g_assert_cmpint(moat_srtp_unprotect_rtcp(b, buffer, &length), ==, MOAT_SRTP_OK);
    }
    g_assert_cmpuint(moat_srtp_session_streams(a, false), ==, MOAT_SRTP_MAX_STREAMS);
    g_assert_cmpuint(moat_srtp_session_streams(b, true), ==, MOAT_SRTP_MAX_STREAMS);
    g_assert_cmpuint(moat_srtp_session_evictions(b, true), ==, FRESH / 10 - MOAT_SRTP_MAX_STREAMS);
    moat_srtp_session_free(a);
    moat_srtp_session_free(b);
}

/* Forgeries (a wrong tag) with fresh SSRCs: libsrtp makes no stream for a
 * packet that does not authenticate, and the table evicts nothing. */
static void test_forgeries_evict_nothing(void)
{
    moat_srtp_session *a = session(false), *b = session(true);
    for (uint32_t i = 0; i < MOAT_SRTP_MAX_STREAMS; i++)
        g_assert_cmpint(cross(a, b, 0x30000 + i, 1, NULL, NULL), ==, MOAT_SRTP_OK);
    for (uint32_t i = 0; i < 2000; i++) {
        uint8_t buffer[256];
        size_t length = rtp(buffer, 0x40000 + i, 1);
        memset(buffer + length, 0x5a, 10);
        length += 10;
        g_assert_cmpint(moat_srtp_unprotect_rtp(b, buffer, &length), ==, MOAT_SRTP_ERR_AUTH);
    }
    g_assert_cmpuint(moat_srtp_session_streams(b, true), ==, MOAT_SRTP_MAX_STREAMS);
    g_assert_cmpuint(moat_srtp_session_evictions(b, true), ==, 0);
    /* The streams from before all still stand: their next packets go on. */
    for (uint32_t i = 0; i < MOAT_SRTP_MAX_STREAMS; i++)
        g_assert_cmpint(cross(a, b, 0x30000 + i, 2, NULL, NULL), ==, MOAT_SRTP_OK);
    g_assert_cmpuint(moat_srtp_session_evictions(b, true), ==, 0);
    moat_srtp_session_free(a);
    moat_srtp_session_free(b);
}

/* A restored sender resumes a stream past its first rollover and protects
 * many fresh SSRCs before that stream's next packet: the resumed stream is
 * still there, at its rollover, and the receiver authenticates it. */
static void test_resumed_stream_is_not_evicted(void)
{
    moat_srtp_keying a_keys = keys_for(false);
    moat_srtp_session *a = session(false), *b = session(true), *elsewhere = session(true);
    moat_srtp_session_track_positions(a);
    for (uint32_t i = 65530; i < 65536 + 5; i++)
        g_assert_cmpint(cross(a, b, KEPT, (uint16_t)i, NULL, NULL), ==, MOAT_SRTP_OK);
    moat_srtp_position at = moat_srtp_session_position(a, false);
    g_assert_cmpuint(at.roc, ==, 1);

    moat_srtp_session *a2 = session(false);
    moat_srtp_session_track_positions(a2);
    g_assert_cmpint(moat_srtp_session_resume(a2, &a_keys, false, at), ==, MOAT_SRTP_OK);
    g_assert_cmpuint(moat_srtp_session_streams(a2, false), ==, 1);
    for (uint32_t i = 0; i < 4 * MOAT_SRTP_MAX_STREAMS; i++)
        g_assert_cmpint(cross(a2, elsewhere, 0x50000 + i, 1, NULL, NULL), ==, MOAT_SRTP_OK);
    g_assert_cmpuint(moat_srtp_session_streams(a2, false), ==, MOAT_SRTP_MAX_STREAMS);
    g_assert_cmpuint(moat_srtp_session_evictions(a2, false), ==, 3 * MOAT_SRTP_MAX_STREAMS + 1);
    for (uint16_t seq = 5; seq < 15; seq++)
        g_assert_cmpint(cross(a2, b, KEPT, seq, NULL, NULL), ==, MOAT_SRTP_OK);
    g_assert_cmpuint(moat_srtp_session_position(a2, false).roc, ==, 1);
    moat_srtp_session_free(a);
    moat_srtp_session_free(a2);
    moat_srtp_session_free(b);
    moat_srtp_session_free(elsewhere);
}

/* The table alone: least recently used first, `keep` spared, across the
 * wrap of its clock. */
static void test_table_order(void)
{
    moat_srtp_stream_table t = {.clock = UINT32_MAX - 10};
    uint32_t evicted = 0;
    for (uint32_t i = 0; i < MOAT_SRTP_MAX_STREAMS; i++)
        g_assert_false(moat_srtp_stream_table_add(&t, i, NULL, &evicted));
    g_assert_true(moat_srtp_stream_table_touch(&t, 0));
    g_assert_true(moat_srtp_stream_table_add(&t, 1000, NULL, &evicted));
    g_assert_cmpuint(evicted, ==, 1);
    uint32_t keep = 2;
    g_assert_true(moat_srtp_stream_table_add(&t, 1001, &keep, &evicted));
    g_assert_cmpuint(evicted, ==, 3);
    g_assert_true(moat_srtp_stream_table_holds(&t, 2));
    g_assert_false(moat_srtp_stream_table_holds(&t, 3));
    g_assert_false(moat_srtp_stream_table_touch(&t, 3));
    g_assert_cmpuint(moat_srtp_stream_table_count(&t), ==, MOAT_SRTP_MAX_STREAMS);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/srtp_streams/fresh-ssrcs-stay-bounded", test_fresh_ssrcs_stay_bounded);
    g_test_add_func("/srtp_streams/rtcp-fresh-ssrcs-stay-bounded",
                    test_rtcp_fresh_ssrcs_stay_bounded);
    g_test_add_func("/srtp_streams/forgeries-evict-nothing", test_forgeries_evict_nothing);
    g_test_add_func("/srtp_streams/resumed-stream-is-not-evicted",
                    test_resumed_stream_is_not_evicted);
    g_test_add_func("/srtp_streams/table-order", test_table_order);
    return g_test_run();
}
