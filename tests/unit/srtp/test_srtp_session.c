/* SRTP sessions keyed by real DTLS-SRTP handshakes: round trips, forgery,
 * replay and NACK-style re-protection for every supported profile. */
#include <string.h>

#include <glib.h>

#include "dtls_test_pair.h"
#include "srtp/srtp_session.h"

typedef struct {
    dtls_test_pair *pair;
    moat_srtp_session *client; /* protects with the client's write key */
    moat_srtp_session *server;
} keyed_sessions;

static keyed_sessions key_sessions(const char *profile_name)
{
    dtls_test_pair_options o = {.client_profiles = profile_name};
    keyed_sessions k = {.pair = dtls_test_pair_new(&o)};
    dtls_test_pair_start(k.pair);
    g_assert_true(dtls_test_pair_settle(k.pair, 20000));
    g_assert_true(k.pair->client.connected);
    g_assert_true(k.pair->server.connected);
    g_assert_cmpint(k.pair->client.keys.profile, ==, moat_srtp_profile_from_name(profile_name));
    char error[256] = "";
    k.client = moat_srtp_session_new(&k.pair->client.keys, error, sizeof error);
    g_assert_cmpstr(error, ==, "");
    g_assert_nonnull(k.client);
    k.server = moat_srtp_session_new(&k.pair->server.keys, error, sizeof error);
    g_assert_nonnull(k.server);
    return k;
}

static void free_sessions(keyed_sessions *k)
{
    moat_srtp_session_free(k->client);
    moat_srtp_session_free(k->server);
    dtls_test_pair_free(k->pair);
}

#define PAYLOAD 160

/* RTP header (RFC 3550 §5.1): V=2, PT=111, then the payload. */
static gsize build_rtp(guint8 *out, guint16 seq, guint32 ssrc)
{
    out[0] = 0x80;
    out[1] = 111;
    out[2] = seq >> 8;
    out[3] = seq & 0xff;
    guint32 ts = 960u * seq;
    for (int i = 0; i < 4; i++) {
        out[4 + i] = (guint8)(ts >> (24 - 8 * i));
        out[8 + i] = (guint8)(ssrc >> (24 - 8 * i));
    }
    for (gsize i = 0; i < PAYLOAD; i++)
        out[12 + i] = (guint8)(seq * 31 + i);
    return 12 + PAYLOAD;
}

/* RTCP receiver report with one report block (RFC 3550 §6.4.2). */
static gsize build_rtcp(guint8 *out, guint32 ssrc, guint8 fill)
{
    out[0] = 0x81;
    out[1] = 201;
    out[2] = 0;
    out[3] = 7; /* 8 words - 1 */
    for (int i = 0; i < 4; i++)
        out[4 + i] = (guint8)(ssrc >> (24 - 8 * i));
    memset(out + 8, fill, 24);
    return 32;
}

/* Protects into a buffer of exactly the needed size, so ASan catches any
 * write past the documented overhead. */
static guint8 *protect_exact(moat_srtp_session *s, const guint8 *plain, gsize length, gboolean rtcp,
                             gsize *out_length)
{
    gsize overhead = rtcp ? moat_srtp_session_rtcp_overhead(s) : moat_srtp_session_rtp_overhead(s);
    guint8 *buf = g_malloc(length + overhead);
    memcpy(buf, plain, length);
    size_t n = length;
    int rc = rtcp ? moat_srtp_protect_rtcp(s, buf, &n, length + overhead)
                  : moat_srtp_protect_rtp(s, buf, &n, length + overhead);
    g_assert_cmpint(rc, ==, MOAT_SRTP_OK);
    g_assert_cmpuint(n, ==, length + overhead);
    *out_length = n;
    return buf;
}

static int unprotect_copy(moat_srtp_session *s, const guint8 *packet, gsize length, gboolean rtcp,
                          guint8 *out, gsize *out_length)
{
    memcpy(out, packet, length);
    size_t n = length;
    int rc = rtcp ? moat_srtp_unprotect_rtcp(s, out, &n) : moat_srtp_unprotect_rtp(s, out, &n);
    *out_length = n;
    return rc;
}

static void check_round_trips(const char *profile_name, gsize rtp_overhead, gsize rtcp_overhead)
{
    keyed_sessions k = key_sessions(profile_name);
    g_assert_cmpuint(moat_srtp_session_rtp_overhead(k.client), ==, rtp_overhead);
    g_assert_cmpuint(moat_srtp_session_rtcp_overhead(k.client), ==, rtcp_overhead);

    guint8 plain[256], back[256];
    gsize plain_length, back_length, protected_length;
    /* Both directions, several SSRCs, a run of sequence numbers. */
    moat_srtp_session *senders[] = {k.client, k.server};
    moat_srtp_session *receivers[] = {k.server, k.client};
    for (int dir = 0; dir < 2; dir++) {
        for (guint32 ssrc = 1; ssrc <= 3; ssrc++) {
            for (guint16 seq = 100; seq < 150; seq++) {
                plain_length = build_rtp(plain, seq, ssrc * 0x01010101u);
                guint8 *p =
                    protect_exact(senders[dir], plain, plain_length, FALSE, &protected_length);
                /* The payload really is encrypted. */
                g_assert_true(memcmp(p + 12, plain + 12, PAYLOAD) != 0);
                g_assert_cmpint(
                    unprotect_copy(receivers[dir], p, protected_length, FALSE, back, &back_length),
                    ==, MOAT_SRTP_OK);
                g_assert_cmpmem(back, back_length, plain, plain_length);
                g_free(p);
            }
            plain_length = build_rtcp(plain, ssrc, (guint8)ssrc);
            guint8 *p = protect_exact(senders[dir], plain, plain_length, TRUE, &protected_length);
            g_assert_cmpint(
                unprotect_copy(receivers[dir], p, protected_length, TRUE, back, &back_length), ==,
                MOAT_SRTP_OK);
            g_assert_cmpmem(back, back_length, plain, plain_length);
            g_free(p);
        }
    }
    /* A session does not accept its own direction: the keys differ. */
    plain_length = build_rtp(plain, 7, 42);
    guint8 *p = protect_exact(k.client, plain, plain_length, FALSE, &protected_length);
    g_assert_cmpint(unprotect_copy(k.client, p, protected_length, FALSE, back, &back_length), ==,
                    MOAT_SRTP_ERR_AUTH);
    g_free(p);
    free_sessions(&k);
}

static void test_round_trip_gcm(void)
{
    check_round_trips("SRTP_AEAD_AES_128_GCM", 16, 20);
}

static void test_round_trip_sha1_80(void)
{
    check_round_trips("SRTP_AES128_CM_SHA1_80", 10, 14);
}

static void test_round_trip_sha1_32(void)
{
    /* RFC 5764 §4.1.2: SRTCP keeps the 80-bit tag. */
    check_round_trips("SRTP_AES128_CM_SHA1_32", 4, 14);
}

static void check_forgery_and_replay(const char *profile_name)
{
    keyed_sessions k = key_sessions(profile_name);
    guint8 plain[256], back[256];
    gsize plain_length = build_rtp(plain, 1000, 0xcafe);
    gsize length, back_length;
    guint8 *p = protect_exact(k.client, plain, plain_length, FALSE, &length);

    /* One flipped bit anywhere after the fixed header fails authentication:
     * payload, tag, and (authenticated, not encrypted) header fields. */
    const gsize positions[] = {1, 3, 7, 12, 12 + PAYLOAD / 2, length - 1};
    for (gsize i = 0; i < G_N_ELEMENTS(positions); i++) {
        guint8 forged[256];
        memcpy(forged, p, length);
        forged[positions[i]] ^= 0x01;
        g_assert_cmpint(unprotect_copy(k.server, forged, length, FALSE, back, &back_length), ==,
                        MOAT_SRTP_ERR_AUTH);
    }
    /* The genuine packet still passes (forgeries did not poison the replay
     * window), once. */
    g_assert_cmpint(unprotect_copy(k.server, p, length, FALSE, back, &back_length), ==,
                    MOAT_SRTP_OK);
    g_assert_cmpmem(back, back_length, plain, plain_length);
    g_assert_cmpint(unprotect_copy(k.server, p, length, FALSE, back, &back_length), ==,
                    MOAT_SRTP_ERR_REPLAY);
    g_free(p);

    /* Far behind the 1024-packet window: replay (too old). The sender's own
     * window forbids re-protecting that far back, so keep the early copy. */
    plain_length = build_rtp(plain, 1002, 0xcafe);
    gsize old_length = 0;
    guint8 *old = protect_exact(k.client, plain, plain_length, FALSE, &old_length);
    for (guint16 seq = 1001; seq <= 1001 + 1100; seq++) {
        plain_length = build_rtp(plain, seq, 0xcafe);
        p = protect_exact(k.client, plain, plain_length, FALSE, &length);
        if (seq == 1001 + 1100)
            g_assert_cmpint(unprotect_copy(k.server, p, length, FALSE, back, &back_length), ==,
                            MOAT_SRTP_OK);
        g_free(p);
    }
    g_assert_cmpint(unprotect_copy(k.server, old, old_length, FALSE, back, &back_length), ==,
                    MOAT_SRTP_ERR_REPLAY);
    g_free(old);

    /* Within the window, out of order, both accepted once. */
    plain_length = build_rtp(plain, 1001 + 1050, 0xcafe);
    p = protect_exact(k.client, plain, plain_length, FALSE, &length);
    g_assert_cmpint(unprotect_copy(k.server, p, length, FALSE, back, &back_length), ==,
                    MOAT_SRTP_OK);
    g_assert_cmpint(unprotect_copy(k.server, p, length, FALSE, back, &back_length), ==,
                    MOAT_SRTP_ERR_REPLAY);
    g_free(p);

    /* RTCP: forged and replayed. */
    plain_length = build_rtcp(plain, 0xcafe, 9);
    p = protect_exact(k.client, plain, plain_length, TRUE, &length);
    guint8 forged[256];
    memcpy(forged, p, length);
    forged[10] ^= 0x80;
    g_assert_cmpint(unprotect_copy(k.server, forged, length, TRUE, back, &back_length), ==,
                    MOAT_SRTP_ERR_AUTH);
    g_assert_cmpint(unprotect_copy(k.server, p, length, TRUE, back, &back_length), ==,
                    MOAT_SRTP_OK);
    g_assert_cmpint(unprotect_copy(k.server, p, length, TRUE, back, &back_length), ==,
                    MOAT_SRTP_ERR_REPLAY);
    g_free(p);

    /* Garbage and runts are OTHER or AUTH, never a crash. */
    guint8 junk[64] = {0x80, 111};
    gsize junk_lengths[] = {0, 1, 11, 12, 13, 20, 64};
    for (gsize i = 0; i < G_N_ELEMENTS(junk_lengths); i++) {
        int rc = unprotect_copy(k.server, junk, junk_lengths[i], FALSE, back, &back_length);
        g_assert_true(rc == MOAT_SRTP_ERR_OTHER || rc == MOAT_SRTP_ERR_AUTH);
        rc = unprotect_copy(k.server, junk, junk_lengths[i], TRUE, back, &back_length);
        g_assert_true(rc == MOAT_SRTP_ERR_OTHER || rc == MOAT_SRTP_ERR_AUTH);
    }
    free_sessions(&k);
}

static void test_forgery_and_replay(void)
{
    check_forgery_and_replay("SRTP_AEAD_AES_128_GCM");
    check_forgery_and_replay("SRTP_AES128_CM_SHA1_80");
    check_forgery_and_replay("SRTP_AES128_CM_SHA1_32");
}

static void test_repeat_protect(void)
{
    /* A NACK answer re-protects a packet with its original sequence number:
     * libsrtp must not refuse it, and it must come out identical. */
    keyed_sessions k = key_sessions("SRTP_AES128_CM_SHA1_80");
    guint8 plain[256], back[256];
    gsize plain_length = build_rtp(plain, 5000, 0xbeef);
    gsize first_length, again_length, back_length;
    guint8 *first = protect_exact(k.client, plain, plain_length, FALSE, &first_length);
    for (guint16 seq = 5001; seq < 5010; seq++) {
        guint8 other[256];
        gsize n = build_rtp(other, seq, 0xbeef);
        g_free(protect_exact(k.client, other, n, FALSE, &n));
    }
    guint8 *again = protect_exact(k.client, plain, plain_length, FALSE, &again_length);
    g_assert_cmpmem(first, first_length, again, again_length);
    /* The original was lost; the retransmission is accepted. */
    g_assert_cmpint(unprotect_copy(k.server, again, again_length, FALSE, back, &back_length), ==,
                    MOAT_SRTP_OK);
    g_assert_cmpmem(back, back_length, plain, plain_length);
    /* Had both arrived, the second is a replay. */
    g_assert_cmpint(unprotect_copy(k.server, first, first_length, FALSE, back, &back_length), ==,
                    MOAT_SRTP_ERR_REPLAY);
    g_free(first);
    g_free(again);
    free_sessions(&k);
}

static void test_capacity_and_arguments(void)
{
    keyed_sessions k = key_sessions("SRTP_AEAD_AES_128_GCM");
    guint8 buf[256];
    gsize length = build_rtp(buf, 1, 1);
    size_t n = length;
    g_assert_cmpint(moat_srtp_protect_rtp(k.client, buf, &n, length + 15), ==,
                    MOAT_SRTP_ERR_NOSPACE);
    g_assert_cmpuint(n, ==, length);
    g_assert_cmpint(moat_srtp_protect_rtp(k.client, buf, &n, length - 1), ==,
                    MOAT_SRTP_ERR_NOSPACE);
    g_assert_cmpint(moat_srtp_protect_rtcp(k.client, buf, &n, length + 19), ==,
                    MOAT_SRTP_ERR_NOSPACE);
    n = SIZE_MAX;
    g_assert_cmpint(moat_srtp_protect_rtp(k.client, buf, &n, SIZE_MAX), ==, MOAT_SRTP_ERR_INVALID);
    n = 4; /* shorter than an RTP header */
    g_assert_cmpint(moat_srtp_protect_rtp(k.client, buf, &n, sizeof buf), ==, MOAT_SRTP_ERR_OTHER);

    char error[256] = "";
    moat_srtp_keying bad = k.pair->client.keys;
    bad.salt_length = 14; /* GCM's salt is 12 bytes */
    g_assert_null(moat_srtp_session_new(&bad, error, sizeof error));
    g_assert_cmpstr(error, ==,
                    "SRTP_AEAD_AES_128_GCM needs a 16-byte key and 12-byte salt, got 16 and 14");
    bad.profile = 5;
    g_assert_null(moat_srtp_session_new(&bad, error, sizeof error));
    g_assert_cmpstr(error, ==, "unsupported SRTP profile 5");
    g_assert_null(moat_srtp_session_new(NULL, error, sizeof error));
    moat_srtp_session_free(NULL);

    /* A session from the wrong key rejects everything as forged. */
    moat_srtp_keying wrong = k.pair->server.keys;
    wrong.remote_key[0] ^= 1;
    moat_srtp_session *s = moat_srtp_session_new(&wrong, error, sizeof error);
    g_assert_nonnull(s);
    gsize protected_length = 0, back_length = 0;
    guint8 back[256];
    guint8 *p = protect_exact(k.client, buf, length, FALSE, &protected_length);
    g_assert_cmpint(unprotect_copy(s, p, protected_length, FALSE, back, &back_length), ==,
                    MOAT_SRTP_ERR_AUTH);
    g_free(p);
    moat_srtp_session_free(s);
    free_sessions(&k);
}

static void test_library(void)
{
    g_assert_cmpint(moat_srtp_library_init(), ==, MOAT_SRTP_OK);
    g_assert_cmpint(moat_srtp_library_init(), ==, MOAT_SRTP_OK);
    g_assert_true(g_str_has_prefix(moat_srtp_library_version(), "libsrtp2 2."));
    g_assert_cmpuint(moat_srtp_profile_key_length(MOAT_SRTP_PROFILE_AES128_CM_SHA1_32), ==, 16);
    g_assert_cmpuint(moat_srtp_profile_salt_length(MOAT_SRTP_PROFILE_AEAD_AES_128_GCM), ==, 12);
    g_assert_cmpuint(moat_srtp_profile_key_length(3), ==, 0);
    g_assert_cmpstr(moat_srtp_profile_name(MOAT_SRTP_PROFILE_AES128_CM_SHA1_80), ==,
                    "SRTP_AES128_CM_SHA1_80");
    g_assert_null(moat_srtp_profile_name(0));
    g_assert_cmpint(moat_srtp_profile_from_name("SRTP_AEAD_AES_256_GCM"), ==, 0);
    g_assert_cmpint(moat_srtp_profile_from_name(NULL), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/srtp/library", test_library);
    g_test_add_func("/srtp/round-trip/aead-aes-128-gcm", test_round_trip_gcm);
    g_test_add_func("/srtp/round-trip/aes128-cm-sha1-80", test_round_trip_sha1_80);
    g_test_add_func("/srtp/round-trip/aes128-cm-sha1-32", test_round_trip_sha1_32);
    g_test_add_func("/srtp/forgery-and-replay", test_forgery_and_replay);
    g_test_add_func("/srtp/repeat-protect", test_repeat_protect);
    g_test_add_func("/srtp/capacity-and-arguments", test_capacity_and_arguments);
    return g_test_run();
}
