/* ICE consent of a live session (RFC 7675), per pair: a peer that moved
 * and whose checks arrive from its new tuple keeps its session while that
 * pending pair has consent, but nothing is sent to the old tuple once its
 * consent lapsed; its authenticated media confirms the move and sending
 * resumes there; with no pair's consent left the session ends, at once
 * (no drain) and counted once. Pairs the peer left expire and release their
 * tuples (one consent timeout idle, or the generation before a completed
 * ICE restart). */
#include "session_harness.h"

#include "session/session_internal.h"
#include "engine/worker_receive.h"
#include "ice/ice_client.h"
#include "rtp/rtcp_packet.h"

#include <arpa/inet.h>
#include <glib.h>
#include <string.h>

#define GW_UFRAG "gwufrag1"
#define GW_PWD   "gatewaypasswordgatewaypa"
#define SECOND   1000000ull
#define TIMEOUT  (10 * SECOND)

static bool selected_is(const session_harness *h, const moat_path *path)
{
    return h->session->has_selected &&
           memcmp(&h->session->selected.remote, &path->remote, sizeof path->remote) == 0;
}

/* Sends one RTP packet from the gateway; how many datagrams the peer got. */
static size_t gateway_sends(session_harness *h, uint16_t sequence)
{
    session_harness_flush(h); /* what the ticks queued (reports) */
    session_harness_drain_peer(h, NULL);
    session_harness_gateway_send_rtp(h, sequence, 100);
    session_harness_flush(h);
    size_t datagrams;
    session_harness_drain_peer(h, &datagrams);
    return datagrams;
}

static void set_now(session_harness *h, uint64_t now)
{
    moat_worker_set_now_us(h->worker, now);
}

/* Connected (keyed) on h->path, consent timeout 10 s, then the peer moves
 * to `moved` at 1 s: its nomination from there is pending. */
static moat_ice_client *connect_and_move(session_harness *h, moat_path *moved)
{
    session_harness_init(h);
    set_now(h, SECOND);
    session_harness_create(h, NULL);
    session_harness_key(h);
    h->session->consent_timeout_us = TIMEOUT;
    moat_ice_client *peer = session_harness_ice_peer(GW_UFRAG, GW_PWD);
    session_harness_send_check(h, peer, &h->path, true);
    g_assert_true(selected_is(h, &h->path));
    *moved = h->path;
    moved->remote.sin6_addr.s6_addr[15] = 66; /* 127.0.0.66: nobody's */
    set_now(h, 2 * SECOND);
    session_harness_send_check(h, peer, moved, true);
    g_assert_cmpint(h->session->pairs.pending, >=, 0);
    g_assert_true(selected_is(h, &h->path));
    session_harness_flush(h);
    session_harness_drain_peer(h, NULL);
    return peer;
}

/* The moved peer checks every 5 s from its new tuple only: past the old
 * pair's consent the session lives on, sends nothing to the old tuple
 * (counted no_consent), and its first authenticated packet from the new
 * tuple moves it and sending resumes. */
static void test_a_moved_peer_keeps_its_session_not_the_old_tuples_media(void)
{
    session_harness h;
    moat_path moved;
    moat_ice_client *peer = connect_and_move(&h, &moved);
    g_assert_cmpuint(gateway_sends(&h, 1), ==, 1); /* the old pair still has consent */
    uint64_t now = 2 * SECOND;
    for (int i = 0; i < 3; i++) {
        set_now(&h, now += 5 * SECOND);
        session_harness_send_check(&h, peer, &moved, true);
        g_assert_true(moat_session_tick(h.session, now));
    }
    /* 17 s: the old pair's last check was at 1 s (its consent lapsed at
     * 11 s; the pending pair holds the session until 21 s). */
    g_assert_true(h.session->consent_withheld);
    g_assert_true(selected_is(&h, &h.path));
    uint64_t withheld = session_harness_dropped(&h, MOAT_DROP_NO_CONSENT);
    g_assert_cmpuint(gateway_sends(&h, 2), ==, 0);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_NO_CONSENT), ==, withheld + 1);
    /* Its media (an SRTCP report) from the new tuple confirms the move. */
    uint8_t plain[64], report[128];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, plain, sizeof plain);
    g_assert_cmpint(moat_rtcp_build_rr(&w, HARNESS_REMOTE_SSRC, NULL, 0), ==, 0);
    size_t length = session_harness_peer_protect_rtcp(&h, plain, w.length, report, sizeof report);
    moat_session_handle_srtp(h.session, &moved, report, length, sizeof report);
    g_assert_true(selected_is(&h, &moved));
    g_assert_false(h.session->consent_withheld);
    g_assert_true(moat_session_tick(h.session, now));
    gateway_sends(&h, 3); /* to the new tuple (not the harness's socket) */
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_NO_CONSENT), ==, withheld + 1);
    moat_ice_client_free(peer);
    session_harness_clear(&h);
}

/* The pending pair holds the session one consent timeout past the selected
 * pair's at most: fresh checks on it (a peer that moved and never confirms,
 * or the peer's checks captured and replayed from a spoofed address once
 * they left the 32-id replay memory) no longer keep the session forever
 * (before: alive 600 s after its peer left, sending nothing). */
static void test_a_pending_pair_holds_the_session_one_timeout_at_most(void)
{
    session_harness h;
    moat_path moved;
    moat_ice_client *peer = connect_and_move(&h, &moved);
    uint64_t now = 2 * SECOND, ended = 0;
    while (now < 120 * SECOND) {
        set_now(&h, now += SECOND);
        session_harness_send_check(&h, peer, &moved, true);
        if (!moat_session_tick(h.session, now)) {
            ended = now;
            break;
        }
    }
    /* The selected pair's last check was at 1 s. */
    g_assert_cmpuint(ended, >, SECOND + 2 * TIMEOUT);
    g_assert_cmpuint(ended, <=, SECOND + 2 * TIMEOUT + SECOND);
    moat_ice_client_free(peer);
    session_harness_clear(&h);
}

/* A check on the old pair gives it consent back: sending resumes there. */
static void test_a_check_on_the_old_pair_resumes_sending(void)
{
    session_harness h;
    moat_path moved;
    moat_ice_client *peer = connect_and_move(&h, &moved);
    set_now(&h, 8 * SECOND);
    session_harness_send_check(&h, peer, &moved, true);
    set_now(&h, 12 * SECOND);
    g_assert_true(moat_session_tick(h.session, 12 * SECOND));
    g_assert_true(h.session->consent_withheld);
    g_assert_cmpuint(gateway_sends(&h, 1), ==, 0);
    session_harness_send_check(&h, peer, &h.path, true);
    g_assert_false(h.session->consent_withheld);
    g_assert_cmpuint(gateway_sends(&h, 2), ==, 1);
    moat_ice_client_free(peer);
    session_harness_clear(&h);
}

/* No pair has consent: the session ends, whatever was pending. Without
 * a pending pair, the old rule: the selected pair's consent is all. */
static void test_without_any_pairs_consent_the_session_ends(void)
{
    session_harness h;
    moat_path moved;
    moat_ice_client *peer = connect_and_move(&h, &moved);
    /* The pending pair's check was at 2 s, the selected pair's at 1 s. */
    g_assert_true(moat_session_tick(h.session, 11 * SECOND));
    g_assert_true(moat_session_tick(h.session, 12 * SECOND));
    g_assert_false(moat_session_tick(h.session, 12 * SECOND + 1));
    moat_ice_client_free(peer);
    session_harness_clear(&h);

    session_harness_init(&h);
    set_now(&h, SECOND);
    session_harness_create(&h, NULL);
    session_harness_key(&h);
    h.session->consent_timeout_us = TIMEOUT;
    g_assert_true(moat_session_tick(h.session, 11 * SECOND));
    g_assert_false(moat_session_tick(h.session, 11 * SECOND + 1));
    g_assert_false(h.session->consent_withheld);
    session_harness_clear(&h);
}

static uint64_t consent_expired(session_harness *h)
{
    return moat_counter_read(&moat_worker_counters(h->worker)->consent_expired);
}

/* A consent expiry ends the session at once (no drain towards a peer
 * without consent: moat_session_end sees it ending), and is judged and
 * counted once however often the session is ticked before it is gone. */
static void test_consent_expiry_is_final_and_counted_once(void)
{
    session_harness h;
    session_harness_init(&h);
    set_now(&h, SECOND);
    session_harness_create(&h, NULL);
    session_harness_key(&h);
    h.session->consent_timeout_us = TIMEOUT;
    g_assert_false(moat_session_tick(h.session, 12 * SECOND));
    g_assert_cmpstr(moat_session_end_reason(h.session), ==, "consent expired");
    g_assert_true(h.session->ending);
    g_assert_false(moat_session_tick(h.session, 12 * SECOND + 100000));
    g_assert_cmpuint(consent_expired(&h), ==, 1);
    moat_session_end(h.session, moat_session_end_reason(h.session));
    g_assert_cmpstr(session_harness_last_end(), ==, "consent expired");
    session_harness_clear(&h);
}

static uint64_t pairs_expired(session_harness *h)
{
    return moat_counter_read(&moat_worker_counters(h->worker)->ice_pairs_expired);
}

/* The peer's authenticated SRTCP report from `from`. */
static void peer_report_from(session_harness *h, const moat_path *from)
{
    uint8_t plain[64], report[128];
    moat_rtcp_writer w;
    moat_rtcp_writer_init(&w, plain, sizeof plain);
    g_assert_cmpint(moat_rtcp_build_rr(&w, HARNESS_REMOTE_SSRC, NULL, 0), ==, 0);
    size_t length = session_harness_peer_protect_rtcp(h, plain, w.length, report, sizeof report);
    moat_session_handle_srtp(h->session, from, report, length, sizeof report);
}

/* Another session on h's worker whose peer is at `at` (the NAT gave a new
 * client the mapping h's peer left): whether its nominating check from
 * there is taken (not dropped as ice_pair) and selects that tuple. */
static bool new_client_connects(session_harness *h, const moat_path *at)
{
    session_harness other;
    session_harness_init_on(&other, h->worker);
    g_strlcpy(other.id, "other", sizeof other.id);
    g_strlcpy(other.local_ufrag, "otherufrag", sizeof other.local_ufrag);
    session_harness_create(&other, NULL);
    other.session->consent_timeout_us = TIMEOUT;
    moat_ice_client *peer = session_harness_ice_peer(other.local_ufrag, HARNESS_GATEWAY_PWD);
    uint64_t refused = session_harness_dropped(h, MOAT_DROP_ICE_PAIR);
    session_harness_send_check(&other, peer, at, true);
    bool connected = session_harness_dropped(h, MOAT_DROP_ICE_PAIR) == refused &&
                     selected_is(&other, at) &&
                     moat_worker_session_by_tuple(h->worker, &at->remote) == other.session;
    moat_ice_client_free(peer);
    session_harness_clear(&other);
    return connected;
}

/* The peer moved (NAT rebinding) and its media confirmed the move: its old
 * tuple stays the session's one consent timeout after its last check there,
 * then the pair expires and the tuple is unbound (counted), while the
 * session goes on at its new tuple; a new client the NAT gives the old
 * mapping connects from it. Before, the old tuple stayed the session's as
 * long as the session lived, and that client's checks were `ice_pair`
 * drops. */
static void test_a_moved_peers_old_tuple_is_released_after_the_timeout(void)
{
    session_harness h;
    moat_path moved;
    moat_ice_client *peer = connect_and_move(&h, &moved);
    set_now(&h, 3 * SECOND);
    peer_report_from(&h, &moved);
    g_assert_true(selected_is(&h, &moved));
    uint64_t now = 3 * SECOND;
    /* The old pair's last check was at 1 s: it is the session's until 11 s. */
    while (now < 11 * SECOND) {
        set_now(&h, now += SECOND);
        session_harness_send_check(&h, peer, &moved, false);
        g_assert_true(moat_session_tick(h.session, now));
        g_assert_true(moat_worker_session_by_tuple(h.worker, &h.path.remote) == h.session);
    }
    set_now(&h, now += SECOND);
    session_harness_send_check(&h, peer, &moved, false);
    g_assert_true(moat_session_tick(h.session, now));
    g_assert_null(moat_worker_session_by_tuple(h.worker, &h.path.remote));
    g_assert_true(moat_worker_session_by_tuple(h.worker, &moved.remote) == h.session);
    g_assert_false(moat_ice_pairs_has_remote(&h.session->pairs, &h.path.remote));
    g_assert_true(selected_is(&h, &moved));
    g_assert_cmpuint(pairs_expired(&h), ==, 1);
    g_assert_true(new_client_connects(&h, &h.path));
    /* The moved session still has its pair and consent. */
    set_now(&h, now += SECOND);
    session_harness_send_check(&h, peer, &moved, false);
    g_assert_true(moat_session_tick(h.session, now));
    g_assert_true(selected_is(&h, &moved));
    moat_ice_client_free(peer);
    session_harness_clear(&h);
}

/* An ICE restart from a new network: the old tuple keeps the media (and
 * stays bound) until the move to the new generation's pair is confirmed by
 * its media; then the old generation's pairs go at once, and their tuple
 * with them (the old credentials answer no more, so nothing checks there
 * again). */
static void test_a_completed_restart_releases_the_old_tuple(void)
{
    session_harness h;
    session_harness_init(&h);
    set_now(&h, SECOND);
    session_harness_create(&h, NULL);
    session_harness_key(&h);
    h.session->consent_timeout_us = TIMEOUT;
    moat_ice_client *peer = session_harness_ice_peer(GW_UFRAG, GW_PWD);
    session_harness_send_check(&h, peer, &h.path, true);
    g_assert_true(selected_is(&h, &h.path));
    moat_ice_client_free(peer);

    moat_session_restart_ice(h.session, "restartufrag", "restartpasswordrestartpa", "peerufrag",
                             "peerpasswordpeerpassword");
    peer = session_harness_ice_peer("restartufrag", "restartpasswordrestartpa");
    moat_path moved = h.path;
    moved.remote.sin6_addr.s6_addr[15] = 66;
    set_now(&h, 2 * SECOND);
    session_harness_send_check(&h, peer, &moved, true);
    g_assert_cmpint(h.session->pairs.pending, >=, 0); /* waits for media from there */
    g_assert_true(moat_worker_session_by_tuple(h.worker, &h.path.remote) == h.session);
    set_now(&h, 3 * SECOND);
    peer_report_from(&h, &moved);
    g_assert_true(selected_is(&h, &moved));
    g_assert_null(moat_worker_session_by_tuple(h.worker, &h.path.remote));
    g_assert_cmpuint(pairs_expired(&h), ==, 1);
    g_assert_true(new_client_connects(&h, &h.path));
    g_assert_true(moat_session_tick(h.session, 3 * SECOND));
    moat_ice_client_free(peer);
    session_harness_clear(&h);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session/consent/moved-peer-keeps-session-not-old-media",
                    test_a_moved_peer_keeps_its_session_not_the_old_tuples_media);
    g_test_add_func("/session/consent/pending-pair-holds-one-timeout-at-most",
                    test_a_pending_pair_holds_the_session_one_timeout_at_most);
    g_test_add_func("/session/consent/old-pair-check-resumes-sending",
                    test_a_check_on_the_old_pair_resumes_sending);
    g_test_add_func("/session/consent/no-pair-with-consent-ends",
                    test_without_any_pairs_consent_the_session_ends);
    g_test_add_func("/session/consent/expiry-final-counted-once",
                    test_consent_expiry_is_final_and_counted_once);
    g_test_add_func("/session/consent/moved-peers-old-tuple-released",
                    test_a_moved_peers_old_tuple_is_released_after_the_timeout);
    g_test_add_func("/session/consent/restart-releases-old-tuple",
                    test_a_completed_restart_releases_the_old_tuple);
    return g_test_run();
}
