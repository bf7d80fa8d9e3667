/* A session taking over streams another process ran with the same keys
 * (moat_srtp_session_resume, for restored calls): a stream past its first
 * rollover goes on in both directions only when resumed at its position;
 * a wrap between the position recorded and the first packet after is
 * recognised; positions are tracked across a wrap; a forged packet before
 * the first real one does not fix the rollover; a fresh stream needs no
 * resume. Every profile Moat runs. */
#include <glib.h>
#include <string.h>

#include "srtp/srtp_session.h"
#include "srtp_test_keys.h"

static moat_srtp_keying keys_for(moat_srtp_profile profile, bool flip)
{
    return srtp_test_keys(profile, flip);
}

#define SSRC 0x11223344u

static size_t packet(uint8_t *out, uint16_t seq)
{
    memset(out, 0, 256);
    out[0] = 0x80;
    out[1] = 8;
    out[2] = (uint8_t)(seq >> 8);
    out[3] = (uint8_t)seq;
    out[8] = 0x11, out[9] = 0x22, out[10] = 0x33, out[11] = 0x44;
    memset(out + 12, seq & 0xff, 160);
    return 172;
}

/* sender protects `seq`, receiver authenticates it: the receiver's status. */
static int cross(moat_srtp_session *sender, moat_srtp_session *receiver, uint16_t seq)
{
    uint8_t buffer[256];
    size_t length = packet(buffer, seq);
    g_assert_cmpint(moat_srtp_protect_rtp(sender, buffer, &length, sizeof buffer), ==,
                    MOAT_SRTP_OK);
    return moat_srtp_unprotect_rtp(receiver, buffer, &length);
}

static moat_srtp_session *session(moat_srtp_keying k)
{
    char error[128];
    moat_srtp_session *s = moat_srtp_session_new(&k, error, sizeof error);
    g_assert_nonnull(s);
    moat_srtp_session_track_positions(s);
    return s;
}

static void run_profile(moat_srtp_profile profile)
{
    moat_srtp_keying a_keys = keys_for(profile, false), b_keys = keys_for(profile, true);
    moat_srtp_session *a = session(a_keys), *b = session(b_keys);
    /* Across the first rollover. */
    for (uint32_t i = 65500; i < 65536 + 40; i++)
        g_assert_cmpint(cross(a, b, (uint16_t)i), ==, MOAT_SRTP_OK);
    moat_srtp_position sent = moat_srtp_session_position(a, false);
    moat_srtp_position got = moat_srtp_session_position(b, true);
    g_assert_true(sent.valid && got.valid);
    g_assert_cmpuint(sent.ssrc, ==, SSRC);
    g_assert_cmpuint(sent.roc, ==, 1);
    g_assert_cmpuint(sent.seq, ==, 39);
    g_assert_cmpuint(got.roc, ==, 1);
    g_assert_cmpuint(got.seq, ==, 39);

    /* The receiver restarts: a fresh session assumes rollover 0 and fails. */
    moat_srtp_session *fresh = session(b_keys);
    g_assert_cmpint(cross(a, fresh, 40), ==, MOAT_SRTP_ERR_AUTH);
    moat_srtp_session_free(fresh);
    /* Resumed at its position: goes on. A forged packet first (another
     * sequence number far away) neither passes nor fixes the rollover. */
    moat_srtp_session *b2 = session(b_keys);
    g_assert_cmpint(moat_srtp_session_resume(b2, &b_keys, true, got), ==, MOAT_SRTP_OK);
    uint8_t forged[256];
    size_t length = packet(forged, 40000);
    memset(forged + 172, 0x5a, 10);
    length += 10;
    g_assert_cmpint(moat_srtp_unprotect_rtp(b2, forged, &length), !=, MOAT_SRTP_OK);
    for (uint16_t seq = 41; seq < 60; seq++)
        g_assert_cmpint(cross(a, b2, seq), ==, MOAT_SRTP_OK);

    /* The sender restarts: resumed at its position, the receiver keeps
     * authenticating what it sends. */
    moat_srtp_session *a2 = session(a_keys);
    g_assert_cmpint(
        moat_srtp_session_resume(a2, &a_keys, false, moat_srtp_session_position(a, false)), ==,
        MOAT_SRTP_OK);
    for (uint16_t seq = 60; seq < 80; seq++)
        g_assert_cmpint(cross(a2, b2, seq), ==, MOAT_SRTP_OK);

    /* A position recorded before a wrap the stream made since: the first
     * packet's sequence number says so. */
    moat_srtp_position old = {SSRC, 1, 65000, true};
    for (uint32_t i = 80; i < 65536 + 10; i += 1000)
        g_assert_cmpint(cross(a2, b2, (uint16_t)i), ==, MOAT_SRTP_OK);
    for (uint32_t i = 65536; i < 65536 + 10; i++)
        g_assert_cmpint(cross(a2, b2, (uint16_t)i), ==, MOAT_SRTP_OK);
    g_assert_cmpuint(moat_srtp_session_position(b2, true).roc, ==, 2);
    moat_srtp_session *b3 = session(b_keys);
    g_assert_cmpint(moat_srtp_session_resume(b3, &b_keys, true, old), ==, MOAT_SRTP_OK);
    g_assert_cmpint(cross(a2, b3, 10), ==, MOAT_SRTP_OK);
    g_assert_cmpuint(moat_srtp_session_position(b3, true).roc, ==, 2);

    /* Untracked (a room's session): no position kept. */
    char error[128];
    moat_srtp_session *plain = moat_srtp_session_new(&b_keys, error, sizeof error);
    g_assert_false(moat_srtp_session_position(plain, true).valid);
    moat_srtp_session_free(plain);

    /* Rollover 0: nothing to resume. */
    moat_srtp_position zero = {SSRC, 0, 100, true};
    g_assert_cmpint(moat_srtp_session_resume(b3, &b_keys, true, zero), ==, MOAT_SRTP_OK);
    moat_srtp_session_free(a);
    moat_srtp_session_free(b);
    moat_srtp_session_free(a2);
    moat_srtp_session_free(b2);
    moat_srtp_session_free(b3);
}

static void test_aes_cm_80(void)
{
    run_profile(MOAT_SRTP_PROFILE_AES128_CM_SHA1_80);
}

static void test_aes_cm_32(void)
{
    run_profile(MOAT_SRTP_PROFILE_AES128_CM_SHA1_32);
}

static void test_aead_gcm(void)
{
    run_profile(MOAT_SRTP_PROFILE_AEAD_AES_128_GCM);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/srtp_resume/aes_cm_80", test_aes_cm_80);
    g_test_add_func("/srtp_resume/aes_cm_32", test_aes_cm_32);
    g_test_add_func("/srtp_resume/aead_gcm", test_aead_gcm);
    return g_test_run();
}
