/* Test helper for the SRTP+ tests: real libsrtp sessions, RTP and RTCP packets,
 * sending and receiving through SRTP+ around libsrtp, and hex decoding. */
#include "srtpplus_test_srtp.h"

#include <glib.h>
#include <string.h>

srtp_t test_srtp_session(enum srtpplus_profile profile, const uint8_t *master_key,
                         const uint8_t *master_salt, uint32_t ssrc, uint32_t roc)
{
    struct srtpplus_profile_sizes sizes;
    g_assert_cmpint(srtpplus_profile_sizes(profile, &sizes), ==, SRTPPLUS_OK);
    srtp_policy_t policy;
    memset(&policy, 0, sizeof(policy));
    switch (profile) {
    case SRTPPLUS_PROFILE_AES128_CM_SHA1_80:
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtp);
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtcp);
        break;
    case SRTPPLUS_PROFILE_AES128_CM_SHA1_32:
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(&policy.rtp);
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&policy.rtcp);
        break;
    case SRTPPLUS_PROFILE_AEAD_AES_128_GCM:
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp);
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp);
        break;
    }
    uint8_t key[64];
    memcpy(key, master_key, sizes.master_key_len);
    memcpy(key + sizes.master_key_len, master_salt, sizes.master_salt_len);
    policy.key = key;
    policy.ssrc.type = ssrc_specific;
    policy.ssrc.value = ssrc;
    policy.window_size = 1024;
    policy.next = NULL;
    srtp_t session = NULL;
    g_assert_cmpint(srtp_create(&session, &policy), ==, srtp_err_status_ok);
    if (roc)
        g_assert_cmpint(srtp_set_stream_roc(session, ssrc, roc), ==, srtp_err_status_ok);
    return session;
}

void test_rtp_packet(struct test_packet *packet, uint32_t ssrc, uint16_t seq, uint32_t timestamp)
{
    uint8_t *p = packet->data;
    memset(p, 0, sizeof(packet->data));
    p[0] = 0x80;
    p[1] = 0;
    p[2] = (uint8_t)(seq >> 8);
    p[3] = (uint8_t)seq;
    srtpplus_store_be32(p + 4, timestamp);
    srtpplus_store_be32(p + 8, ssrc);
    for (size_t i = 0; i < 160; i++)
        p[12 + i] = (uint8_t)(seq * 31 + i * 7);
    packet->len = 172;
}

void test_rtcp_packet(struct test_packet *packet, uint32_t ssrc)
{
    uint8_t *p = packet->data;
    memset(p, 0, sizeof(packet->data));
    p[0] = 0x80; /* V=2, RC=0 */
    p[1] = 201;  /* RR */
    p[2] = 0;
    p[3] = 1; /* length in 32-bit words minus one */
    srtpplus_store_be32(p + 4, ssrc);
    packet->len = 8;
}

void test_send_rtp(srtp_t srtp, struct srtpplus_sender *tx, struct test_packet *packet)
{
    int rc = srtpplus_sender_prepare_rtp(tx, packet->data, &packet->len, sizeof(packet->data));
    g_assert_cmpstr(srtpplus_status_name(rc), ==, "ok");
    int len = (int)packet->len;
    g_assert_cmpint(srtp_protect(srtp, packet->data, &len), ==, srtp_err_status_ok);
    packet->len = (size_t)len;
    rc = srtpplus_sender_append_tag_rtp(tx, packet->data, &packet->len, sizeof(packet->data));
    g_assert_cmpstr(srtpplus_status_name(rc), ==, "ok");
}

void test_send_rtcp(srtp_t srtp, struct srtpplus_sender *tx, struct test_packet *packet)
{
    int len = (int)packet->len;
    g_assert_cmpint(srtp_protect_rtcp(srtp, packet->data, &len), ==, srtp_err_status_ok);
    packet->len = (size_t)len;
    int rc = srtpplus_sender_append_tag_rtcp(tx, packet->data, &packet->len, sizeof(packet->data));
    g_assert_cmpstr(srtpplus_status_name(rc), ==, "ok");
}

enum srtpplus_verdict test_receive_rtp(struct srtpplus_receiver *rx, srtp_t srtp,
                                       const struct test_packet *packet, bool enforcing,
                                       uint64_t now_ns, struct test_packet *plain,
                                       bool *unprotected, enum srtpplus_confirm *confirm)
{
    struct test_packet scratch;
    struct test_packet *out = plain ? plain : &scratch;
    *out = *packet;
    *unprotected = false;
    struct srtpplus_check check;
    enum srtpplus_verdict v =
        srtpplus_receiver_check_rtp(rx, out->data, out->len, enforcing, now_ns, &check);
    if (srtpplus_verdict_is_drop(v))
        return v;
    int len = (int)check.len;
    if (srtp_unprotect(srtp, out->data, &len) != srtp_err_status_ok)
        return v;
    *unprotected = true;
    out->len = (size_t)len;
    enum srtpplus_confirm c = srtpplus_receiver_confirm_rtp(rx, out->data, &out->len, check.index);
    if (confirm)
        *confirm = c;
    return v;
}

enum srtpplus_verdict test_receive_rtcp(struct srtpplus_receiver *rx, srtp_t srtp,
                                        const struct test_packet *packet, bool enforcing,
                                        uint64_t now_ns, bool *unprotected)
{
    struct test_packet copy = *packet;
    *unprotected = false;
    struct srtpplus_check check;
    enum srtpplus_verdict v =
        srtpplus_receiver_check_rtcp(rx, copy.data, copy.len, enforcing, now_ns, &check);
    if (srtpplus_verdict_is_drop(v))
        return v;
    int len = (int)check.len;
    if (srtp_unprotect_rtcp(srtp, copy.data, &len) != srtp_err_status_ok)
        return v;
    *unprotected = true;
    g_assert_cmpint(srtpplus_receiver_confirm_rtcp(rx, check.ssrc, check.index), ==,
                    SRTPPLUS_CONFIRMED);
    return v;
}

size_t test_hex_decode(const char *hex, uint8_t *out, size_t capacity)
{
    size_t n = strlen(hex);
    g_assert_true(n % 2 == 0);
    g_assert_cmpuint(n / 2, <=, capacity);
    for (size_t i = 0; i < n / 2; i++) {
        int hi = g_ascii_xdigit_value(hex[2 * i]);
        int lo = g_ascii_xdigit_value(hex[2 * i + 1]);
        g_assert_true(hi >= 0 && lo >= 0);
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return n / 2;
}
