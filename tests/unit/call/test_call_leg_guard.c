/* Unit tests for an SDES leg's SRTP+ guard (call/call_leg_guard.h) taking
 * over a restored call's streams: what the party sends and what Moat sends
 * are tagged and checked at the rollover counters the streams stood at,
 * as libsrtp resumes them, not at 0 (after a restart past a wrap, every
 * packet of the party would otherwise fail the tag once the leg enforces). */
#include <glib.h>
#include <string.h>

#include "call/call_leg_guard.h"
#include "srtpplus.h"

#define THEIRS 0x2222u
#define OURS   0x1111u

static moat_srtp_keying keying(void)
{
    moat_srtp_keying k = {
        .profile = MOAT_SRTP_PROFILE_AES128_CM_SHA1_80, .key_length = 16, .salt_length = 14};
    memset(k.local_key, 1, sizeof k.local_key);
    memset(k.local_salt, 3, sizeof k.local_salt);
    memset(k.remote_key, 2, sizeof k.remote_key);
    memset(k.remote_salt, 4, sizeof k.remote_salt);
    return k;
}

/* An SRTP packet of ssrc and seq (the 10-byte tag of libsrtp as zeros: only
 * SRTP+ looks at it here), tagged by `sender`. */
static size_t tagged(struct srtpplus_sender *sender, uint32_t ssrc, uint16_t seq, uint8_t *p,
                     size_t capacity)
{
    memset(p, 0, capacity);
    p[0] = 0x80;
    p[1] = 111;
    p[2] = (uint8_t)(seq >> 8);
    p[3] = (uint8_t)seq;
    for (int i = 0; i < 4; i++)
        p[8 + i] = (uint8_t)(ssrc >> (24 - 8 * i));
    size_t length = 12 + 20 + 10;
    g_assert_cmpint(srtpplus_sender_append_tag_rtp(sender, p, &length, capacity), ==, 0);
    return length;
}

static struct srtpplus_sender *sender_at(const uint8_t *key, const uint8_t *salt, uint32_t ssrc,
                                         uint32_t roc)
{
    struct srtpplus_sender_config config;
    srtpplus_sender_config_init(&config, SRTPPLUS_SCHEME_PRN, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    struct srtpplus_sender *sender = NULL;
    g_assert_cmpint(srtpplus_sender_new(&config, key, 16, salt, 14, &sender), ==, 0);
    g_assert_cmpint(srtpplus_sender_add_ssrc(sender, ssrc, roc), ==, 0);
    return sender;
}

static void test_resumed_streams_keep_their_rollover(void)
{
    moat_srtp_keying k = keying();
    const moat_srtp_position resume[2] = {
        {.ssrc = OURS, .roc = 3, .seq = 100, .valid = true},
        {.ssrc = THEIRS, .roc = 3, .seq = 100, .valid = true},
    };
    moat_call_leg_guard *resumed = moat_call_leg_guard_new(&k, true);
    moat_call_leg_guard *fresh = moat_call_leg_guard_new(&k, true);
    moat_call_leg_guard_resume(resumed, resume);
    /* The party's packet after the restart, at its real index 3 << 16 | 101. */
    struct srtpplus_sender *party = sender_at(k.remote_key, k.remote_salt, THEIRS, 3);
    uint8_t packet[128];
    size_t length = tagged(party, THEIRS, 101, packet, sizeof packet);
    struct srtpplus_check check;
    g_assert_cmpint(
        srtpplus_receiver_check_rtp(resumed->rx, packet, length, true, 1000000000ull, &check), ==,
        SRTPPLUS_PASS);
    g_assert_cmpuint(check.index, ==, (3ull << 16) | 101);
    /* A guard that assumed rollover 0 does not recognise it. */
    g_assert_cmpint(
        srtpplus_receiver_check_rtp(fresh->rx, packet, length, true, 1000000000ull, &check), !=,
        SRTPPLUS_PASS);
    /* What Moat sends is tagged at its stream's rollover too. */
    struct srtpplus_sender *reference = sender_at(k.local_key, k.local_salt, OURS, 3);
    uint8_t ours[128], expected[128];
    size_t ours_length = tagged(resumed->tx, OURS, 101, ours, sizeof ours);
    size_t expected_length = tagged(reference, OURS, 101, expected, sizeof expected);
    g_assert_cmpmem(ours, ours_length, expected, expected_length);
    srtpplus_sender_free(reference);
    srtpplus_sender_free(party);
    moat_call_leg_guard_free(fresh);
    moat_call_leg_guard_free(resumed);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/call/leg-guard/resumed-rollover", test_resumed_streams_keep_their_rollover);
    return g_test_run();
}
