/* What each session attack class sends, against a real libsrtp receiver
 * (srtp/srtp_session.h) keyed like the session's peer: forged RTP and RTCP
 * always fail authentication (never "replay", so the gateway counts them as
 * auth when nothing filters them first), replayed captures are replays. */
#include "forged_srtp.h"
#include "legit_media.h"

#include "rtp/rtp_bytes.h"

#include <stdatomic.h>
#include <string.h>

#include <glib.h>

typedef struct {
    moat_srtp_session *sender, *receiver;
    flood_session session;
    flood_options options;
    flood_session_env env;
} fixture;

static void keyed(fixture *f, moat_srtp_profile profile)
{
    moat_srtp_keying a = {.profile = profile,
                          .key_length = moat_srtp_profile_key_length(profile),
                          .salt_length = moat_srtp_profile_salt_length(profile)};
    memset(a.local_key, 0x11, sizeof a.local_key);
    memset(a.local_salt, 0x22, sizeof a.local_salt);
    memset(a.remote_key, 0x33, sizeof a.remote_key);
    memset(a.remote_salt, 0x44, sizeof a.remote_salt);
    moat_srtp_keying b = a;
    memcpy(b.local_key, a.remote_key, sizeof b.local_key);
    memcpy(b.local_salt, a.remote_salt, sizeof b.local_salt);
    memcpy(b.remote_key, a.local_key, sizeof b.remote_key);
    memcpy(b.remote_salt, a.local_salt, sizeof b.remote_salt);
    char error[256];
    memset(f, 0, sizeof *f);
    f->sender = moat_srtp_session_new(&a, error, sizeof error);
    f->receiver = moat_srtp_session_new(&b, error, sizeof error);
    g_assert_nonnull(f->sender);
    g_assert_nonnull(f->receiver);
    f->options.media = FLOOD_MEDIA_G711;
    f->env.options = &f->options;
    f->session.env = &f->env;
    f->session.srtp = f->sender;
    f->session.profile = profile;
    f->session.ssrc = 0xCAFEF00D;
    f->session.payload_type = 0;
    legit_media_prepare(&f->session);
    f->session.srtp = NULL;
}

static void release(fixture *f)
{
    moat_srtp_session_free(f->sender);
    moat_srtp_session_free(f->receiver);
}

/* A legitimate packet with this sequence number, protected and accepted. */
static size_t legit(fixture *f, uint16_t sequence, uint8_t *out)
{
    memset(out, 0xFF, 172);
    out[0] = 0x80;
    out[1] = 0;
    moat_wr16(out + 2, sequence);
    moat_wr32(out + 4, sequence * 160u);
    moat_wr32(out + 8, f->session.ssrc);
    size_t length = 172;
    g_assert_cmpint(moat_srtp_protect_rtp(f->sender, out, &length, 1500), ==, MOAT_SRTP_OK);
    uint8_t copy[1500];
    memcpy(copy, out, length);
    size_t copy_length = length;
    g_assert_cmpint(moat_srtp_unprotect_rtp(f->receiver, copy, &copy_length), ==, MOAT_SRTP_OK);
    return length;
}

static void forged_rtp_fails_authentication(moat_srtp_profile profile)
{
    fixture f;
    keyed(&f, profile);
    g_assert_cmpuint(f.session.typical_length, ==, 172 + f.session.srtp_tag_length);
    uint8_t packet[1500];
    for (uint16_t sequence = 1000; sequence < 1100; sequence++)
        legit(&f, sequence, packet);
    atomic_store(&f.session.next_sequence, 1100);
    flood_random random;
    flood_random_seed(&random);
    for (uint64_t k = 0; k < 3000; k++) {
        uint16_t sequence = forged_srtp_sequence_ahead(&f.session, k);
        g_assert_cmpuint((uint16_t)(sequence - 1100), >=, 100);
        g_assert_cmpuint((uint16_t)(sequence - 1100), <, 1100);
        size_t length =
            forged_srtp_rtp(&f.session, f.session.ssrc, sequence, &random, packet, sizeof packet);
        g_assert_cmpuint(length, ==, f.session.typical_length);
        g_assert_cmpint(moat_srtp_unprotect_rtp(f.receiver, packet, &length), ==,
                        MOAT_SRTP_ERR_AUTH);
        /* random-ssrc: SSRCs the receiver never saw. */
        length = forged_srtp_rtp(&f.session, flood_random_u32(&random) | 1, (uint16_t)k, &random,
                                 packet, sizeof packet);
        g_assert_cmpint(moat_srtp_unprotect_rtp(f.receiver, packet, &length), ==,
                        MOAT_SRTP_ERR_AUTH);
    }
    /* The legitimate stream goes on unharmed. */
    legit(&f, 1100, packet);
    release(&f);
}

static void test_forged_rtp_gcm(void)
{
    forged_rtp_fails_authentication(MOAT_SRTP_PROFILE_AEAD_AES_128_GCM);
}

static void test_forged_rtp_sha1_80(void)
{
    forged_rtp_fails_authentication(MOAT_SRTP_PROFILE_AES128_CM_SHA1_80);
}

static void forged_rtcp_fails_authentication(moat_srtp_profile profile)
{
    fixture f;
    keyed(&f, profile);
    /* A receiver that has authenticated a few reports already. */
    for (int i = 0; i < 200; i++) {
        uint8_t report[1500] = {0x80, 200, 0, 6};
        moat_wr32(report + 4, f.session.ssrc);
        size_t length = 28;
        g_assert_cmpint(moat_srtp_protect_rtcp(f.sender, report, &length, sizeof report), ==,
                        MOAT_SRTP_OK);
        g_assert_cmpint(moat_srtp_unprotect_rtcp(f.receiver, report, &length), ==, MOAT_SRTP_OK);
    }
    flood_random random;
    flood_random_seed(&random);
    for (uint32_t k = 0; k < 2000; k++) {
        uint8_t packet[1500];
        size_t length = forged_srtp_rtcp(&f.session, f.session.ssrc, 0x40000000u + k, &random,
                                         packet, sizeof packet);
        g_assert_cmpuint(length, ==, 28 + f.session.srtcp_trailer_length);
        g_assert_cmpint(moat_srtp_unprotect_rtcp(f.receiver, packet, &length), ==,
                        MOAT_SRTP_ERR_AUTH);
    }
    release(&f);
}

static void test_forged_rtcp_gcm(void)
{
    forged_rtcp_fails_authentication(MOAT_SRTP_PROFILE_AEAD_AES_128_GCM);
}

static void test_forged_rtcp_sha1_80(void)
{
    forged_rtcp_fails_authentication(MOAT_SRTP_PROFILE_AES128_CM_SHA1_80);
}

static void test_captured_packets_replay(void)
{
    fixture f;
    keyed(&f, MOAT_SRTP_PROFILE_AEAD_AES_128_GCM);
    capture_ring *ring = capture_ring_new();
    uint8_t packet[1500];
    for (uint16_t sequence = 0; sequence < 100; sequence++) {
        size_t length = legit(&f, sequence, packet);
        capture_ring_store(ring, packet, length, 1000u + sequence);
    }
    unsigned cursor = 0;
    /* Nothing is old enough yet, then every slot replays as a replay. */
    g_assert_cmpuint(capture_ring_pick(ring, 1000, 20000, &cursor, packet, sizeof packet), ==, 0);
    for (int i = 0; i < 3 * CAPTURE_SLOTS; i++) {
        size_t length = capture_ring_pick(ring, 1000000, 20000, &cursor, packet, sizeof packet);
        g_assert_cmpuint(length, >, 0);
        g_assert_cmpint(moat_srtp_unprotect_rtp(f.receiver, packet, &length), ==,
                        MOAT_SRTP_ERR_REPLAY);
    }
    capture_ring_free(ring);
    release(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/forged_srtp/rtp_gcm", test_forged_rtp_gcm);
    g_test_add_func("/forged_srtp/rtp_sha1_80", test_forged_rtp_sha1_80);
    g_test_add_func("/forged_srtp/rtcp_gcm", test_forged_rtcp_gcm);
    g_test_add_func("/forged_srtp/rtcp_sha1_80", test_forged_rtcp_sha1_80);
    g_test_add_func("/forged_srtp/replay", test_captured_packets_replay);
    return g_test_run();
}
