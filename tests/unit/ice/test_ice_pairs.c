/* The ICE-lite pair table: which nominated pair is selected (RFC 8445
 * §7.3.1.5, §8.2), address migration, ICE restarts, replays, eviction,
 * which checks refresh consent, and which pairs expire. */
#include "ice/ice_candidates.h"
#include "ice/ice_pairs.h"

#include <arpa/inet.h>
#include <string.h>

#include <glib.h>

#define SECOND 1000000ull

static struct sockaddr_in6 remote(unsigned n)
{
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)(40000 + n))};
    inet_pton(AF_INET6, "::ffff:10.0.0.2", &a.sin6_addr);
    a.sin6_addr.s6_addr[15] = (uint8_t)n;
    return a;
}

static struct in6_addr local(unsigned n)
{
    struct in6_addr a;
    inet_pton(AF_INET6, "::ffff:10.1.0.1", &a);
    a.s6_addr[15] = (uint8_t)n;
    return a;
}

typedef struct {
    struct sockaddr_in6 remote;
    struct in6_addr local;
    uint8_t transaction[12];
    moat_ice_check_event event;
} check;

static unsigned next_transaction;

/* A fresh check from remote(r) to local(l); our candidate on local(l) has
 * local preference 65535 - l, so a lower l is a higher pair priority. */
static check *make(check *c, unsigned r, unsigned l, bool nominated, uint64_t now_us)
{
    memset(c, 0, sizeof *c);
    c->remote = remote(r);
    c->local = local(l);
    uint32_t n = ++next_transaction;
    memcpy(c->transaction, &n, sizeof n);
    c->event = (moat_ice_check_event){
        .remote = &c->remote,
        .local = &c->local,
        .remote_priority = (110u << 24) | (65535u << 8) | 255u,
        .local_priority = moat_ice_host_priority(65535 - l, 1),
        .nominated = nominated,
        .transaction = c->transaction,
        .now_us = now_us,
    };
    return c;
}

static moat_ice_pairs_outcome accepted(moat_ice_pairs *p, check *c)
{
    moat_ice_pairs_outcome out;
    g_assert_cmpint(moat_ice_pairs_on_check(p, &c->event, &out), ==, MOAT_ICE_PAIRS_ACCEPTED);
    return out;
}

static bool selected_is(const moat_ice_pairs *p, unsigned r, unsigned l)
{
    const moat_ice_pair *s = moat_ice_pairs_selected(p);
    struct sockaddr_in6 want_remote = remote(r);
    struct in6_addr want_local = local(l);
    return s != NULL && memcmp(&s->remote.sin6_addr, &want_remote.sin6_addr, 16) == 0 &&
           s->remote.sin6_port == want_remote.sin6_port &&
           memcmp(&s->local, &want_local, sizeof want_local) == 0;
}

static void test_pair_priority(void)
{
    /* RFC 8445 §6.1.2.3: 2^32*MIN(G,D) + 2*MAX(G,D) + (G>D?1:0). */
    g_assert_cmpuint(moat_ice_pair_priority(10, 20), ==, (10ull << 32) + 40);
    g_assert_cmpuint(moat_ice_pair_priority(20, 10), ==, (10ull << 32) + 41);
}

static void test_first_check_is_provisional(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    moat_ice_pairs_outcome out = accepted(&p, make(&c, 1, 2, false, 0));
    g_assert_true(out.bind && out.selection_changed && out.refreshes_consent);
    g_assert_true(selected_is(&p, 1, 2));
    /* Another unnominated pair does not move it, nor refresh consent. */
    out = accepted(&p, make(&c, 2, 1, false, 1));
    g_assert_true(out.bind);
    g_assert_false(out.selection_changed || out.refreshes_consent);
    g_assert_true(selected_is(&p, 1, 2));
    /* A nomination does, even of a lower-priority pair. */
    out = accepted(&p, make(&c, 3, 3, true, 2));
    g_assert_true(out.selection_changed && out.refreshes_consent);
    g_assert_true(selected_is(&p, 3, 3));
}

/* The multi-homed bug: three pairs nominated (aggressive nomination), the
 * last one must not win just for being last. */
static void test_highest_priority_nominated_pair_wins(void)
{
    static const unsigned orders[][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1}};
    for (size_t o = 0; o < G_N_ELEMENTS(orders); o++) {
        moat_ice_pairs p;
        moat_ice_pairs_init(&p);
        check c;
        for (unsigned i = 0; i < 3; i++)
            accepted(&p, make(&c, orders[o][i] + 1, orders[o][i], true, i));
        g_assert_true(selected_is(&p, 1, 0));
    }
}

static void test_lower_priority_waits_for_the_selected_pair_to_go_quiet(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    accepted(&p, make(&c, 1, 0, true, 0));
    /* The peer keeps checking its selected pair... */
    for (uint64_t t = 1; t < 20; t++) {
        moat_ice_pairs_outcome out = accepted(&p, make(&c, 1, 0, true, t * SECOND));
        g_assert_true(out.refreshes_consent);
        out = accepted(&p, make(&c, 2, 5, true, t * SECOND + 1));
        g_assert_false(out.selection_changed || out.refreshes_consent);
        g_assert_true(selected_is(&p, 1, 0));
    }
    /* ...then stops (it left that network): the lower pair takes over. */
    uint64_t quiet = 19 * SECOND + MOAT_ICE_PAIR_STALE_US + 1;
    moat_ice_pairs_outcome out = accepted(&p, make(&c, 2, 5, true, quiet));
    g_assert_true(out.selection_changed && out.refreshes_consent);
    g_assert_true(selected_is(&p, 2, 5));
    /* Staleness is not a licence for unnominated checks. */
    moat_ice_pairs_init(&p);
    accepted(&p, make(&c, 1, 0, true, 0));
    out = accepted(&p, make(&c, 2, 5, false, 100 * SECOND));
    g_assert_false(out.selection_changed);
}

/* NAT rebinding or a handover that keeps the candidate's priority: the same
 * pair priority from a new tuple moves media at once. */
static void test_migration_at_equal_priority(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    accepted(&p, make(&c, 1, 0, true, 0));
    accepted(&p, make(&c, 1, 0, false, SECOND)); /* consent, unnominated */
    moat_ice_pairs_outcome out = accepted(&p, make(&c, 7, 0, true, SECOND + 10));
    g_assert_true(out.bind && out.selection_changed && out.refreshes_consent);
    g_assert_true(selected_is(&p, 7, 0));
    /* The old tuple checking again (a late retransmission) does not move it back
     * unless it is nominated again at that priority. */
    out = accepted(&p, make(&c, 1, 0, false, SECOND + 20));
    g_assert_false(out.selection_changed || out.refreshes_consent);
    g_assert_true(selected_is(&p, 7, 0));
}

/* Once the transport is up, a nomination from another remote (a replayed
 * capture as much as a real move) waits for media from there; media and
 * consent stay on the selected pair meanwhile. */
static void test_a_move_waits_for_media_from_the_new_remote(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    accepted(&p, make(&c, 1, 0, true, 0));
    make(&c, 7, 0, true, SECOND);
    c.event.confirm_by_media = true;
    moat_ice_pairs_outcome out = accepted(&p, &c);
    g_assert_true(out.bind && out.selection_pending);
    g_assert_false(out.selection_changed || out.refreshes_consent);
    g_assert_true(selected_is(&p, 1, 0));
    /* The selected pair's consent checks still count. */
    make(&c, 1, 0, false, SECOND + 10);
    c.event.confirm_by_media = true;
    g_assert_true(accepted(&p, &c).refreshes_consent);
    /* Media from anywhere else confirms nothing. */
    struct sockaddr_in6 r1 = remote(1), r7 = remote(7);
    struct in6_addr l0 = local(0), l1 = local(1);
    g_assert_false(moat_ice_pairs_confirm(&p, &r1, &l0));
    g_assert_false(moat_ice_pairs_confirm(&p, &r7, &l1));
    g_assert_true(selected_is(&p, 1, 0));
    /* Its own media moves it, once. */
    g_assert_true(moat_ice_pairs_confirm(&p, &r7, &l0));
    g_assert_true(selected_is(&p, 7, 0));
    g_assert_false(moat_ice_pairs_confirm(&p, &r7, &l0));
    /* Before the transport is up nothing waits. */
    moat_ice_pairs_init(&p);
    accepted(&p, make(&c, 1, 0, true, 0));
    out = accepted(&p, make(&c, 7, 0, true, SECOND));
    g_assert_true(out.selection_changed && !out.selection_pending);
    g_assert_true(selected_is(&p, 7, 0));
}

/* Consent is per pair: a new check on the pending pair refreshes that
 * pair's consent (which keeps the session, never the media), a
 * retransmission of one does not, and a move counts as pending once. */
static void test_the_pending_pairs_checks_refresh_its_own_consent(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    accepted(&p, make(&c, 1, 0, true, 0));
    make(&c, 7, 0, true, SECOND);
    c.event.confirm_by_media = true;
    moat_ice_pairs_outcome out = accepted(&p, &c);
    g_assert_true(out.selection_pending && out.refreshes_pending);
    g_assert_false(out.refreshes_consent || out.selection_changed);
    /* The same check again (a retransmission: same id, same source). */
    out = accepted(&p, &c);
    g_assert_false(out.refreshes_pending || out.selection_pending || out.refreshes_consent);
    /* The peer's next consent check, nominating again: the same move. */
    make(&c, 7, 0, true, 2 * SECOND);
    c.event.confirm_by_media = true;
    out = accepted(&p, &c);
    g_assert_true(out.refreshes_pending);
    g_assert_false(out.selection_pending || out.selection_changed || out.refreshes_consent);
    /* Unnominated checks on it count too. */
    make(&c, 7, 0, false, 3 * SECOND);
    c.event.confirm_by_media = true;
    g_assert_true(accepted(&p, &c).refreshes_pending);
    g_assert_true(selected_is(&p, 1, 0));
    /* The selected pair's checks refresh its own consent, not the pending one's. */
    make(&c, 1, 0, false, 4 * SECOND);
    c.event.confirm_by_media = true;
    out = accepted(&p, &c);
    g_assert_true(out.refreshes_consent && !out.refreshes_pending);
    /* A third tuple that is neither refreshes nothing. */
    make(&c, 9, 0, false, 5 * SECOND);
    c.event.confirm_by_media = true;
    out = accepted(&p, &c);
    g_assert_false(out.refreshes_consent || out.refreshes_pending);
    /* Once confirmed, its checks are the selected pair's. */
    struct sockaddr_in6 r7 = remote(7);
    struct in6_addr l0 = local(0);
    g_assert_true(moat_ice_pairs_confirm(&p, &r7, &l0));
    make(&c, 7, 0, false, 6 * SECOND);
    c.event.confirm_by_media = true;
    out = accepted(&p, &c);
    g_assert_true(out.refreshes_consent && !out.refreshes_pending);
}

/* A pending move is forgotten by an ICE restart, and by its pair's eviction. */
static void test_a_pending_move_ends_with_a_restart(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    accepted(&p, make(&c, 1, 0, true, 0));
    make(&c, 7, 0, true, SECOND);
    c.event.confirm_by_media = true;
    g_assert_true(accepted(&p, &c).selection_pending);
    moat_ice_pairs_restart(&p);
    struct sockaddr_in6 r7 = remote(7);
    struct in6_addr l0 = local(0);
    g_assert_false(moat_ice_pairs_confirm(&p, &r7, &l0));
    g_assert_true(selected_is(&p, 1, 0));
    /* Pending again, then pushed out by checks from eight other tuples. */
    make(&c, 7, 0, true, 2 * SECOND);
    c.event.confirm_by_media = true;
    g_assert_true(accepted(&p, &c).selection_pending);
    for (unsigned r = 10; r < 10 + MOAT_ICE_PAIRS_MAX; r++)
        accepted(&p, make(&c, r, 0, false, 3 * SECOND + r));
    g_assert_false(moat_ice_pairs_confirm(&p, &r7, &l0));
    g_assert_true(selected_is(&p, 1, 0));
}

static void test_restart_is_a_new_ice_session(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    accepted(&p, make(&c, 1, 0, true, 0));
    moat_ice_pairs_restart(&p);
    /* Consent on the old pair with the old credentials continues. */
    make(&c, 1, 0, true, SECOND);
    c.event.previous_generation = true;
    g_assert_true(accepted(&p, &c).refreshes_consent);
    /* The first nomination with the new credentials wins, whatever its priority. */
    moat_ice_pairs_outcome out = accepted(&p, make(&c, 2, 5, true, SECOND + 1));
    g_assert_true(out.selection_changed);
    g_assert_true(selected_is(&p, 2, 5));
    /* A nomination left over from the old generation cannot take it back. */
    make(&c, 1, 0, true, SECOND + 2);
    c.event.previous_generation = true;
    g_assert_false(accepted(&p, &c).selection_changed);
    g_assert_true(selected_is(&p, 2, 5));
}

static void test_replay_from_another_tuple_is_refused(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    accepted(&p, make(&c, 1, 0, true, 0));
    /* A retransmission (same id, same source) is fine. */
    c.event.now_us = 1;
    g_assert_true(accepted(&p, &c).refreshes_consent);
    /* The captured check re-sent from a forged source is not. */
    c.remote = remote(9);
    moat_ice_pairs_outcome out;
    g_assert_true(moat_ice_pairs_is_replay(&p, &c.event));
    g_assert_cmpint(moat_ice_pairs_on_check(&p, &c.event, &out), ==, MOAT_ICE_PAIRS_REPLAY);
    g_assert_false(out.bind || out.selection_changed || out.refreshes_consent);
    g_assert_true(selected_is(&p, 1, 0));
    g_assert_false(moat_ice_pairs_has_remote(&p, &c.remote));
}

static void test_eviction_spares_the_selected_pair(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    accepted(&p, make(&c, 100, 0, true, 0)); /* selected, and the oldest */
    for (unsigned i = 1; i < 40; i++) {
        moat_ice_pairs_outcome out = accepted(&p, make(&c, i, 1, false, i));
        g_assert_true(out.bind);
        g_assert_cmpuint(p.n_pairs, <=, MOAT_ICE_PAIRS_MAX);
        if (i >= MOAT_ICE_PAIRS_MAX) {
            g_assert_true(out.unbind);
            struct sockaddr_in6 gone = remote(i - MOAT_ICE_PAIRS_MAX + 1);
            g_assert_true(memcmp(&out.evicted, &gone, sizeof gone) == 0);
        }
        g_assert_true(selected_is(&p, 100, 0));
    }
}

static void test_shared_remote_is_unbound_with_its_last_pair(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    accepted(&p, make(&c, 1, 0, true, 0));
    /* remote(2) reaches two of our addresses: two pairs, one binding. */
    g_assert_true(accepted(&p, make(&c, 2, 1, false, 1)).bind);
    g_assert_false(accepted(&p, make(&c, 2, 2, false, 2)).bind);
    unsigned unbinds = 0;
    for (unsigned i = 3; i < 3 + MOAT_ICE_PAIRS_MAX; i++) {
        moat_ice_pairs_outcome out = accepted(&p, make(&c, 10 + i, 1, false, i));
        struct sockaddr_in6 two = remote(2);
        if (out.unbind && memcmp(&out.evicted, &two, sizeof two) == 0)
            unbinds++;
    }
    g_assert_cmpuint(unbinds, ==, 1);
}

/* Another owner takes an address (a cascade link's, session_cascade.c):
 * every pair on it goes, the others keep their roles, and a selected pair
 * among them leaves nothing selected until the next nomination. */
static void test_forgetting_an_address(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    accepted(&p, make(&c, 1, 0, true, 0));
    accepted(&p, make(&c, 2, 1, false, 1));
    accepted(&p, make(&c, 2, 2, false, 2));
    make(&c, 3, 0, true, 3); /* the peer moved: same candidate, new mapping */
    c.event.confirm_by_media = true;
    g_assert_true(accepted(&p, &c).selection_pending);
    g_assert_cmpuint(p.n_pairs, ==, 4);

    struct sockaddr_in6 two = remote(2), three = remote(3);
    g_assert_false(moat_ice_pairs_forget(&p, &two)); /* not the selected one */
    g_assert_cmpuint(p.n_pairs, ==, 2);
    g_assert_false(moat_ice_pairs_has_remote(&p, &two));
    g_assert_true(selected_is(&p, 1, 0));
    /* The pending move survived the compaction: its media still confirms it. */
    struct in6_addr zero = local(0);
    g_assert_true(moat_ice_pairs_confirm(&p, &three, &zero));
    g_assert_true(selected_is(&p, 3, 0));

    g_assert_true(moat_ice_pairs_forget(&p, &three)); /* the selected one */
    g_assert_null(moat_ice_pairs_selected(&p));
    g_assert_cmpint(p.pending, ==, -1);
    g_assert_cmpuint(p.n_pairs, ==, 1);
    g_assert_false(moat_ice_pairs_forget(&p, &three)); /* nothing left there */
    /* The peer's next nomination selects again. */
    g_assert_true(accepted(&p, make(&c, 1, 0, true, 4)).selection_changed);
    g_assert_true(selected_is(&p, 1, 0));
}

static bool remote_listed(const struct sockaddr_in6 *list, size_t n, unsigned r)
{
    struct sockaddr_in6 want = remote(r);
    for (size_t i = 0; i < n; i++) {
        if (list[i].sin6_port == want.sin6_port &&
            memcmp(&list[i].sin6_addr, &want.sin6_addr, sizeof want.sin6_addr) == 0)
            return true;
    }
    return false;
}

/* The peer moved (NAT rebinding: same candidate, new mapping) and checks
 * from its new tuple only: its old pair goes one idle timeout after its
 * last check, and its tuple with it (before, it stayed the session's while
 * the session lived, and a client given that mapping could not connect).
 * The selected and pending pairs never expire; a remote another kept pair
 * uses stays bound; authenticated media keeps a pair as a check does. */
static void test_pairs_the_peer_left_expire(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    struct sockaddr_in6 unbind[MOAT_ICE_PAIRS_MAX];
    size_t removed;
    accepted(&p, make(&c, 1, 0, true, 0));
    accepted(&p, make(&c, 2, 1, false, SECOND)); /* remote(2) on two of our addresses */
    accepted(&p, make(&c, 2, 2, false, SECOND));
    accepted(&p, make(&c, 3, 1, false, SECOND));
    g_assert_true(accepted(&p, make(&c, 4, 0, true, 2 * SECOND)).selection_changed);
    g_assert_cmpuint(p.n_pairs, ==, 5);
    /* Media from remote(3) keeps its pair. */
    struct sockaddr_in6 three = remote(3);
    struct in6_addr l1 = local(1);
    moat_ice_pairs_note_media(&p, &three, &l1, 20 * SECOND);
    /* Nothing is idle for more than 10 s yet. */
    g_assert_cmpuint(moat_ice_pairs_expire(&p, 10 * SECOND, 10 * SECOND, unbind, &removed), ==, 0);
    g_assert_cmpuint(removed, ==, 0);
    /* remote(1) (the old selected pair, checked at 0) and remote(2)'s two
     * pairs (1 s) are idle at 11.5 s; remote(3) had media at 20 s, remote(4)
     * is the selected pair (checked at 2 s). */
    size_t n = moat_ice_pairs_expire(&p, 11 * SECOND + SECOND / 2, 10 * SECOND, unbind, &removed);
    g_assert_cmpuint(removed, ==, 3);
    g_assert_cmpuint(n, ==, 2); /* remote(2) once */
    g_assert_true(remote_listed(unbind, n, 1) && remote_listed(unbind, n, 2));
    g_assert_cmpuint(p.n_pairs, ==, 2);
    g_assert_true(selected_is(&p, 4, 0));
    struct sockaddr_in6 one = remote(1), two = remote(2);
    g_assert_false(moat_ice_pairs_has_remote(&p, &one) || moat_ice_pairs_has_remote(&p, &two));
    g_assert_true(moat_ice_pairs_has_remote(&p, &three));
    /* The selected pair never expires, however quiet (its consent is the
     * session's, session_ice.c); the other goes at 30 s + the timeout. */
    n = moat_ice_pairs_expire(&p, 31 * SECOND, 10 * SECOND, unbind, &removed);
    g_assert_cmpuint(n, ==, 1);
    g_assert_true(remote_listed(unbind, n, 3));
    g_assert_cmpuint(p.n_pairs, ==, 1);
    g_assert_true(selected_is(&p, 4, 0));
    g_assert_cmpuint(moat_ice_pairs_expire(&p, 600 * SECOND, 10 * SECOND, unbind, NULL), ==, 0);
    g_assert_true(selected_is(&p, 4, 0));
    /* An expired tuple that checks again is a new pair: bound again. */
    g_assert_true(accepted(&p, make(&c, 1, 0, false, 601 * SECOND)).bind);
}

/* A remote shared by an expired pair and a kept one (the peer's same
 * tuple reaching two of our addresses, one of them still checked) stays
 * bound. */
static void test_a_remote_still_in_use_is_not_unbound(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    struct sockaddr_in6 unbind[MOAT_ICE_PAIRS_MAX];
    size_t removed;
    accepted(&p, make(&c, 1, 0, true, 0));
    accepted(&p, make(&c, 2, 1, false, 0));
    accepted(&p, make(&c, 2, 2, false, 8 * SECOND));
    accepted(&p, make(&c, 1, 0, false, 8 * SECOND)); /* the selected pair's consent */
    g_assert_cmpuint(moat_ice_pairs_expire(&p, 11 * SECOND, 10 * SECOND, unbind, &removed), ==, 0);
    g_assert_cmpuint(removed, ==, 1);
    struct sockaddr_in6 two = remote(2);
    g_assert_true(moat_ice_pairs_has_remote(&p, &two));
    g_assert_cmpuint(p.n_pairs, ==, 2);
}

/* The pending pair (a move waiting for its media) keeps its role through
 * the compaction and never expires; the pair it would replace is the
 * selected one and stays too. */
static void test_the_pending_pair_survives_expiry(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    struct sockaddr_in6 unbind[MOAT_ICE_PAIRS_MAX];
    accepted(&p, make(&c, 1, 0, true, 0));
    accepted(&p, make(&c, 2, 1, false, 0)); /* idle, goes */
    make(&c, 3, 0, true, SECOND);
    c.event.confirm_by_media = true;
    g_assert_true(accepted(&p, &c).selection_pending);
    size_t n = moat_ice_pairs_expire(&p, 100 * SECOND, 10 * SECOND, unbind, NULL);
    g_assert_cmpuint(n, ==, 1);
    g_assert_true(remote_listed(unbind, n, 2));
    g_assert_cmpuint(p.n_pairs, ==, 2);
    g_assert_true(selected_is(&p, 1, 0));
    struct sockaddr_in6 three = remote(3);
    struct in6_addr zero = local(0);
    g_assert_true(moat_ice_pairs_confirm(&p, &three, &zero));
    g_assert_true(selected_is(&p, 3, 0));
    /* Now the old selected pair is an ordinary idle one. */
    n = moat_ice_pairs_expire(&p, 100 * SECOND, 10 * SECOND, unbind, NULL);
    g_assert_cmpuint(n, ==, 1);
    g_assert_true(remote_listed(unbind, n, 1));
    g_assert_true(selected_is(&p, 3, 0));
}

/* An ICE restart from a new network: the old generation's pairs stay
 * while one of them is selected (the old credentials still answer), and go
 * at once, idle or not, when the new generation has the selection. */
static void test_a_completed_restart_drops_the_old_generation(void)
{
    moat_ice_pairs p;
    moat_ice_pairs_init(&p);
    check c;
    struct sockaddr_in6 unbind[MOAT_ICE_PAIRS_MAX];
    size_t removed;
    accepted(&p, make(&c, 1, 0, true, 0));
    accepted(&p, make(&c, 2, 1, false, 0));
    moat_ice_pairs_restart(&p);
    /* Consent on the old pair with the old credentials meanwhile. */
    make(&c, 1, 0, false, SECOND);
    c.event.previous_generation = true;
    accepted(&p, &c);
    g_assert_cmpuint(moat_ice_pairs_expire(&p, SECOND, 10 * SECOND, unbind, &removed), ==, 0);
    g_assert_cmpuint(removed, ==, 0);
    /* The peer's first nomination with the new credentials, from B. */
    g_assert_true(accepted(&p, make(&c, 5, 0, true, 2 * SECOND)).selection_changed);
    size_t n = moat_ice_pairs_expire(&p, 2 * SECOND, 10 * SECOND, unbind, &removed);
    g_assert_cmpuint(removed, ==, 2);
    g_assert_cmpuint(n, ==, 2);
    g_assert_true(remote_listed(unbind, n, 1) && remote_listed(unbind, n, 2));
    g_assert_cmpuint(p.n_pairs, ==, 1);
    g_assert_true(selected_is(&p, 5, 0));

    /* A peer that restarted without moving checks its old tuple with the
     * new credentials: that pair is of the new generation and stays. */
    moat_ice_pairs_init(&p);
    accepted(&p, make(&c, 1, 0, true, 0));
    accepted(&p, make(&c, 2, 1, false, 0));
    moat_ice_pairs_restart(&p);
    g_assert_false(accepted(&p, make(&c, 1, 0, true, SECOND)).selection_changed);
    n = moat_ice_pairs_expire(&p, SECOND, 10 * SECOND, unbind, &removed);
    g_assert_cmpuint(n, ==, 1);
    g_assert_true(remote_listed(unbind, n, 2));
    g_assert_true(selected_is(&p, 1, 0));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ice/pairs/priority", test_pair_priority);
    g_test_add_func("/ice/pairs/first-check-is-provisional", test_first_check_is_provisional);
    g_test_add_func("/ice/pairs/highest-priority-nominated-wins",
                    test_highest_priority_nominated_pair_wins);
    g_test_add_func("/ice/pairs/lower-priority-waits",
                    test_lower_priority_waits_for_the_selected_pair_to_go_quiet);
    g_test_add_func("/ice/pairs/migration-equal-priority", test_migration_at_equal_priority);
    g_test_add_func("/ice/pairs/restart", test_restart_is_a_new_ice_session);
    g_test_add_func("/ice/pairs/move-waits-for-media",
                    test_a_move_waits_for_media_from_the_new_remote);
    g_test_add_func("/ice/pairs/pending-pair-consent",
                    test_the_pending_pairs_checks_refresh_its_own_consent);
    g_test_add_func("/ice/pairs/pending-move-forgotten", test_a_pending_move_ends_with_a_restart);
    g_test_add_func("/ice/pairs/replay", test_replay_from_another_tuple_is_refused);
    g_test_add_func("/ice/pairs/eviction", test_eviction_spares_the_selected_pair);
    g_test_add_func("/ice/pairs/shared-remote", test_shared_remote_is_unbound_with_its_last_pair);
    g_test_add_func("/ice/pairs/forget", test_forgetting_an_address);
    g_test_add_func("/ice/pairs/expire", test_pairs_the_peer_left_expire);
    g_test_add_func("/ice/pairs/expire-shared-remote", test_a_remote_still_in_use_is_not_unbound);
    g_test_add_func("/ice/pairs/expire-keeps-pending", test_the_pending_pair_survives_expiry);
    g_test_add_func("/ice/pairs/expire-old-generation",
                    test_a_completed_restart_drops_the_old_generation);
    return g_test_run();
}
