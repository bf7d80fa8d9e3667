/* The media timeout (call_registry.h, call_timeout.c) through the call
 * layer's C API on a real worker with real UDP sockets, its sweep run at
 * chosen times: an answered call whose legs receive nothing ends after
 * media_timeout_s, as a delete with delete-delay 0 (no call, no legs),
 * counted; a packet a leg accepted restarts the clock, a stranger's
 * dropped datagrams do not; a call not answered yet or held (sendonly,
 * c=0.0.0.0) gets silent_timeout_s, and a re-INVITE back to sendrecv the
 * media timeout again; an m-line refused (port 0) holds nothing; a call in
 * its delete-delay is left to it, and 0 turns a timeout off. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "call/call_registry.h"
#include "call_test_support.h"

#define S ((int64_t)G_USEC_PER_SEC)

static uint8_t rtp_packet[172] = {0x80, 8, 0, 1, 0, 0, 0, 160, 0x11, 0x22, 0x33, 0x44};

/* An offer from "a" (to NULL) or an answer from "b" that must succeed,
 * with a phone's SDP on `port` plus `extra` lines; the port Moat's SDP
 * names. */
static uint16_t command_ok(call_fixture *f, const char *id, bool answer, uint16_t port,
                           const char *extra)
{
    char *phone = call_phone_sdp(port, NULL, 0);
    char *sdp = g_strconcat(phone, extra, NULL);
    moat_ng_request request = call_request(id, "a", answer ? "b" : NULL, sdp);
    uint16_t moat_port = call_command_ok(f, answer, &request);
    g_free(sdp);
    g_free(phone);
    return moat_port;
}

static bool exists(call_fixture *f, const char *id)
{
    moat_call_view view;
    return moat_call_query(f->registry, id, &view) == 0;
}

static bool metrics_say(call_fixture *f, const char *line)
{
    GString *out = g_string_new(NULL);
    moat_call_registry_metrics(f->registry, out);
    bool found = strstr(out->str, line) != NULL;
    g_string_free(out, TRUE);
    return found;
}

/* Waits (2 s at most) until leg `side` of the call counted `packets`
 * accepted RTP packets and `dropped` drops. */
static void wait_counted(call_fixture *f, const char *id, int side, uint64_t packets,
                         uint64_t dropped)
{
    for (int i = 0; i < 200; i++) {
        moat_call_view view;
        g_assert_cmpint(moat_call_query(f->registry, id, &view), ==, 0);
        const moat_call_leg_counters *c = &view.sides[side].media[0].counters;
        if (c->rtp.packets == packets && c->dropped == dropped)
            return;
        g_usleep(10000);
    }
    g_assert_not_reached();
}

static void test_no_media_ends_the_call(void)
{
    call_fixture f;
    call_fixture_setup_timeouts(&f, 44600, 44699, 2, 10);
    int64_t before = g_get_monotonic_time();
    command_ok(&f, "quiet", false, 20000, "");
    command_ok(&f, "quiet", true, 20002, "");
    int64_t answered = g_get_monotonic_time();
    g_assert_true(metrics_say(&f, "moat_call_legs 2\n"));
    moat_call_registry_sweep(f.registry, before + 19 * S / 10);
    g_assert_true(exists(&f, "quiet"));
    moat_call_registry_sweep(f.registry, answered + 2 * S);
    g_assert_false(exists(&f, "quiet"));
    g_assert_cmpuint(moat_call_count(f.registry), ==, 0);
    g_assert_true(metrics_say(&f, "moat_call_legs 0\n"));
    g_assert_cmpuint(moat_call_registry_timed_out(f.registry, MOAT_CALL_TIMEOUT_MEDIA), ==, 1);
    g_assert_cmpuint(moat_call_registry_timed_out(f.registry, MOAT_CALL_TIMEOUT_SILENT), ==, 0);
    g_assert_true(metrics_say(&f, "moat_calls_timed_out_total{timeout=\"media\"} 1\n"));
    /* The call-id is free again: a new offer makes a new call. */
    command_ok(&f, "quiet", false, 20000, "");
    g_assert_true(exists(&f, "quiet"));
    call_fixture_teardown(&f);
}

static void test_packets_restart_the_clock(void)
{
    call_fixture f;
    call_fixture_setup_timeouts(&f, 44600, 44699, 2, 10);
    uint16_t caller_port, stranger_port, callee_port;
    int caller = call_udp_socket(&caller_port), stranger = call_udp_socket(&stranger_port);
    int callee = call_udp_socket(&callee_port);
    command_ok(&f, "talk", false, caller_port, "");
    uint16_t caller_leg = command_ok(&f, "talk", true, callee_port, "");
    call_send_to(caller, caller_leg, rtp_packet, sizeof rtp_packet);
    wait_counted(&f, "talk", 0, 1, 0);
    int64_t t = g_get_monotonic_time();
    /* Overdue, but a packet came since the last sweep: the call lives on,
     * its clock at this sweep. */
    moat_call_registry_sweep(f.registry, t + 10 * S);
    g_assert_true(exists(&f, "talk"));
    /* A stranger on the caller's IP, after the leg latched: dropped, and
     * no activity. */
    for (int i = 0; i < 5; i++)
        call_send_to(stranger, caller_leg, rtp_packet, sizeof rtp_packet);
    wait_counted(&f, "talk", 0, 1, 5);
    moat_call_registry_sweep(f.registry, t + 11 * S);
    g_assert_true(exists(&f, "talk"));
    moat_call_registry_sweep(f.registry, t + 119 * S / 10);
    g_assert_true(exists(&f, "talk"));
    moat_call_registry_sweep(f.registry, t + 12 * S);
    g_assert_false(exists(&f, "talk"));
    g_assert_cmpuint(moat_call_registry_timed_out(f.registry, MOAT_CALL_TIMEOUT_MEDIA), ==, 1);
    close(caller);
    close(stranger);
    close(callee);
    call_fixture_teardown(&f);
}

static void test_silent_calls_get_the_silent_timeout(void)
{
    call_fixture f;
    call_fixture_setup_timeouts(&f, 44600, 44699, 2, 10);
    /* Ringing: nobody need send until the answer. */
    command_ok(&f, "ringing", false, 20000, "");
    int64_t t = g_get_monotonic_time();
    moat_call_registry_sweep(f.registry, t + 5 * S);
    g_assert_true(exists(&f, "ringing"));
    /* On hold: one party's SDP is sendonly, or a phone's c= is 0.0.0.0. */
    command_ok(&f, "held", false, 20010, "");
    command_ok(&f, "held", true, 20012, "a=sendonly\r\n");
    const char *zero = "v=0\r\nc=IN IP4 0.0.0.0\r\nt=0 0\r\nm=audio 20022 RTP/AVP 8\r\n";
    command_ok(&f, "zero", false, 20020, "");
    moat_ng_request request = call_request("zero", "a", "b", zero);
    moat_call_reply reply = {0};
    moat_call_answer(f.registry, &request, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    moat_call_reply_clear(&reply);
    /* Held, then taken off hold by a re-INVITE: the media timeout again,
     * from the re-INVITE. */
    command_ok(&f, "resumed", false, 20030, "a=inactive\r\n");
    command_ok(&f, "resumed", true, 20032, "a=inactive\r\n");
    t = g_get_monotonic_time();
    moat_call_registry_sweep(f.registry, t + 5 * S);
    g_assert_true(exists(&f, "ringing"));
    g_assert_true(exists(&f, "held"));
    g_assert_true(exists(&f, "zero"));
    g_assert_true(exists(&f, "resumed"));
    command_ok(&f, "resumed", false, 20030, "");
    command_ok(&f, "resumed", true, 20032, "");
    int64_t resumed = g_get_monotonic_time();
    moat_call_registry_sweep(f.registry, resumed + 2 * S);
    g_assert_false(exists(&f, "resumed"));
    g_assert_cmpuint(moat_call_registry_timed_out(f.registry, MOAT_CALL_TIMEOUT_MEDIA), ==, 1);
    moat_call_registry_sweep(f.registry, resumed + 10 * S);
    g_assert_cmpuint(moat_call_count(f.registry), ==, 0);
    g_assert_cmpuint(moat_call_registry_timed_out(f.registry, MOAT_CALL_TIMEOUT_SILENT), ==, 3);
    g_assert_true(metrics_say(&f, "moat_calls_timed_out_total{timeout=\"silent\"} 3\n"));
    call_fixture_teardown(&f);
}

/* Video refused by the answer (port 0), whatever the offer said of it
 * (sendrecv, recvonly, sendonly, c=0.0.0.0), or turned off (inactive both
 * ways) while audio goes both ways: the audio decides, and an abandoned
 * call gets the media timeout, not the silent one. */
static void two_line_call(call_fixture *f, const char *id, const char *offer_video,
                          const char *answer_video)
{
    char *offer =
        g_strdup_printf("v=0\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 20040 RTP/AVP 8\r\n"
                        "%s",
                        offer_video);
    char *answer = g_strdup_printf("v=0\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 20050 RTP/AVP "
                                   "8\r\n%s",
                                   answer_video);
    const char *sdps[] = {offer, answer};
    for (int i = 0; i < 2; i++) {
        moat_ng_request request = call_request(id, "a", i ? "b" : NULL, sdps[i]);
        call_command_ok(f, i, &request);
    }
    g_free(offer);
    g_free(answer);
}

static void test_refused_m_line_holds_nothing(void)
{
    call_fixture f;
    call_fixture_setup_timeouts(&f, 44600, 44699, 2, 10);
    const char *refused = "m=video 0 RTP/AVP 96\r\na=inactive\r\n";
    two_line_call(&f, "sendrecv", "m=video 20042 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\n", refused);
    two_line_call(&f, "recvonly", "m=video 20042 RTP/AVP 96\r\na=recvonly\r\n", refused);
    two_line_call(&f, "sendonly", "m=video 20042 RTP/AVP 96\r\na=sendonly\r\n", refused);
    two_line_call(&f, "c0", "m=video 20042 RTP/AVP 96\r\nc=IN IP4 0.0.0.0\r\n", refused);
    two_line_call(&f, "camera-off", "m=video 20042 RTP/AVP 96\r\na=inactive\r\n",
                  "m=video 20052 RTP/AVP 96\r\na=inactive\r\n");
    moat_call_registry_sweep(f.registry, g_get_monotonic_time() + 2 * S);
    g_assert_cmpuint(moat_call_count(f.registry), ==, 0);
    g_assert_cmpuint(moat_call_registry_timed_out(f.registry, MOAT_CALL_TIMEOUT_MEDIA), ==, 5);
    call_fixture_teardown(&f);
}

static void test_off_and_deleting(void)
{
    call_fixture f;
    call_fixture_setup_timeouts(&f, 44600, 44699, 0, 0);
    command_ok(&f, "forever", false, 20000, "");
    command_ok(&f, "forever", true, 20002, "");
    command_ok(&f, "ringing", false, 20010, "");
    moat_call_registry_sweep(f.registry, g_get_monotonic_time() + 1000000 * S);
    g_assert_cmpuint(moat_call_count(f.registry), ==, 2);
    call_fixture_teardown(&f);

    /* Deleted with a delete-delay: it relays until that ends, timed out
     * or not. */
    call_fixture_setup_timeouts(&f, 44600, 44699, 2, 10);
    command_ok(&f, "bye", false, 20000, "");
    command_ok(&f, "bye", true, 20002, "");
    moat_ng_request request = call_request("bye", "a", NULL, NULL);
    moat_call_reply reply = {0};
    moat_call_delete(f.registry, &request, &reply); /* [ng] delete_delay_s: 30 */
    g_assert_cmpstr(reply.error, ==, "");
    moat_call_registry_sweep(f.registry, g_get_monotonic_time() + 20 * S);
    moat_call_view view;
    g_assert_cmpint(moat_call_query(f.registry, "bye", &view), ==, 0);
    g_assert_true(view.deleting);
    g_assert_cmpuint(moat_call_registry_timed_out(f.registry, MOAT_CALL_TIMEOUT_MEDIA), ==, 0);
    call_fixture_teardown(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/call/timeout/no-media-ends-the-call", test_no_media_ends_the_call);
    g_test_add_func("/call/timeout/packets-restart-the-clock", test_packets_restart_the_clock);
    g_test_add_func("/call/timeout/silent-calls", test_silent_calls_get_the_silent_timeout);
    g_test_add_func("/call/timeout/refused-m-line", test_refused_m_line_holds_nothing);
    g_test_add_func("/call/timeout/off-and-deleting", test_off_and_deleting);
    return g_test_run();
}
