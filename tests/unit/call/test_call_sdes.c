/* SDES-SRTP termination through the call layer's C API, on a real worker
 * with real UDP sockets: a plain-RTP phone calls an SDES phone (Moat offers
 * keys, the SDES phone picks one) and the other way round (Moat answers the
 * SDES phone's offer under the request's SDES policy). Media crosses both
 * ways, decrypted on one leg and encrypted on the other, checked with the
 * SDES phone's own libsrtp session. A forged packet is dropped before it
 * can latch the SDES leg; a replay from elsewhere after latching is dropped
 * too. Requests Moat cannot key are errors. */
#include <arpa/inet.h>
#include <glib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "call/call_registry.h"
#include "call_test_support.h"
#include "sdp/sdes_keys.h"
#include "srtp/srtp_session.h"
#include "srtpplus.h"

static const uint8_t rtp_packet[172] = {0x80, 8, 0, 1, 0, 0, 0, 160, 0x11, 0x22, 0x33, 0x44};

static size_t protected_packet(moat_srtp_session *s, uint16_t sequence, uint8_t *out)
{
    memcpy(out, rtp_packet, sizeof rtp_packet);
    out[2] = (uint8_t)(sequence >> 8);
    out[3] = (uint8_t)sequence;
    out[20] = 0x5a; /* payload marker */
    size_t length = sizeof rtp_packet;
    g_assert_cmpint(moat_srtp_protect_rtp(s, out, &length, 256), ==, MOAT_SRTP_OK);
    return length;
}

static const moat_call_media_view *media_of(call_fixture *f, const char *id, int side,
                                            moat_call_view *view)
{
    g_assert_cmpint(moat_call_query(f->registry, id, view), ==, 0);
    return &view->sides[side].media[0];
}

/* Caller plain, callee SDES: Moat offers keys. */
static void test_plain_to_sdes(void)
{
    call_fixture f;
    call_fixture_setup(&f, 42100, 42199);
    uint16_t caller_port, callee_port, intruder_port;
    int caller = call_udp_socket(&caller_port), callee = call_udp_socket(&callee_port);
    int intruder = call_udp_socket(&intruder_port);

    char *offer_sdp = call_phone_sdp(caller_port, NULL, 0);
    moat_ng_request offer = call_request("sdes-1", "a", NULL, offer_sdp);
    offer.transport_protocol = "RTP/SAVP";
    moat_call_reply reply = {0};
    moat_call_offer(f.registry, &offer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    g_assert_nonnull(strstr(reply.sdp, "m=audio "));
    g_assert_nonnull(strstr(reply.sdp, " RTP/SAVP 8\r\n"));
    moat_call_sdp offered = call_parse_sdp(reply.sdp);
    g_assert_cmpuint(offered.media[0].n_crypto, ==, 3); /* every suite Moat runs */
    g_assert_cmpint(offered.media[0].crypto[0].suite, ==, MOAT_SRTP_PROFILE_AES128_CM_SHA1_80);
    uint16_t to_callee = offered.media[0].port;
    moat_call_reply_clear(&reply);

    /* The SDES phone picks GCM (tag 2) and answers with its own key. */
    int chosen = -1;
    for (size_t i = 0; i < offered.media[0].n_crypto; i++) {
        if (offered.media[0].crypto[i].suite == MOAT_SRTP_PROFILE_AEAD_AES_128_GCM)
            chosen = (int)i;
    }
    g_assert_cmpint(chosen, >=, 0);
    moat_sdp_crypto mine;
    char error[160] = "";
    g_assert_cmpint(moat_sdes_answer(&offered.media[0].crypto[chosen], &mine, error, sizeof error),
                    ==, 0);
    char *answer_sdp = call_phone_sdp(callee_port, &mine, 1);
    moat_ng_request answer = call_request("sdes-1", "a", "b", answer_sdp);
    moat_call_answer(f.registry, &answer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    g_assert_nonnull(strstr(reply.sdp, " RTP/AVP 8\r\n"));
    g_assert_null(strstr(reply.sdp, "a=crypto"));
    uint16_t to_caller = call_parse_sdp(reply.sdp).media[0].port;
    moat_call_reply_clear(&reply);
    moat_srtp_session *phone = call_phone_srtp(&mine, &offered.media[0].crypto[chosen]);

    uint8_t buffer[2048];
    /* Plain in, SRTP out: the SDES phone's session reads it. */
    for (uint8_t seq = 1; seq <= 3; seq++) {
        uint8_t plain[sizeof rtp_packet];
        memcpy(plain, rtp_packet, sizeof plain);
        plain[3] = seq;
        call_send_to(caller, to_caller, plain, sizeof plain);
        ssize_t n = call_receive(callee, buffer, sizeof buffer, 2000);
        g_assert_cmpint(n, >, (ssize_t)sizeof plain);
        size_t length = (size_t)n;
        g_assert_cmpint(moat_srtp_unprotect_rtp(phone, buffer, &length), ==, MOAT_SRTP_OK);
        g_assert_cmpmem(buffer, length, plain, sizeof plain);
    }

    /* A forged packet (right header, no key) from an intruder: dropped
     * before it can latch the SDES leg. */
    uint8_t forged[200];
    memcpy(forged, rtp_packet, sizeof rtp_packet);
    memset(forged + 12, 0x77, sizeof forged - 12);
    call_send_to(intruder, to_callee, forged, sizeof forged);
    g_assert_cmpint(call_receive(caller, buffer, sizeof buffer, 300), ==, -1);
    moat_call_view view;
    const moat_call_media_view *callee_leg = media_of(&f, "sdes-1", 1, &view);
    g_assert_false(callee_leg->counters.latched);
    g_assert_cmpuint(callee_leg->counters.dropped, ==, 1);
    g_assert_cmpuint(callee_leg->counters.rtp.errors, ==, 1);

    /* The phone's SRTP: authenticated, latched, decrypted for the caller. */
    uint8_t packet[256];
    size_t length = protected_packet(phone, 10, packet);
    call_send_to(callee, to_callee, packet, length);
    g_assert_cmpint(call_receive(caller, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
    g_assert_cmphex(buffer[20], ==, 0x5a);
    callee_leg = media_of(&f, "sdes-1", 1, &view);
    g_assert_true(callee_leg->counters.latched);

    /* The same genuine packet replayed from elsewhere: dropped (source). */
    call_send_to(intruder, to_callee, packet, length);
    g_assert_cmpint(call_receive(caller, buffer, sizeof buffer, 300), ==, -1);
    /* ... and replayed from the phone's address: libsrtp's replay check. */
    call_send_to(callee, to_callee, packet, length);
    g_assert_cmpint(call_receive(caller, buffer, sizeof buffer, 300), ==, -1);
    callee_leg = media_of(&f, "sdes-1", 1, &view);
    g_assert_cmpuint(callee_leg->counters.dropped, ==, 3);

    moat_srtp_session_free(phone);
    moat_sdp_crypto_clear(&mine);
    g_free(offer_sdp);
    g_free(answer_sdp);
    close(caller);
    close(callee);
    close(intruder);
    call_fixture_teardown(&f);
}

/* Caller SDES, callee plain: Moat answers the caller's offer. */
static void test_sdes_to_plain(void)
{
    call_fixture f;
    call_fixture_setup(&f, 42200, 42299);
    uint16_t caller_port, callee_port;
    int caller = call_udp_socket(&caller_port), callee = call_udp_socket(&callee_port);
    moat_sdp_crypto lines[2];
    char error[160] = "";
    g_assert_cmpint(
        moat_sdes_generate(MOAT_SRTP_PROFILE_AES128_CM_SHA1_32, 1, &lines[0], error, sizeof error),
        ==, 0);
    g_assert_cmpint(
        moat_sdes_generate(MOAT_SRTP_PROFILE_AES128_CM_SHA1_80, 2, &lines[1], error, sizeof error),
        ==, 0);
    char *offer_sdp = call_phone_sdp(caller_port, lines, 2);
    moat_ng_request offer = call_request("sdes-2", "a", NULL, offer_sdp);
    offer.transport_protocol = "RTP/AVP";
    const char *only[] = {"AES_CM_128_HMAC_SHA1_80"};
    offer.sdes_only[0] = only[0];
    offer.n_sdes_only = 1;
    moat_call_reply reply = {0};
    moat_call_offer(f.registry, &offer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    g_assert_nonnull(strstr(reply.sdp, " RTP/AVP 8\r\n"));
    g_assert_null(strstr(reply.sdp, "a=crypto")); /* the plain phone sees no key */
    uint16_t to_callee = call_parse_sdp(reply.sdp).media[0].port;
    moat_call_reply_clear(&reply);

    char *answer_sdp = call_phone_sdp(callee_port, NULL, 0);
    moat_ng_request answer = call_request("sdes-2", "a", "b", answer_sdp);
    moat_call_answer(f.registry, &answer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    g_assert_nonnull(strstr(reply.sdp, " RTP/SAVP 8\r\n"));
    moat_call_sdp answered = call_parse_sdp(reply.sdp);
    g_assert_cmpuint(answered.media[0].n_crypto, ==, 1);
    g_assert_cmpuint(answered.media[0].crypto[0].tag, ==, 2); /* SDES-only-..._80 */
    uint16_t to_caller = answered.media[0].port;
    moat_call_reply_clear(&reply);
    moat_srtp_session *phone = call_phone_srtp(&lines[1], &answered.media[0].crypto[0]);

    uint8_t packet[256], buffer[2048];
    for (uint16_t seq = 1; seq <= 3; seq++) {
        size_t length = protected_packet(phone, seq, packet);
        call_send_to(caller, to_caller, packet, length);
        g_assert_cmpint(call_receive(callee, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
        g_assert_cmphex(buffer[20], ==, 0x5a);
    }
    call_send_to(callee, to_callee, rtp_packet, sizeof rtp_packet);
    ssize_t n = call_receive(caller, buffer, sizeof buffer, 2000);
    g_assert_cmpint(n, >, (ssize_t)sizeof rtp_packet);
    size_t length = (size_t)n;
    g_assert_cmpint(moat_srtp_unprotect_rtp(phone, buffer, &length), ==, MOAT_SRTP_OK);
    g_assert_cmpuint(length, ==, sizeof rtp_packet);

    moat_srtp_session_free(phone);
    moat_sdp_crypto_clear(&lines[0]);
    moat_sdp_crypto_clear(&lines[1]);
    g_free(offer_sdp);
    g_free(answer_sdp);
    close(caller);
    close(callee);
    call_fixture_teardown(&f);
}

static void test_refusals(void)
{
    call_fixture f;
    call_fixture_setup(&f, 42300, 42399);
    char error[160] = "";
    moat_sdp_crypto line;
    g_assert_cmpint(
        moat_sdes_generate(MOAT_SRTP_PROFILE_AES128_CM_SHA1_80, 1, &line, error, sizeof error), ==,
        0);
    /* RFC 4568's example line has an MKI: not usable for Moat. */
    char *mki_sdp = g_strdup("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\n"
                             "t=0 0\r\nm=audio 4000 RTP/SAVP 8\r\na=crypto:1 "
                             "AES_CM_128_HMAC_SHA1_80 "
                             "inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^20|1:4\r\n");
    moat_ng_request offer = call_request("sdes-3", "a", NULL, mki_sdp);
    offer.transport_protocol = "RTP/AVP";
    moat_call_reply reply = {0};
    moat_call_offer(f.registry, &offer, &reply);
    g_assert_nonnull(strstr(reply.error, "no usable a=crypto"));
    g_assert_null(reply.sdp);
    g_assert_cmpuint(moat_call_count(f.registry), ==, 0);

    char *plain_sdp = call_phone_sdp(4000, NULL, 0);
    reply = (moat_call_reply){0};
    moat_ng_request off = call_request("sdes-4", "a", NULL, plain_sdp);
    off.transport_protocol = "RTP/SAVP";
    off.sdes_off = true;
    moat_call_offer(f.registry, &off, &reply);
    g_assert_nonnull(strstr(reply.error, "allows no suite"));
    moat_call_reply_clear(&reply);

    /* An answer that picks no line Moat offered. */
    reply = (moat_call_reply){0};
    moat_ng_request ok = call_request("sdes-5", "a", NULL, plain_sdp);
    ok.transport_protocol = "RTP/SAVP";
    moat_call_offer(f.registry, &ok, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    moat_call_reply_clear(&reply);
    line.tag = 77;
    char *stranger_sdp = call_phone_sdp(4002, &line, 1);
    moat_ng_request answer = call_request("sdes-5", "a", "b", stranger_sdp);
    moat_call_answer(f.registry, &answer, &reply);
    g_assert_nonnull(strstr(reply.error, "picks none"));
    moat_call_reply_clear(&reply);

    moat_sdp_crypto_clear(&line);
    g_free(mki_sdp);
    g_free(plain_sdp);
    g_free(stranger_sdp);
    call_fixture_teardown(&f);
}

/* One offer/answer round from the plain caller; the SDES callee answers
 * the first line Moat offers. Returns its SRTP session (keyed both ways). */
static moat_srtp_session *round_trip_offer(call_fixture *f, const char *id, uint16_t caller_port,
                                           uint16_t callee_port, const char *transport,
                                           uint16_t *to_caller, uint16_t *to_callee)
{
    char *offer_sdp = call_phone_sdp(caller_port, NULL, 0);
    moat_ng_request offer = call_request(id, "a", NULL, offer_sdp);
    offer.transport_protocol = transport;
    moat_call_reply reply = {0};
    moat_call_offer(f->registry, &offer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    g_assert_nonnull(strstr(reply.sdp, " RTP/SAVP 8\r\n"));
    moat_call_sdp offered = call_parse_sdp(reply.sdp);
    g_assert_cmpuint(offered.media[0].n_crypto, >, 0);
    *to_callee = offered.media[0].port;
    moat_call_reply_clear(&reply);
    moat_sdp_crypto mine;
    char error[160] = "";
    g_assert_cmpint(moat_sdes_answer(&offered.media[0].crypto[0], &mine, error, sizeof error), ==,
                    0);
    char *answer_sdp = call_phone_sdp(callee_port, &mine, 1);
    moat_ng_request answer = call_request(id, "a", "b", answer_sdp);
    moat_call_answer(f->registry, &answer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    g_assert_nonnull(strstr(reply.sdp, " RTP/AVP 8\r\n"));
    *to_caller = call_parse_sdp(reply.sdp).media[0].port;
    moat_call_reply_clear(&reply);
    moat_srtp_session *phone = call_phone_srtp(&mine, &offered.media[0].crypto[0]);
    moat_sdp_crypto_clear(&mine);
    g_free(offer_sdp);
    g_free(answer_sdp);
    return phone;
}

/* A re-INVITE through Kamailio's rtpengine_manage() carries no
 * transport-protocol: the callee's leg stays SDES (fresh keys). */
static void test_reoffer_keeps_sdes(void)
{
    call_fixture f;
    call_fixture_setup(&f, 42500, 42599);
    uint16_t caller_port, callee_port, to_caller, to_callee;
    int caller = call_udp_socket(&caller_port), callee = call_udp_socket(&callee_port);
    moat_srtp_session *first = round_trip_offer(&f, "sdes-7", caller_port, callee_port, "RTP/SAVP",
                                                &to_caller, &to_callee);
    moat_srtp_session *second =
        round_trip_offer(&f, "sdes-7", caller_port, callee_port, NULL, &to_caller, &to_callee);
    uint8_t packet[256], buffer[2048];
    for (uint16_t seq = 1; seq <= 3; seq++) {
        size_t length = protected_packet(second, seq, packet);
        call_send_to(callee, to_callee, packet, length);
        g_assert_cmpint(call_receive(caller, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
    }
    /* The old keys are gone with the re-offer. */
    size_t length = protected_packet(first, 50, packet);
    call_send_to(callee, to_callee, packet, length);
    g_assert_cmpint(call_receive(caller, buffer, sizeof buffer, 300), ==, -1);
    moat_srtp_session_free(first);
    moat_srtp_session_free(second);
    close(caller);
    close(callee);
    call_fixture_teardown(&f);
}

/* The SDES phone's SRTP+ ends: its sender tags with its own key, its
 * receiver checks Moat's tags (SSRC declared, enforcing: only a verified tag
 * passes). */
typedef struct {
    struct srtpplus_sender *tx;
    struct srtpplus_receiver *rx;
} phone_srtpplus;

static phone_srtpplus phone_srtpplus_new(const moat_sdp_crypto *own, const moat_sdp_crypto *moat)
{
    phone_srtpplus p = {0};
    struct srtpplus_sender_config tx;
    srtpplus_sender_config_init(&tx, SRTPPLUS_SCHEME_PRN, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    g_assert_cmpint(srtpplus_sender_new(&tx, own->key_salt, 16, own->key_salt + 16, 14, &p.tx), ==,
                    0);
    struct srtpplus_receiver_config rx;
    srtpplus_receiver_config_init(&rx, SRTPPLUS_SCHEME_PRN, SRTPPLUS_PROFILE_AES128_CM_SHA1_80);
    g_assert_cmpint(srtpplus_receiver_new(&rx, moat->key_salt, 16, moat->key_salt + 16, 14, &p.rx),
                    ==, 0);
    g_assert_cmpint(srtpplus_receiver_add_ssrc(p.rx, 0x11223344, 0), ==, 0);
    return p;
}

/* Moat offers a=srtpplus:prn to the SDES party; the party takes it: both
 * directions carry SRTP+ tags, Moat's verify at the party. */
static void test_srtpplus_on_sdes_leg(void)
{
    call_fixture f;
    call_fixture_setup(&f, 42400, 42499);
    uint16_t caller_port, callee_port;
    int caller = call_udp_socket(&caller_port), callee = call_udp_socket(&callee_port);
    char *offer_sdp = call_phone_sdp(caller_port, NULL, 0);
    moat_ng_request offer = call_request("sdes-6", "a", NULL, offer_sdp);
    offer.transport_protocol = "RTP/SAVP";
    moat_call_reply reply = {0};
    moat_call_offer(f.registry, &offer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    g_assert_nonnull(strstr(reply.sdp, "a=srtpplus:prn\r\n"));
    moat_call_sdp offered = call_parse_sdp(reply.sdp);
    g_assert_true(offered.media[0].srtpplus_prn);
    uint16_t to_callee = offered.media[0].port;
    moat_call_reply_clear(&reply);

    const moat_sdp_crypto *moat_line = &offered.media[0].crypto[0]; /* ..._80, tag 1 */
    moat_sdp_crypto mine;
    char error[160] = "";
    g_assert_cmpint(moat_sdes_answer(moat_line, &mine, error, sizeof error), ==, 0);
    char *lines = call_phone_sdp(callee_port, &mine, 1);
    char *answer_sdp = g_strconcat(lines, "a=srtpplus:prn\r\n", NULL);
    moat_ng_request answer = call_request("sdes-6", "a", "b", answer_sdp);
    moat_call_answer(f.registry, &answer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    g_assert_null(strstr(reply.sdp, "srtpplus")); /* the plain party sees none */
    uint16_t to_caller = call_parse_sdp(reply.sdp).media[0].port;
    moat_call_reply_clear(&reply);
    moat_srtp_session *phone = call_phone_srtp(&mine, moat_line);
    phone_srtpplus plus = phone_srtpplus_new(&mine, moat_line);

    uint8_t buffer[2048];
    for (uint8_t seq = 1; seq <= 3; seq++) {
        uint8_t plain[sizeof rtp_packet];
        memcpy(plain, rtp_packet, sizeof plain);
        plain[3] = seq;
        call_send_to(caller, to_caller, plain, sizeof plain);
        ssize_t n = call_receive(callee, buffer, sizeof buffer, 2000);
        g_assert_cmpint(n, ==, (ssize_t)sizeof plain + 10 + 4); /* SRTP tag, SRTP+ tag */
        struct srtpplus_check check;
        g_assert_cmpint(srtpplus_receiver_check_rtp(plus.rx, buffer, (size_t)n, true,
                                                    (uint64_t)g_get_monotonic_time() * 1000u,
                                                    &check),
                        ==, SRTPPLUS_PASS);
        size_t length = check.len;
        g_assert_cmpint(moat_srtp_unprotect_rtp(phone, buffer, &length), ==, MOAT_SRTP_OK);
        g_assert_cmpint(srtpplus_receiver_confirm_rtp(plus.rx, buffer, &length, check.index), ==,
                        SRTPPLUS_CONFIRMED);
        g_assert_cmpmem(buffer, length, plain, sizeof plain);
    }
    for (uint16_t seq = 10; seq < 13; seq++) {
        uint8_t packet[256];
        size_t length = protected_packet(phone, seq, packet);
        g_assert_cmpint(srtpplus_sender_append_tag_rtp(plus.tx, packet, &length, sizeof packet), ==,
                        0);
        call_send_to(callee, to_callee, packet, length);
        g_assert_cmpint(call_receive(caller, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
        g_assert_cmphex(buffer[20], ==, 0x5a);
    }
    moat_call_view view;
    g_assert_cmpuint(media_of(&f, "sdes-6", 1, &view)->counters.dropped, ==, 0);

    srtpplus_sender_free(plus.tx);
    srtpplus_receiver_free(plus.rx);
    moat_srtp_session_free(phone);
    moat_sdp_crypto_clear(&mine);
    g_free(offer_sdp);
    g_free(lines);
    g_free(answer_sdp);
    close(caller);
    close(callee);
    call_fixture_teardown(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/call-sdes/plain-to-sdes", test_plain_to_sdes);
    g_test_add_func("/call-sdes/sdes-to-plain", test_sdes_to_plain);
    g_test_add_func("/call-sdes/refusals", test_refusals);
    g_test_add_func("/call-sdes/srtpplus", test_srtpplus_on_sdes_leg);
    g_test_add_func("/call-sdes/reoffer", test_reoffer_keeps_sdes);
    return g_test_run();
}
