/* SDES keys end to end: two parties each generate a key for the chosen
 * suite, exchange a=crypto lines as text, build their SRTP sessions, and
 * protect/unprotect both ways; a wrong key or a tampered packet fails
 * authentication. Every suite Moat runs. */
#include <glib.h>
#include <string.h>

#include "sdp/sdp_crypto.h"
#include "sdp/sdes_keys.h"
#include "srtp/srtp_session.h"

/* Writes our line and parses it back, as the peer would from the SDP. */
static moat_sdp_crypto over_the_wire(const moat_sdp_crypto *line)
{
    GString *sdp = g_string_new(NULL);
    moat_sdp_crypto_write(sdp, line);
    g_assert_true(g_str_has_prefix(sdp->str, "a=crypto:"));
    moat_sdp_crypto parsed;
    const char *why = NULL;
    moat_sdp_span value = {sdp->str + 9, sdp->len - 11};
    g_assert_cmpint(moat_sdp_crypto_parse(value, &parsed, &why), ==, 0);
    g_string_free(sdp, TRUE);
    return parsed;
}

static moat_srtp_session *session(const moat_sdp_crypto *local, const moat_sdp_crypto *remote)
{
    moat_srtp_keying keying;
    char error[160] = "";
    g_assert_cmpint(moat_sdes_keying(local, remote, &keying, error, sizeof error), ==, 0);
    moat_srtp_session *s = moat_srtp_session_new(&keying, error, sizeof error);
    moat_sdes_keying_clear(&keying);
    g_assert_nonnull(s);
    return s;
}

static size_t rtp_packet(uint8_t *buffer, uint16_t sequence)
{
    memset(buffer, 0, 12);
    buffer[0] = 0x80;
    buffer[1] = 0; /* PCMU */
    buffer[2] = (uint8_t)(sequence >> 8);
    buffer[3] = (uint8_t)sequence;
    buffer[11] = 0x42; /* SSRC 0x42 */
    memset(buffer + 12, 0xd5, 160);
    return 172;
}

static void exchange(moat_srtp_session *from, moat_srtp_session *to, uint16_t sequence)
{
    uint8_t packet[256];
    size_t length = rtp_packet(packet, sequence);
    g_assert_cmpint(moat_srtp_protect_rtp(from, packet, &length, sizeof packet), ==, MOAT_SRTP_OK);
    g_assert_cmpuint(length, >, 172);
    g_assert_cmpint(moat_srtp_unprotect_rtp(to, packet, &length), ==, MOAT_SRTP_OK);
    g_assert_cmpuint(length, ==, 172);
    g_assert_cmphex(packet[12], ==, 0xd5);
}

static void round_trip(gconstpointer data)
{
    moat_srtp_profile suite = GPOINTER_TO_INT(data);
    char error[160] = "";
    /* The offerer's line, as Moat would offer it. */
    moat_sdp_crypto offer;
    g_assert_cmpint(moat_sdes_generate(suite, 1, &offer, error, sizeof error), ==, 0);
    moat_sdp_crypto offer_seen = over_the_wire(&offer);
    /* The answerer chooses it and answers with its own key. */
    g_assert_cmpint(moat_sdp_crypto_choose(&offer_seen, 1, NULL), ==, 0);
    moat_sdp_crypto answer;
    g_assert_cmpint(moat_sdes_answer(&offer_seen, &answer, error, sizeof error), ==, 0);
    g_assert_cmpuint(answer.tag, ==, 1);
    g_assert_cmpint(answer.suite, ==, suite);
    g_assert_true(memcmp(answer.key_salt, offer.key_salt, answer.key_salt_length) != 0);
    moat_sdp_crypto answer_seen = over_the_wire(&answer);

    moat_srtp_session *offerer = session(&offer, &answer_seen);
    moat_srtp_session *answerer = session(&answer, &offer_seen);
    for (uint16_t seq = 100; seq < 110; seq++) {
        exchange(offerer, answerer, seq);
        exchange(answerer, offerer, seq);
    }

    /* A tampered packet fails authentication. */
    uint8_t packet[256];
    size_t length = rtp_packet(packet, 200);
    g_assert_cmpint(moat_srtp_protect_rtp(offerer, packet, &length, sizeof packet), ==,
                    MOAT_SRTP_OK);
    packet[20] ^= 1;
    g_assert_cmpint(moat_srtp_unprotect_rtp(answerer, packet, &length), ==, MOAT_SRTP_ERR_AUTH);

    /* A session keyed with another key for the same suite cannot read it. */
    moat_sdp_crypto stranger;
    g_assert_cmpint(moat_sdes_generate(suite, 1, &stranger, error, sizeof error), ==, 0);
    moat_srtp_session *eavesdropper = session(&answer, &stranger);
    length = rtp_packet(packet, 300);
    g_assert_cmpint(moat_srtp_protect_rtp(offerer, packet, &length, sizeof packet), ==,
                    MOAT_SRTP_OK);
    g_assert_cmpint(moat_srtp_unprotect_rtp(eavesdropper, packet, &length), ==, MOAT_SRTP_ERR_AUTH);

    moat_srtp_session_free(eavesdropper);
    moat_srtp_session_free(offerer);
    moat_srtp_session_free(answerer);
    moat_sdp_crypto_clear(&offer);
    moat_sdp_crypto_clear(&answer);
}

static void test_keys_differ(void)
{
    char error[160] = "";
    moat_sdp_crypto a, b;
    g_assert_cmpint(
        moat_sdes_generate(MOAT_SRTP_PROFILE_AES128_CM_SHA1_80, 1, &a, error, sizeof error), ==, 0);
    g_assert_cmpint(
        moat_sdes_generate(MOAT_SRTP_PROFILE_AES128_CM_SHA1_80, 1, &b, error, sizeof error), ==, 0);
    g_assert_cmpuint(a.key_salt_length, ==, 30);
    g_assert_true(memcmp(a.key_salt, b.key_salt, 30) != 0);
}

static void test_refusals(void)
{
    char error[160] = "";
    moat_sdp_crypto a, b;
    g_assert_cmpint(moat_sdes_generate(99, 1, &a, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "not supported"));
    g_assert_cmpint(moat_sdes_generate(MOAT_SRTP_PROFILE_AES128_CM_SHA1_80, 1000000000, &a, error,
                                       sizeof error),
                    ==, -1);
    g_assert_cmpint(
        moat_sdes_generate(MOAT_SRTP_PROFILE_AES128_CM_SHA1_80, 1, &a, error, sizeof error), ==, 0);
    g_assert_cmpint(
        moat_sdes_generate(MOAT_SRTP_PROFILE_AEAD_AES_128_GCM, 1, &b, error, sizeof error), ==, 0);
    moat_srtp_keying keying;
    g_assert_cmpint(moat_sdes_keying(&a, &b, &keying, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "suites differ"));
    b = a;
    b.mki_length = 4;
    g_assert_cmpint(moat_sdes_keying(&a, &b, &keying, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "not usable"));
    g_assert_cmpint(moat_sdes_answer(&b, &a, error, sizeof error), ==, -1);
    b.mki_length = 0;
    b.key_salt_length = 29;
    g_assert_cmpint(moat_sdes_keying(&a, &b, &keying, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "length"));
    for (size_t i = 0; i < sizeof keying; i++)
        g_assert_cmpuint(((uint8_t *)&keying)[i], ==, 0); /* nothing half-written stays */
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_data_func("/sdes/round-trip/AES_CM_128_HMAC_SHA1_80",
                         GINT_TO_POINTER(MOAT_SRTP_PROFILE_AES128_CM_SHA1_80), round_trip);
    g_test_add_data_func("/sdes/round-trip/AES_CM_128_HMAC_SHA1_32",
                         GINT_TO_POINTER(MOAT_SRTP_PROFILE_AES128_CM_SHA1_32), round_trip);
    g_test_add_data_func("/sdes/round-trip/AEAD_AES_128_GCM",
                         GINT_TO_POINTER(MOAT_SRTP_PROFILE_AEAD_AES_128_GCM), round_trip);
    g_test_add_func("/sdes/keys-differ", test_keys_differ);
    g_test_add_func("/sdes/refusals", test_refusals);
    return g_test_run();
}
