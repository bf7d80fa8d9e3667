/* Repairs from transport-cc feedback against a live keyed session: a
 * packet the peer's feedback reports lost is resent once, before any NACK
 * for it; not when a NACK already had it resent after it left; not twice
 * for one loss reported twice; and never probe padding or a packet the
 * feedback cannot know is lost yet (no later packet received). */
#include "session_harness.h"

#include "rtp/rtcp_packet.h"
#include "rtp/transport_cc.h"
#include "session/session_internal.h"

#include <glib.h>
#include <string.h>

#define PAYLOAD    1000
#define TWCC_ID    3
#define N_PACKETS  20
#define FIRST_SEQ  100
#define LOST_INDEX 10

static uint64_t counter(session_harness *h, size_t offset)
{
    return moat_counter_read(
        (const uint64_t *)((const char *)moat_worker_counters(h->worker) + offset));
}

static uint64_t repairs(session_harness *h)
{
    return counter(h, offsetof(moat_counters, feedback_repairs));
}

static void start(session_harness *h)
{
    session_harness_init(h);
    h->negotiation.media[0].transport_cc_extension_id = TWCC_ID;
    session_harness_create(h, NULL);
    moat_worker_set_now_us(h->worker, 1000000);
    session_harness_key(h);
    g_assert_nonnull(h->session->bwe);
}

/* N_PACKETS media packets, 5 ms apart: transport-wide numbers 0.. */
static void send_media(session_harness *h, uint64_t *now)
{
    for (int i = 0; i < N_PACKETS; i++) {
        moat_worker_set_now_us(h->worker, *now += 5000);
        g_assert_cmpint(session_harness_gateway_send_rtp(h, (uint16_t)(FIRST_SEQ + i), PAYLOAD), ==,
                        0);
        session_harness_flush(h);
    }
    size_t datagrams;
    session_harness_drain_peer(h, &datagrams);
    g_assert_cmpuint(datagrams, ==, N_PACKETS);
}

/* The peer's feedback for transport-wide numbers 0..count-1 with those in
 * `lost` not received. */
static void peer_feedback(session_harness *h, size_t count, const int *lost, size_t n_lost)
{
    int64_t arrival[N_PACKETS];
    for (size_t i = 0; i < count; i++)
        arrival[i] = (int64_t)(2000000 + i * 5000);
    for (size_t i = 0; i < n_lost; i++)
        arrival[lost[i]] = -1;
    uint8_t plain[600], out[700];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, plain, sizeof plain);
    g_assert_cmpint(moat_rtcp_build_rr(&w, HARNESS_REMOTE_SSRC, NULL, 0), ==, 0);
    g_assert_cmpint(
        moat_twcc_build(&w, HARNESS_REMOTE_SSRC, HARNESS_LOCAL_SSRC, 0, arrival, count, 0), ==, 0);
    size_t length = session_harness_peer_protect_rtcp(h, plain, w.length, out, sizeof out);
    g_assert_cmpuint(length, >, 0);
    moat_session_handle_srtp(h->session, NULL, out, length, sizeof out);
    session_harness_flush(h);
}

static void peer_nacks(session_harness *h, uint16_t sequence)
{
    uint8_t plain[200], out[300];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, plain, sizeof plain);
    g_assert_cmpint(moat_rtcp_build_rr(&w, HARNESS_REMOTE_SSRC, NULL, 0), ==, 0);
    g_assert_cmpint(moat_rtcp_build_nack(&w, HARNESS_REMOTE_SSRC, HARNESS_LOCAL_SSRC, &sequence, 1),
                    ==, 0);
    size_t length = session_harness_peer_protect_rtcp(h, plain, w.length, out, sizeof out);
    moat_session_handle_srtp(h->session, NULL, out, length, sizeof out);
    session_harness_flush(h);
}

static size_t peer_datagrams(session_harness *h)
{
    size_t datagrams;
    session_harness_drain_peer(h, &datagrams);
    return datagrams;
}

static void test_lost_packet_repaired_once(void)
{
    session_harness h;
    start(&h);
    uint64_t now = 1000000;
    send_media(&h, &now);
    moat_worker_set_now_us(h.worker, now += 40000);
    const int lost[] = {LOST_INDEX};
    peer_feedback(&h, N_PACKETS, lost, 1);
    g_assert_cmpuint(repairs(&h), ==, 1);
    g_assert_cmpuint(peer_datagrams(&h), ==, 1);
    /* The same loss reported again (a repeated feedback) is not repaired
     * again; its NACK, if one comes, is answered as always. */
    moat_worker_set_now_us(h.worker, now += 40000);
    peer_feedback(&h, N_PACKETS, lost, 1);
    g_assert_cmpuint(repairs(&h), ==, 1);
    g_assert_cmpuint(peer_datagrams(&h), ==, 0);
    session_harness_clear(&h);
}

static void test_nacked_first_is_not_repaired_again(void)
{
    session_harness h;
    start(&h);
    uint64_t now = 1000000;
    send_media(&h, &now);
    moat_worker_set_now_us(h.worker, now += 30000);
    peer_nacks(&h, FIRST_SEQ + LOST_INDEX);
    g_assert_cmpuint(peer_datagrams(&h), ==, 1);
    moat_worker_set_now_us(h.worker, now += 30000);
    const int lost[] = {LOST_INDEX};
    peer_feedback(&h, N_PACKETS, lost, 1);
    g_assert_cmpuint(repairs(&h), ==, 0);
    g_assert_cmpuint(peer_datagrams(&h), ==, 0);
    session_harness_clear(&h);
}

static void test_no_repair_without_a_later_arrival(void)
{
    session_harness h;
    start(&h);
    uint64_t now = 1000000;
    send_media(&h, &now);
    moat_worker_set_now_us(h.worker, now += 40000);
    /* The last two not received: nothing after them says they are lost
     * rather than still on their way. */
    const int tail[] = {N_PACKETS - 2, N_PACKETS - 1};
    peer_feedback(&h, N_PACKETS, tail, 2);
    g_assert_cmpuint(repairs(&h), ==, 0);
    g_assert_cmpuint(peer_datagrams(&h), ==, 0);
    session_harness_clear(&h);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session/repair/lost_packet_repaired_once", test_lost_packet_repaired_once);
    g_test_add_func("/session/repair/nacked_first_is_not_repaired_again",
                    test_nacked_first_is_not_repaired_again);
    g_test_add_func("/session/repair/no_repair_without_a_later_arrival",
                    test_no_repair_without_a_later_arrival);
    return g_test_run();
}
