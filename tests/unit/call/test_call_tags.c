/* Which party an ng command names, through the call layer's C API on a
 * real worker with real UDP sockets: a forked call's later answer makes its
 * to-tag the callee's, so the winning branch's re-INVITE (its from-tag, the
 * caller's to-tag) lands on the callee's leg and each party keeps its own
 * port; an offer whose tags name no party (or would replace the caller's)
 * is an error that leaves the call as it was; a delete whose tags name no
 * party (a stale BYE of another dialog on the call-id) is a warning, or an
 * error with fatal, and the call relays on, while the usual deletes (no
 * tags, the caller's from-tag, either party's BYE, a failed INVITE) end it. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "call/call_registry.h"
#include "call_test_support.h"

static uint8_t rtp_packet[172] = {0x80, 8, 0, 1, 0, 0, 0, 160, 0x11, 0x22, 0x33, 0x44};

/* Runs one offer or answer that must succeed; returns the port its
 * rewritten SDP names. */
static uint16_t command_ok(call_fixture *f, bool answer, const char *from, const char *to,
                           uint16_t phone_port)
{
    char *sdp = call_phone_sdp(phone_port, NULL, 0);
    moat_ng_request request = call_request("fork", from, to, sdp);
    uint16_t port = call_command_ok(f, answer, &request);
    g_free(sdp);
    return port;
}

/* An offer that must be refused. */
static void offer_refused(call_fixture *f, const char *from, const char *to, uint16_t phone_port)
{
    char *sdp = call_phone_sdp(phone_port, NULL, 0);
    moat_ng_request request = call_request("fork", from, to, sdp);
    moat_call_reply reply = {0};
    moat_call_offer(f->registry, &request, &reply);
    g_assert_cmpstr(reply.error, !=, "");
    g_assert_null(reply.sdp);
    g_free(sdp);
}

static void assert_tags(call_fixture *f, const char *caller, const char *callee)
{
    moat_call_view view;
    g_assert_cmpint(moat_call_query(f->registry, "fork", &view), ==, 0);
    g_assert_cmpstr(view.sides[0].tag, ==, caller);
    g_assert_cmpstr(view.sides[1].tag, ==, callee);
}

/* A's packet to its leg reaches B2 (not B1), B2's to its leg reaches A,
 * and neither hears itself. */
static void assert_a_talks_with_b2(int a, uint16_t leg_a, int b1, int b2, uint16_t leg_b)
{
    uint8_t buffer[2048];
    call_send_to(a, leg_a, rtp_packet, sizeof rtp_packet);
    g_assert_cmpint(call_receive(b2, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
    call_send_to(b2, leg_b, rtp_packet, sizeof rtp_packet);
    g_assert_cmpint(call_receive(a, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
    g_assert_cmpint(call_receive(b1, buffer, sizeof buffer, 200), ==, -1);
    g_assert_cmpint(call_receive(b2, buffer, sizeof buffer, 50), ==, -1);
    g_assert_cmpint(call_receive(a, buffer, sizeof buffer, 50), ==, -1);
}

/* offer A -> answer B1 -> answer B2 (a second fork's 200 OK) -> offer from
 * B2 (to-tag A) -> answer from A: B2 is the callee throughout the
 * re-INVITE, A keeps its tag and its leg, media goes A <-> B2. */
static void test_forked_answer_then_reinvite(void)
{
    call_fixture f;
    call_fixture_setup(&f, 44000, 44099);
    uint16_t pa, pb1, pb2;
    int a = call_udp_socket(&pa), b1 = call_udp_socket(&pb1), b2 = call_udp_socket(&pb2);
    uint16_t leg_b = command_ok(&f, false, "A", NULL, pa);
    uint16_t leg_a = command_ok(&f, true, "A", "B1", pb1);
    g_assert_cmpuint(command_ok(&f, true, "A", "B2", pb2), ==, leg_a);
    assert_tags(&f, "A", "B2"); /* the latest answer's to-tag is the callee's */
    assert_a_talks_with_b2(a, leg_a, b1, b2, leg_b);

    /* B2's re-INVITE: A is told to keep sending to its own leg. */
    g_assert_cmpuint(command_ok(&f, false, "B2", "A", pb2), ==, leg_a);
    assert_tags(&f, "A", "B2");
    assert_a_talks_with_b2(a, leg_a, b1, b2, leg_b); /* while it is pending */
    g_assert_cmpuint(command_ok(&f, true, "B2", "A", pa), ==, leg_b);
    assert_tags(&f, "A", "B2");
    assert_a_talks_with_b2(a, leg_a, b1, b2, leg_b);

    /* And again, from A then from B2: nothing flips. */
    g_assert_cmpuint(command_ok(&f, false, "A", "B2", pa), ==, leg_b);
    g_assert_cmpuint(command_ok(&f, true, "A", "B2", pb2), ==, leg_a);
    g_assert_cmpuint(command_ok(&f, false, "B2", "A", pb2), ==, leg_a);
    g_assert_cmpuint(command_ok(&f, true, "B2", "A", pa), ==, leg_b);
    assert_tags(&f, "A", "B2");
    assert_a_talks_with_b2(a, leg_a, b1, b2, leg_b);
    close(a);
    close(b1);
    close(b2);
    call_fixture_teardown(&f);
}

/* The callee's early-dialog offer (UPDATE) before any answer: its to-tag
 * is the caller's, so it is the callee's, and the caller's tag stays. */
static void test_callee_offer_before_the_answer(void)
{
    call_fixture f;
    call_fixture_setup(&f, 44100, 44199);
    uint16_t pa, pb;
    int a = call_udp_socket(&pa), b = call_udp_socket(&pb);
    uint16_t leg_b = command_ok(&f, false, "A", NULL, pa);
    uint16_t leg_a = command_ok(&f, false, "B", "A", pb);
    g_assert_cmpuint(leg_a, !=, leg_b);
    assert_tags(&f, "A", "B");
    g_assert_cmpuint(command_ok(&f, true, "B", "A", pa), ==, leg_b);
    assert_tags(&f, "A", "B");
    close(a);
    close(b);
    call_fixture_teardown(&f);
}

/* Tags naming no party, or a stranger's from-tag with the callee's to-tag
 * (it would replace the caller): errors, the call unchanged. */
static void test_unknown_tags_are_refused(void)
{
    call_fixture f;
    call_fixture_setup(&f, 44200, 44299);
    uint16_t pa, pb, px;
    int a = call_udp_socket(&pa), b = call_udp_socket(&pb), x = call_udp_socket(&px);
    uint16_t leg_b = command_ok(&f, false, "A", NULL, pa);
    uint16_t leg_a = command_ok(&f, true, "A", "B", pb);
    offer_refused(&f, "X", NULL, px);
    offer_refused(&f, "X", "Y", px);
    offer_refused(&f, "X", "B", px);
    assert_tags(&f, "A", "B");
    uint8_t buffer[2048];
    call_send_to(a, leg_a, rtp_packet, sizeof rtp_packet);
    g_assert_cmpint(call_receive(b, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
    call_send_to(b, leg_b, rtp_packet, sizeof rtp_packet);
    g_assert_cmpint(call_receive(a, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
    g_assert_cmpint(call_receive(x, buffer, sizeof buffer, 200), ==, -1);
    close(a);
    close(b);
    close(x);
    call_fixture_teardown(&f);
}

/* A call "del" between A and B (answered unless `answered` is false). */
static void establish_del(call_fixture *f, bool answered, uint16_t pa, uint16_t pb, uint16_t *leg_a)
{
    char *offer_sdp = call_phone_sdp(pa, NULL, 0), *answer_sdp = call_phone_sdp(pb, NULL, 0);
    moat_call_reply reply = {0};
    moat_ng_request offer = call_request("del", "A", NULL, offer_sdp);
    moat_call_offer(f->registry, &offer, &reply);
    g_assert_cmpstr(reply.error, ==, "");
    moat_call_reply_clear(&reply);
    if (answered) {
        moat_ng_request answer = call_request("del", "A", "B", answer_sdp);
        moat_call_answer(f->registry, &answer, &reply);
        g_assert_cmpstr(reply.error, ==, "");
        *leg_a = call_sdp_port(reply.sdp);
        moat_call_reply_clear(&reply);
    }
    g_free(offer_sdp);
    g_free(answer_sdp);
}

/* delete-delay 0 with these tags; returns whether the call is gone. */
static bool delete_ends(call_fixture *f, const char *from, const char *to, bool fatal,
                        moat_call_reply *reply)
{
    moat_ng_request del = call_request("del", from, to, NULL);
    del.delete_delay_s = 0;
    del.fatal = fatal;
    *reply = (moat_call_reply){0};
    moat_call_delete(f->registry, &del, reply);
    return moat_call_count(f->registry) == 0;
}

static void test_delete_needs_a_party(void)
{
    call_fixture f;
    call_fixture_setup(&f, 44300, 44399);
    uint16_t pa, pb, leg_a = 0;
    int a = call_udp_socket(&pa), b = call_udp_socket(&pb);
    uint8_t buffer[2048];
    moat_call_reply reply;
    establish_del(&f, true, pa, pb, &leg_a);
    /* Tags of nobody in the call; a stale BYE to a branch that lost (the
     * caller's from-tag, another to-tag): the call relays on. */
    const char *stale[][2] = {{"X", "Y"}, {"X", NULL}, {"A", "B1"}};
    for (size_t i = 0; i < G_N_ELEMENTS(stale); i++) {
        g_assert_false(delete_ends(&f, stale[i][0], stale[i][1], false, &reply));
        g_assert_cmpstr(reply.error, ==, "");
        g_assert_cmpstr(reply.warning, ==, "Call-ID not found or tags didn't match");
        g_assert_false(delete_ends(&f, stale[i][0], stale[i][1], true, &reply));
        g_assert_cmpstr(reply.error, ==, "Call-ID not found or tags didn't match");
    }
    call_send_to(a, leg_a, rtp_packet, sizeof rtp_packet);
    g_assert_cmpint(call_receive(b, buffer, sizeof buffer, 2000), ==, sizeof rtp_packet);
    moat_call_view view;
    g_assert_cmpint(moat_call_query(f.registry, "del", &view), ==, 0);
    g_assert_false(view.deleting);

    /* The callee's BYE ends it; so do the caller's, a CANCEL (the caller's
     * from-tag alone), a delete with only the call-id, and a failed
     * INVITE's final reply (to-tag of nobody, the call not answered). */
    g_assert_true(delete_ends(&f, "B", "A", false, &reply));
    g_assert_cmpstr(reply.warning, ==, "");
    const char *ends[][2] = {{"A", "B"}, {"A", NULL}, {NULL, NULL}};
    for (size_t i = 0; i < G_N_ELEMENTS(ends); i++) {
        establish_del(&f, true, pa, pb, &leg_a);
        g_assert_true(delete_ends(&f, ends[i][0], ends[i][1], false, &reply));
        g_assert_cmpstr(reply.error, ==, "");
        g_assert_cmpstr(reply.warning, ==, "");
    }
    establish_del(&f, false, pa, pb, &leg_a);
    g_assert_true(delete_ends(&f, "A", "486-tag", false, &reply));
    close(a);
    close(b);
    call_fixture_teardown(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/call/tags/forked-answer-then-reinvite", test_forked_answer_then_reinvite);
    g_test_add_func("/call/tags/callee-offer-before-the-answer",
                    test_callee_offer_before_the_answer);
    g_test_add_func("/call/tags/unknown-tags-are-refused", test_unknown_tags_are_refused);
    g_test_add_func("/call/tags/delete-needs-a-party", test_delete_needs_a_party);
    return g_test_run();
}
