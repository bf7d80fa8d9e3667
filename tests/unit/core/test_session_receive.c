/* The receive path of a worker and a session against hostile input: STUN
 * checks are refused by their MESSAGE-INTEGRITY before they spend any of
 * the session's check budgets (so forged ones starve neither the peer's
 * consent checks, nor a move, nor an ICE restart), a check from one of
 * Moat's own sockets is a loop that selects nothing, datagrams longer than
 * the receive buffer are dropped as truncated, a flood at one session whose
 * own detector enforces does not switch its whole worker's on (one at a
 * session whose detector is off still does), and a worker knows its own
 * thread from the first task it runs. */
#include "session_harness.h"

#include "session/session_internal.h"
#include "engine/worker_receive.h"
#include "ice/ice_client.h"

#include <arpa/inet.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define GW_UFRAG "gwufrag1"
#define GW_PWD   "gatewaypasswordgatewaypa"

static moat_path other_source(const session_harness *h, uint32_t n)
{
    moat_path path = h->path;
    path.remote.sin6_port = htons((uint16_t)(40000 + n % 20000));
    path.remote.sin6_addr.s6_addr[15] = (uint8_t)(2 + n / 20000);
    return path;
}

/* 20000 checks with a right ufrag and a wrong password, from many sources,
 * in one second: each is refused by its MESSAGE-INTEGRITY (one HMAC, keys
 * precomputed) and none by the session's budgets, which authenticated
 * checks keep for themselves. Meanwhile the peer's consent checks from its
 * checked pair and an ICE restart still work. */
static void test_stun_flood_is_refused_by_its_integrity(void)
{
    session_harness h;
    session_harness_init(&h);
    uint64_t now = 1000000;
    moat_worker_set_now_us(h.worker, now);
    session_harness_create(&h, NULL);
    moat_ice_client *peer = session_harness_ice_peer(GW_UFRAG, GW_PWD);
    moat_ice_client *forger = session_harness_ice_peer(GW_UFRAG, "wrongpasswordwrongpasswo");

    session_harness_send_check(&h, peer, &h.path, true);
    g_assert_true(h.session->has_selected);
    uint64_t auth_before = session_harness_dropped(&h, MOAT_DROP_STUN_AUTH);
    int flood = 20000;
    for (int i = 0; i < flood; i++) {
        moat_worker_set_now_us(h.worker, now += 50); /* 20000 checks per second */
        moat_path from = other_source(&h, (uint32_t)i);
        session_harness_send_check(&h, forger, &from, true);
        if (i % 5000 == 4999) {
            /* Consent freshness from the checked pair, mid-flood. */
            uint64_t before = h.session->last_consent_us;
            session_harness_send_check(&h, peer, &h.path, false);
            g_assert_cmpuint(h.session->last_consent_us, >, before);
        }
        session_harness_flush(&h);
    }
    uint64_t hmacs = session_harness_dropped(&h, MOAT_DROP_STUN_AUTH) - auth_before;
    uint64_t refused = session_harness_dropped(&h, MOAT_DROP_STUN_RATE);
    printf("# %d forged checks in 1 s: %" G_GUINT64_FORMAT
           " refused by their HMAC, %" G_GUINT64_FORMAT " by a budget\n",
           flood, hmacs, refused);
    g_assert_cmpuint(hmacs, ==, (uint64_t)flood);
    g_assert_cmpuint(refused, ==, 0);
    /* The forger's checks moved nothing. */
    g_assert_true(memcmp(&h.session->selected.remote, &h.path.remote, sizeof h.path.remote) == 0);

    /* ICE restart during the flood: the peer's first check with the new
     * credentials, from its checked pair, is answered. */
    moat_session_restart_ice(h.session, "gwufrag2", "gatewaypasswordnumbertwo", "peerufrag",
                             "peerpasswordpeerpassword");
    moat_ice_client *restarted = session_harness_ice_peer("gwufrag2", "gatewaypasswordnumbertwo");
    for (int i = 0; i < 1000; i++) {
        moat_worker_set_now_us(h.worker, now += 50);
        moat_path from = other_source(&h, (uint32_t)i);
        session_harness_send_check(&h, forger, &from, true);
    }
    uint64_t before = h.session->last_consent_us;
    session_harness_send_check(&h, restarted, &h.path, true);
    g_assert_cmpuint(h.session->last_consent_us, >, before);
    g_assert_cmpstr(h.session->previous_local_ufrag, ==, "");
    session_harness_flush(&h);
    session_harness_drain_peer(&h, NULL);

    moat_ice_client_free(peer);
    moat_ice_client_free(forger);
    moat_ice_client_free(restarted);
    session_harness_clear(&h);
}

/* A valid check from a port Moat holds on this host (a call leg steered at
 * the worker's port) is dropped as a loop before its ufrag is looked up: its
 * tuple never becomes the session's. From the same port once Moat let it
 * go, the check is answered. */
static void test_stun_check_from_an_own_socket_is_a_loop(void)
{
    session_harness h;
    session_harness_init(&h);
    moat_own_sockets *own = moat_own_sockets_new_with_hosts(NULL, 0);
    moat_worker_set_own_sockets(h.worker, own);
    session_harness_create(&h, NULL);
    moat_ice_client *peer = session_harness_ice_peer(GW_UFRAG, GW_PWD);
    uint16_t port = ntohs(h.path.remote.sin6_port);
    moat_own_sockets_hold(own, port);
    session_harness_send_check(&h, peer, &h.path, true);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_LOOP), ==, 1);
    g_assert_false(h.session->has_selected);
    moat_own_sockets_release(own, port);
    session_harness_send_check(&h, peer, &h.path, true);
    g_assert_true(h.session->has_selected);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_LOOP), ==, 1);
    session_harness_flush(&h);
    session_harness_drain_peer(&h, NULL);
    moat_ice_client_free(peer);
    session_harness_clear(&h);
    moat_own_sockets_free(own);
}

/* Forged checks (right USERNAME, wrong MESSAGE-INTEGRITY) from the peer's
 * own tuple and from the forger's own address, 20000 in one second: none
 * of them spends what the peer's authenticated checks need. Its consent
 * checks on the selected pair, a check from a new address (the peer moving)
 * and the first check after an ICE restart are all answered. */
static void test_forged_checks_from_the_peers_tuple_starve_nothing(void)
{
    session_harness h;
    session_harness_init(&h);
    uint64_t now = 1000000;
    moat_worker_set_now_us(h.worker, now);
    session_harness_create(&h, NULL);
    moat_ice_client *peer = session_harness_ice_peer(GW_UFRAG, GW_PWD);
    moat_ice_client *forger = session_harness_ice_peer(GW_UFRAG, "wrongpasswordwrongpasswo");
    session_harness_send_check(&h, peer, &h.path, true);
    g_assert_true(h.session->has_selected);
    moat_path own = other_source(&h, 1);
    uint64_t auth_before = session_harness_dropped(&h, MOAT_DROP_STUN_AUTH);
    int flood = 20000;
    for (int i = 0; i < flood; i++) {
        moat_worker_set_now_us(h.worker, now += 50);
        session_harness_send_check(&h, forger, i % 2 ? &own : &h.path, true);
        if (i % 4000 == 3999) {
            uint64_t before = h.session->last_consent_us;
            session_harness_send_check(&h, peer, &h.path, false);
            g_assert_cmpuint(h.session->last_consent_us, >, before);
        }
        session_harness_flush(&h);
    }
    /* The peer shows up at a new address mid-flood: its check makes a pair. */
    moat_path moved = other_source(&h, 2);
    session_harness_send_check(&h, peer, &moved, false);
    g_assert_true(moat_ice_pairs_has_remote(&h.session->pairs, &moved.remote));

    moat_session_restart_ice(h.session, "gwufrag2", "gatewaypasswordnumbertwo", "peerufrag",
                             "peerpasswordpeerpassword");
    moat_ice_client *restarted = session_harness_ice_peer("gwufrag2", "gatewaypasswordnumbertwo");
    moat_ice_client *forger2 = session_harness_ice_peer("gwufrag2", "wrongpasswordwrongpasswo");
    for (int i = 0; i < 2000; i++) {
        moat_worker_set_now_us(h.worker, now += 50);
        session_harness_send_check(&h, i % 2 ? forger2 : forger, i % 4 < 2 ? &own : &h.path, true);
    }
    uint64_t before = h.session->last_consent_us;
    session_harness_send_check(&h, restarted, &h.path, true);
    g_assert_cmpuint(h.session->last_consent_us, >, before);
    g_assert_cmpstr(h.session->previous_local_ufrag, ==, "");

    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_STUN_RATE), ==, 0);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_STUN_AUTH) - auth_before, ==,
                     (uint64_t)flood + 2000);
    g_assert_true(memcmp(&h.session->selected.remote, &h.path.remote, sizeof h.path.remote) == 0);
    session_harness_flush(&h);
    session_harness_drain_peer(&h, NULL);
    moat_ice_client_free(peer);
    moat_ice_client_free(forger);
    moat_ice_client_free(forger2);
    moat_ice_client_free(restarted);
    session_harness_clear(&h);
}

/* A datagram longer than the receive buffer is dropped as truncated rather
 * than handled as its first 1984 bytes. */
static void test_truncated_datagram_dropped(void)
{
    session_harness h;
    session_harness_init(&h);
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    int off = 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    g_assert_cmpint(moat_packet_info_enable(fd), ==, 0);
    struct sockaddr_in6 address = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    socklen_t length = sizeof address;
    g_assert_cmpint(bind(fd, (struct sockaddr *)&address, sizeof address), ==, 0);
    g_assert_cmpint(getsockname(fd, (struct sockaddr *)&address, &length), ==, 0);
    int sender = socket(AF_INET6, SOCK_DGRAM, 0);
    /* Larger than a receive buffer takes (MOAT_DATAGRAM_CAPACITY less 64). */
    static uint8_t big[MOAT_DATAGRAM_CAPACITY];
    memset(big, 0x80, sizeof big);
    g_assert_cmpint(sendto(sender, big, sizeof big, 0, (struct sockaddr *)&address, length), ==,
                    (ssize_t)sizeof big);
    g_assert_cmpint(sendto(sender, big, 100, 0, (struct sockaddr *)&address, length), ==, 100);
    g_usleep(10000);

    moat_receive_batch batch;
    moat_receive_batch_init(&batch);
    moat_worker_receive(h.worker, fd, &batch);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_TRUNCATED), ==, 1);
    /* The short one is what it is: SRTP from a tuple nobody checked. */
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_UNKNOWN_TUPLE), ==, 1);
    moat_receive_batch_clear(&batch);
    close(sender);
    close(fd);
    session_harness_clear(&h);
}

static uint64_t worker_switches(session_harness *h)
{
    return moat_counter_read(&moat_worker_counters(h->worker)->worker_detector_switches_on);
}

/* A keyed session whose peer's tuple is selected, its detector in `mode`. */
static void flooded_session(session_harness *h, moat_detector_mode mode)
{
    session_harness_init(h);
    h->settings.mode = mode; /* the worker's detector was set up (auto) already */
    session_harness_create_selected(h);
}

/* One peer floods its own session with forged SRTP, 20 000 datagrams/s for
 * 200 ms: its session's detector switches on (failures) within a few, and
 * from then on its datagrams are that detector's alone; the worker's
 * (floods spread over transports) neither counts them as ingress nor as
 * forgeries, so it stays off and the worker's other sessions pay nothing. */
static void test_one_session_flooded_switches_no_worker_on(void)
{
    session_harness h;
    flooded_session(&h, MOAT_DETECTOR_MODE_AUTO);
    uint64_t now = 1000000;
    for (uint16_t i = 0; i < 4000; i++)
        session_harness_dispatch_srtp(&h, (uint16_t)(i + 1), 40, now += 50, true);
    g_assert_true(moat_session_own_enforcing(h.session));
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_AUTH) +
                         session_harness_dropped(&h, MOAT_DROP_BUDGET),
                     >=, 3900);
    g_assert_false(moat_worker_enforcing(h.worker));
    g_assert_cmpuint(worker_switches(&h), ==, 0);
    session_harness_clear(&h);
}

/* The same rate at a transport whose own detector stays off (mode off: it
 * never enforces) reaches the worker's: a flood the transport does not
 * enforce against is still the worker's to see. */
static void test_calm_session_flooded_switches_its_worker_on(void)
{
    session_harness h;
    flooded_session(&h, MOAT_DETECTOR_MODE_OFF);
    uint64_t now = 1000000;
    for (uint16_t i = 0; i < 4000; i++)
        session_harness_dispatch_srtp(&h, (uint16_t)(i + 1), 40, now += 50, false);
    g_assert_false(moat_session_own_enforcing(h.session));
    g_assert_true(moat_worker_enforcing(h.worker));
    g_assert_cmpuint(worker_switches(&h), ==, 1);
    session_harness_clear(&h);
}

static void *plain_attach(moat_plugin_session *session, const moat_session_info *info,
                          const char **error)
{
    return GINT_TO_POINTER(1);
}

static const moat_plugin plain_plugin = {
    .api_version = MOAT_PLUGIN_API_VERSION,
    .name = "plain",
    .attach = plain_attach,
};

/* A plugin whose session is relayed to while its attach runs (a room's
 * fan-out rebuilt by the join inside attach, a publisher's worker relaying
 * at once): the packet reached on_relay with the state attach had not
 * returned yet (NULL). Nothing is delivered before the session starts on
 * its worker. */
static int relays_seen, relays_without_state;

static void *relaying_attach(moat_plugin_session *session, const moat_session_info *info,
                             const char **error)
{
    static const uint8_t packet[12] = {0x80, 96, 0, 1, 0, 0, 0, 1, 0, 0, 0, 7};
    moat_session_gateway_calls.relay_rtp(session, packet, sizeof packet);
    return GINT_TO_POINTER(1);
}

static void relaying_on_relay(void *state, moat_rtp_packet *packet)
{
    relays_seen++;
    relays_without_state += state == NULL;
}

static const moat_plugin relaying_plugin = {
    .api_version = MOAT_PLUGIN_API_VERSION,
    .name = "relaying",
    .attach = relaying_attach,
    .on_relay = relaying_on_relay,
};

static void test_nothing_is_relayed_to_a_session_before_it_starts(void)
{
    session_harness h;
    session_harness_init(&h);
    moat_worker_drive_from_caller(h.worker, true);
    moat_session_params params = {
        .id = "early",
        .worker = h.worker,
        .negotiation = &h.negotiation,
        .local_ufrag = "earlyufrag",
        .local_pwd = "gatewaypasswordgatewaypa",
        .plugin = &relaying_plugin,
        .consent_timeout_s = 30,
        .prefilter = &h.settings,
    };
    char error[256];
    moat_session *session = moat_session_new(&params, error, sizeof error);
    g_assert_nonnull(session);
    g_assert_cmpint(relays_without_state, ==, 0);
    g_assert_cmpint(relays_seen, ==, 0);
    moat_session_start(session);
    moat_session_end(session, "test");
    moat_worker_drive_from_caller(h.worker, false);
    session_harness_clear(&h);
}

/* 500 sessions created and timed out within a second (a WHIP POST flood
 * that never connects) log a bounded number of lines. */
static void test_session_churn_cannot_flood_the_log(void)
{
    session_harness h;
    session_harness_init(&h);
    moat_worker_set_now_us(h.worker, 1000000);
    char *path = NULL;
    int capture = g_file_open_tmp("moat-log-XXXXXX", &path, NULL);
    g_assert_cmpint(capture, >=, 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(capture, STDERR_FILENO);
    /* Sessions that never connected end at debug level: show every line the
     * limiters let through. */
    moat_log_level level = moat_log_get_level();
    moat_log_set_level(MOAT_LOG_DEBUG);
    for (int i = 0; i < 500; i++) {
        char id[32], ufrag[32];
        snprintf(id, sizeof id, "churn%d", i);
        snprintf(ufrag, sizeof ufrag, "churnufrag%d", i);
        moat_session_params params = {
            .id = id,
            .worker = h.worker,
            .negotiation = &h.negotiation,
            .local_ufrag = ufrag,
            .local_pwd = "gatewaypasswordgatewaypa",
            .plugin = &plain_plugin,
            .consent_timeout_s = 30,
            .prefilter = &h.settings,
        };
        char error[256];
        moat_session *session = moat_session_new(&params, error, sizeof error);
        g_assert_nonnull(session);
        moat_session_start(session);
        moat_session_end(session, "setup timeout");
    }
    fflush(stderr);
    moat_log_set_level(level);
    dup2(saved, STDERR_FILENO);
    close(saved);
    gchar *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    int lines = 0;
    for (const char *p = text; (p = strchr(p, '\n')); p++)
        lines++;
    printf("# 500 sessions ended in one second: %d log lines\n", lines);
    g_assert_cmpint(lines, <=, 220);
    g_assert_cmpint(lines, >, 0);
    g_free(text);
    close(capture);
    g_unlink(path);
    g_free(path);
    session_harness_clear(&h);
}

typedef struct {
    GMutex lock;
    GCond cond;
    int runs;
    bool current;
} current_probe;

static void probe_task(moat_worker *worker, void *data)
{
    current_probe *probe = data;
    g_mutex_lock(&probe->lock);
    probe->current = moat_worker_is_current(worker);
    probe->runs++;
    g_cond_broadcast(&probe->cond);
    g_mutex_unlock(&probe->lock);
}

/* A task posted before the worker starts runs as soon as the thread does:
 * it must see its worker as current (the owner used to be set by the
 * starting thread after pthread_create, racing with the first task). */
static void test_worker_knows_its_thread_from_the_first_task(void)
{
    for (int i = 0; i < 20; i++) {
        char error[256];
        moat_worker *worker = moat_worker_new(0, "127.0.0.1", 0, error, sizeof error);
        g_assert_nonnull(worker);
        current_probe probe = {0};
        g_mutex_init(&probe.lock);
        g_cond_init(&probe.cond);
        moat_worker_post(worker, probe_task, &probe, NULL);
        g_assert_false(moat_worker_is_current(worker));
        g_assert_cmpint(moat_worker_start(worker, error, sizeof error), ==, 0);
        g_mutex_lock(&probe.lock);
        while (probe.runs == 0)
            g_cond_wait(&probe.cond, &probe.lock);
        g_mutex_unlock(&probe.lock);
        g_assert_true(probe.current);
        g_assert_false(moat_worker_is_current(worker));
        moat_worker_free(worker);
        g_mutex_clear(&probe.lock);
        g_cond_clear(&probe.cond);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session/receive/stun-flood-refused-by-integrity",
                    test_stun_flood_is_refused_by_its_integrity);
    g_test_add_func("/session/receive/forged-checks-from-the-peers-tuple",
                    test_forged_checks_from_the_peers_tuple_starve_nothing);
    g_test_add_func("/session/receive/stun-from-own-socket-is-a-loop",
                    test_stun_check_from_an_own_socket_is_a_loop);
    g_test_add_func("/session/receive/truncated-datagram", test_truncated_datagram_dropped);
    g_test_add_func("/session/receive/one-session-flooded-switches-no-worker-on",
                    test_one_session_flooded_switches_no_worker_on);
    g_test_add_func("/session/receive/calm-session-flooded-switches-its-worker-on",
                    test_calm_session_flooded_switches_its_worker_on);
    g_test_add_func("/session/relay/not-before-start",
                    test_nothing_is_relayed_to_a_session_before_it_starts);
    g_test_add_func("/session/receive/churn-log-bounded", test_session_churn_cannot_flood_the_log);
    g_test_add_func("/worker/current-from-first-task",
                    test_worker_knows_its_thread_from_the_first_task);
    return g_test_run();
}
