/* Two-leg calls through the call layer's C API (call/call_registry.h), on a
 * real worker with real UDP sockets: offer and answer rewrite the SDPs to
 * Moat's ports, RTP and RTCP cross both ways, the first packet latches the
 * sender (another source is then dropped), query counts what each party
 * sent, a re-offer reuses the legs, delete with delay 0 stops relaying and
 * frees the ports, a small range runs out of ports, and bad requests are
 * errors that leave other calls working. */
#include <arpa/inet.h>
#include <glib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "call/call_ports.h"
#include "call/call_registry.h"
#include "call_test_support.h"

static char *phone_sdp(uint16_t port)
{
    return g_strdup_printf("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\n"
                           "t=0 0\r\nm=audio %u RTP/AVP 8\r\na=rtpmap:8 PCMA/8000\r\n",
                           port);
}

static uint8_t rtp_packet[172] = {0x80, 8, 0, 1, 0, 0, 0, 160, 0x11, 0x22, 0x33, 0x44};

/* Sets up call `id`; returns Moat's port towards the caller and the callee. */
static void establish(call_fixture *f, const char *id, uint16_t caller_port, uint16_t callee_port,
                      uint16_t *to_caller, uint16_t *to_callee)
{
    char *offer_sdp = phone_sdp(caller_port), *answer_sdp = phone_sdp(callee_port);
    moat_call_reply reply = {0};
    moat_ng_request offer = call_request(id, "from1", NULL, offer_sdp);
    moat_call_offer(f->registry, &offer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    *to_callee = call_sdp_port(reply.sdp);
    moat_call_reply_clear(&reply);
    moat_ng_request answer = call_request(id, "from1", "to1", answer_sdp);
    moat_call_answer(f->registry, &answer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    *to_caller = call_sdp_port(reply.sdp);
    g_assert_nonnull(strstr(reply.sdp, "c=IN IP4 127.0.0.1"));
    moat_call_reply_clear(&reply);
    g_free(offer_sdp);
    g_free(answer_sdp);
}

static void test_relay_both_ways(void)
{
    call_fixture f;
    call_fixture_setup(&f, 41000, 41099);
    uint16_t caller_port, callee_port, to_caller, to_callee;
    int caller = call_udp_socket(&caller_port), callee = call_udp_socket(&callee_port);
    establish(&f, "call-1", caller_port, callee_port, &to_caller, &to_callee);
    g_assert_cmpuint(to_caller, !=, to_callee);
    uint8_t buffer[2048];
    for (int i = 0; i < 5; i++) {
        call_send_to(caller, to_caller, rtp_packet, sizeof rtp_packet);
        g_assert_cmpint(call_receive(callee, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
        g_assert_cmpmem(buffer, 12, rtp_packet, 12);
    }
    call_send_to(callee, to_callee, rtp_packet, sizeof rtp_packet);
    g_assert_cmpint(call_receive(caller, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);

    /* A third party's packet to the latched leg is dropped. */
    uint16_t intruder_port;
    int intruder = call_udp_socket(&intruder_port);
    call_send_to(intruder, to_caller, rtp_packet, sizeof rtp_packet);
    g_assert_cmpint(call_receive(callee, buffer, sizeof buffer, 300), ==, -1);

    moat_call_view view;
    g_assert_cmpint(moat_call_query(f.registry, "call-1", &view), ==, 0);
    g_assert_cmpstr(view.sides[0].tag, ==, "from1");
    g_assert_cmpstr(view.sides[1].tag, ==, "to1");
    g_assert_cmpuint(view.sides[0].media[0].counters.rtp.packets, ==, 5);
    g_assert_cmpuint(view.sides[0].media[0].counters.rtp.bytes, ==, 5 * sizeof rtp_packet);
    g_assert_cmpuint(view.sides[0].media[0].counters.dropped, ==, 1);
    g_assert_true(view.sides[0].media[0].counters.latched);
    g_assert_cmpuint(view.sides[0].media[0].counters.last_ssrc, ==, 0x11223344);
    g_assert_cmpuint(view.sides[1].media[0].counters.rtp.packets, ==, 1);

    const char *ids[4];
    g_assert_cmpuint(moat_call_list(f.registry, ids, 4), ==, 1);
    g_assert_cmpstr(ids[0], ==, "call-1");

    /* delete-delay 0: relaying stops now. */
    moat_call_reply reply = {0};
    moat_ng_request del = call_request("call-1", "from1", NULL, NULL);
    del.delete_delay_s = 0;
    moat_call_delete(f.registry, &del, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    g_assert_cmpint(moat_call_query(f.registry, "call-1", &view), ==, -1);
    g_usleep(100000);
    call_send_to(caller, to_caller, rtp_packet, sizeof rtp_packet);
    g_assert_cmpint(call_receive(callee, buffer, sizeof buffer, 300), ==, -1);
    /* Unknown now: a warning, or an error with fatal. */
    moat_call_delete(f.registry, &del, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    g_assert_cmpstr(reply.warning, !=, "");
    del.fatal = true;
    moat_call_delete(f.registry, &del, &reply);
    g_assert_cmpstr(reply.error, !=, "");
    close(caller);
    close(callee);
    close(intruder);
    call_fixture_teardown(&f);
}

static void test_reoffer_reuses_ports(void)
{
    call_fixture f;
    call_fixture_setup(&f, 41100, 41199);
    uint16_t caller_port, callee_port, to_caller, to_callee, again_caller, again_callee;
    int caller = call_udp_socket(&caller_port), callee = call_udp_socket(&callee_port);
    establish(&f, "call-2", caller_port, callee_port, &to_caller, &to_callee);
    establish(&f, "call-2", caller_port, callee_port, &again_caller, &again_callee);
    g_assert_cmpuint(again_caller, ==, to_caller);
    g_assert_cmpuint(again_callee, ==, to_callee);
    g_assert_cmpuint(moat_call_count(f.registry), ==, 1);
    close(caller);
    close(callee);
    call_fixture_teardown(&f);
}

static void test_out_of_ports_and_errors(void)
{
    call_fixture f;
    call_fixture_setup(&f, 41200, 41203); /* two pairs: one call */
    uint16_t a, b, x, y;
    int caller = call_udp_socket(&a), callee = call_udp_socket(&b);
    establish(&f, "call-3", a, b, &x, &y);
    char *sdp = phone_sdp(a);
    moat_call_reply reply = {0};
    moat_ng_request offer = call_request("call-4", "f", NULL, sdp);
    moat_call_offer(f.registry, &offer, &reply);
    g_assert_cmpstr(reply.error, ==, "Ran out of ports");
    g_assert_cmpuint(moat_call_count(f.registry), ==, 1);

    moat_ng_request bad[] = {
        call_request(NULL, "f", NULL, sdp),
        call_request("call-5", NULL, NULL, sdp),
        call_request("call-5", "f", NULL, NULL),
        call_request("call-5", "f", NULL, "v=0\r\nm=audio x"),
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        moat_call_reply r = {0};
        moat_call_offer(f.registry, &bad[i], &r);
        g_assert_cmpstr(r.error, !=, "");
        g_assert_null(r.sdp);
    }
    moat_ng_request webrtc = call_request("call-6", "f", NULL, sdp);
    webrtc.transport_protocol = "UDP/TLS/RTP/SAVPF";
    moat_ng_request ice = call_request("call-6", "f", NULL, sdp);
    ice.ice = MOAT_NG_ICE_FORCE;
    /* Moat offering a WebRTC leg needs ports and the gateway's sessions
     * (neither here): an error, no SDP, no call left behind. */
    moat_ng_request unsupported[] = {webrtc, ice}; /* SDES: test_call_sdes.c */
    for (size_t i = 0; i < G_N_ELEMENTS(unsupported); i++) {
        moat_call_reply u = {0};
        moat_call_offer(f.registry, &unsupported[i], &u);
        g_assert_cmpstr(u.error, !=, "");
        g_assert_null(u.sdp);
        g_assert_cmpuint(moat_call_count(f.registry), ==, 1);
    }
    moat_call_reply r = {0};
    moat_ng_request answer = call_request("nope", "f", "t", sdp);
    moat_call_answer(f.registry, &answer, &r);
    g_assert_cmpstr(r.error, ==, "Unknown call-id");
    /* call-3 still relays. */
    uint8_t buffer[2048];
    call_send_to(caller, x, rtp_packet, sizeof rtp_packet);
    g_assert_cmpint(call_receive(callee, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
    g_free(sdp);
    close(caller);
    close(callee);
    call_fixture_teardown(&f);
}

/* A phone's offer towards a WebRTC party (ICE=force) without the gateway's
 * sessions: Moat cannot write its offer; an error, and the call goes. */
static void test_webrtc_offer_without_sessions(void)
{
    call_fixture f;
    call_fixture_setup(&f, 41400, 41499);
    uint16_t port;
    int phone = call_udp_socket(&port);
    char *sdp = phone_sdp(port);
    moat_ng_request offer = call_request("wr", "f", NULL, sdp);
    offer.ice = MOAT_NG_ICE_FORCE;
    offer.transport_protocol = "UDP/TLS/RTP/SAVPF";
    moat_call_reply reply = {0};
    moat_call_offer(f.registry, &offer, &reply);
    g_assert_nonnull(strstr(reply.error, "Cannot offer a WebRTC leg: "));
    g_assert_null(reply.sdp);
    g_assert_cmpuint(moat_call_count(f.registry), ==, 0);
    g_free(sdp);
    close(phone);
    call_fixture_teardown(&f);
}

/* rtcp-mux on both sides: RTCP shares the RTP ports and is counted as RTCP. */
static void test_rtcp_mux(void)
{
    call_fixture f;
    call_fixture_setup(&f, 41300, 41399);
    uint16_t caller_port, callee_port;
    int caller = call_udp_socket(&caller_port), callee = call_udp_socket(&callee_port);
    char *offer_sdp = g_strdup_printf("v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio %u RTP/AVP 8\r\n"
                                      "a=rtcp-mux\r\n",
                                      caller_port);
    char *answer_sdp = g_strdup_printf("v=0\r\nc=IN IP4 127.0.0.1\r\nm=audio %u RTP/AVP 8\r\n"
                                       "a=rtcp-mux\r\n",
                                       callee_port);
    moat_call_reply reply = {0};
    moat_ng_request offer = call_request("mux", "a", NULL, offer_sdp);
    moat_call_offer(f.registry, &offer, &reply);
    g_assert_nonnull(strstr(reply.sdp, "a=rtcp-mux\r\n"));
    g_assert_null(strstr(reply.sdp, "a=rtcp:"));
    moat_call_reply_clear(&reply);
    moat_ng_request answer = call_request("mux", "a", "b", answer_sdp);
    moat_call_answer(f.registry, &answer, &reply);
    g_assert_nonnull(strstr(reply.sdp, "a=rtcp-mux\r\n"));
    uint16_t to_caller = call_sdp_port(reply.sdp);
    moat_call_reply_clear(&reply);
    static const uint8_t report[8] = {0x80, 201, 0, 1, 0x11, 0x22, 0x33, 0x44};
    uint8_t buffer[2048];
    call_send_to(caller, to_caller, rtp_packet, sizeof rtp_packet);
    g_assert_cmpint(call_receive(callee, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
    call_send_to(caller, to_caller, report, sizeof report);
    g_assert_cmpint(call_receive(callee, buffer, sizeof buffer, 2000), ==, sizeof report);
    g_assert_cmpuint(buffer[1], ==, 201);
    moat_call_view view;
    g_assert_cmpint(moat_call_query(f.registry, "mux", &view), ==, 0);
    g_assert_cmpuint(view.sides[0].media[0].counters.rtp.packets, ==, 1);
    g_assert_cmpuint(view.sides[0].media[0].counters.rtcp.packets, ==, 1);
    g_free(offer_sdp);
    g_free(answer_sdp);
    close(caller);
    close(callee);
    call_fixture_teardown(&f);
}

/* Pairs are picked at random, not in sequence; a full range still runs
 * out; the loop guard knows only held ports on this host's addresses, the
 * legs' and any other socket's Moat marked (an ingest's), while held. */
static void test_random_ports_and_loop_guard(void)
{
    char error[160];
    struct in6_addr host = {.s6_addr = {[10] = 0xff, [11] = 0xff, [12] = 192, 0, 2, 99}};
    moat_own_sockets *own = moat_own_sockets_new_with_hosts(&host, 1);
    moat_call_ports *ports =
        moat_call_ports_new("127.0.0.1", 41500, 41899, own, error, sizeof error);
    g_assert_nonnull(ports);
    uint16_t got[20];
    int fds[20][2];
    bool sequential = true;
    for (int i = 0; i < 20; i++) {
        got[i] = moat_call_ports_allocate(ports, &fds[i][0], &fds[i][1]);
        g_assert_cmpuint(got[i], >=, 41500);
        g_assert_cmpuint(got[i] % 2, ==, 0);
        g_assert_true(moat_call_ports_holds(ports, got[i]));
        g_assert_true(moat_call_ports_holds(ports, (uint16_t)(got[i] + 1)));
        if (i > 0 && got[i] != got[i - 1] + 2)
            sequential = false;
    }
    g_assert_false(sequential);

    moat_worker *worker = moat_worker_new(0, "127.0.0.1", 0, error, sizeof error);
    moat_call_worker *context = moat_call_worker_new(worker);
    moat_call_worker_set_own(context, own);
    struct sockaddr_in6 from = {.sin6_family = AF_INET6, .sin6_port = htons(got[0])};
    from.sin6_addr = host;
    g_assert_true(moat_call_worker_is_own_source(context, &from));
    from.sin6_port = htons((uint16_t)(got[0] + 1)); /* its RTCP port */
    g_assert_true(moat_call_worker_is_own_source(context, &from));
    from.sin6_port = htons(got[0]);
    inet_pton(AF_INET6, "::ffff:127.0.0.1", &from.sin6_addr);
    g_assert_true(moat_call_worker_is_own_source(context, &from));
    inet_pton(AF_INET6, "::ffff:192.0.2.100", &from.sin6_addr); /* a phone elsewhere */
    g_assert_false(moat_call_worker_is_own_source(context, &from));
    from.sin6_addr = host;
    from.sin6_port = htons(6000); /* not a leg's port */
    g_assert_false(moat_call_worker_is_own_source(context, &from));
    moat_own_sockets_hold(own, 6000); /* now an ingest's */
    g_assert_true(moat_call_worker_is_own_source(context, &from));
    moat_own_sockets_release(own, 6000);
    g_assert_false(moat_call_worker_is_own_source(context, &from));
    moat_call_worker_free(context);
    moat_worker_free(worker);

    for (int i = 0; i < 20; i++)
        moat_call_ports_release(ports, got[i], fds[i][0], fds[i][1]);
    g_assert_false(moat_call_ports_holds(ports, got[0]));
    for (int i = 0; i < 20; i++) /* released pairs are no longer Moat's own */
        g_assert_false(moat_own_sockets_holds(own, got[i]) ||
                       moat_own_sockets_holds(own, (uint16_t)(got[i] + 1)));
    moat_call_ports_free(ports);
    moat_own_sockets_free(own);

    ports = moat_call_ports_new("127.0.0.1", 41900, 41905, NULL, error, sizeof error);
    int a[3][2];
    uint16_t p[3];
    for (int i = 0; i < 3; i++)
        g_assert_cmpuint((p[i] = moat_call_ports_allocate(ports, &a[i][0], &a[i][1])), !=, 0);
    int x, y;
    g_assert_cmpuint(moat_call_ports_allocate(ports, &x, &y), ==, 0); /* "Ran out of ports" */
    for (int i = 0; i < 3; i++)
        moat_call_ports_release(ports, p[i], a[i][0], a[i][1]);
    moat_call_ports_free(ports);
}

/* Default learning (sdp): a third party on another address sending to the
 * callee-facing port before the callee speaks neither latches the leg nor
 * gets the caller's audio; a packet on one leg never latches the other. */
static void test_third_party_before_the_callee(void)
{
    call_fixture f;
    call_fixture_setup(&f, 41600, 41699);
    uint16_t caller_port, callee_port, to_caller, to_callee;
    int caller = call_udp_socket(&caller_port), callee = call_udp_socket(&callee_port);
    establish(&f, "bleed", caller_port, callee_port, &to_caller, &to_callee);
    int intruder = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in other = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.2", &other.sin_addr);
    g_assert_cmpint(bind(intruder, (struct sockaddr *)&other, sizeof other), ==, 0);
    call_send_to(intruder, to_callee, rtp_packet, sizeof rtp_packet);
    g_usleep(100000);
    moat_call_view view;
    g_assert_cmpint(moat_call_query(f.registry, "bleed", &view), ==, 0);
    g_assert_false(view.sides[1].media[0].counters.latched);
    g_assert_false(view.sides[0].media[0].counters.latched); /* nor the other leg */
    uint8_t buffer[2048];
    call_send_to(caller, to_caller, rtp_packet, sizeof rtp_packet);
    g_assert_cmpint(call_receive(callee, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
    g_assert_cmpint(call_receive(intruder, buffer, sizeof buffer, 300), ==, -1);
    g_assert_cmpint(moat_call_query(f.registry, "bleed", &view), ==, 0);
    g_assert_true(view.sides[0].media[0].counters.latched);
    g_assert_false(view.sides[1].media[0].counters.latched);
    close(caller);
    close(callee);
    close(intruder);
    call_fixture_teardown(&f);
}

/* Hold (re-offer with c=0.0.0.0): the holding party may still send (music
 * on hold) from the IP it had; it reaches the other party. */
static void test_hold_keeps_the_source(void)
{
    call_fixture f;
    call_fixture_setup(&f, 41700, 41799);
    uint16_t caller_port, callee_port, to_caller, to_callee;
    int caller = call_udp_socket(&caller_port), callee = call_udp_socket(&callee_port);
    establish(&f, "hold", caller_port, callee_port, &to_caller, &to_callee);
    char *held = g_strdup_printf("v=0\r\nc=IN IP4 0.0.0.0\r\nm=audio %u RTP/AVP 8\r\n"
                                 "a=sendonly\r\n",
                                 caller_port);
    moat_call_reply reply = {0};
    moat_ng_request offer = call_request("hold", "from1", NULL, held);
    moat_call_offer(f.registry, &offer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    moat_call_reply_clear(&reply);
    uint8_t buffer[2048];
    call_send_to(caller, to_caller, rtp_packet, sizeof rtp_packet);
    g_assert_cmpint(call_receive(callee, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
    g_free(held);
    close(caller);
    close(callee);
    call_fixture_teardown(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/call/relay/both-ways", test_relay_both_ways);
    g_test_add_func("/call/relay/reoffer", test_reoffer_reuses_ports);
    g_test_add_func("/call/relay/out-of-ports-and-errors", test_out_of_ports_and_errors);
    g_test_add_func("/call/relay/rtcp-mux", test_rtcp_mux);
    g_test_add_func("/call/relay/webrtc-offer-without-sessions",
                    test_webrtc_offer_without_sessions);
    g_test_add_func("/call/relay/random-ports-and-loop-guard", test_random_ports_and_loop_guard);
    g_test_add_func("/call/relay/third-party-before-the-callee",
                    test_third_party_before_the_callee);
    g_test_add_func("/call/relay/hold-keeps-the-source", test_hold_keeps_the_source);
    return g_test_run();
}
