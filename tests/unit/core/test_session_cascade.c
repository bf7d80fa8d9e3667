/* A cascade leg's place on its link's tuple (session_cascade.c): it takes
 * the tuple from an ordinary session that got there first (one nominating
 * check spoofed from the other node's worker address), whose pair there is
 * dropped, and a leg that cannot have its routes ends at its start instead
 * of running deaf until the link is taken for dead. */
#include "session_harness.h"

#include "session/session_internal.h"
#include "engine/worker_receive.h"
#include "ice/ice_client.h"

#include <glib.h>
#include <string.h>

static const uint32_t link_ssrcs[] = {0xa1a1a1a1u, 0xa2a2a2a2u};

static uint64_t counter(session_harness *h, size_t offset)
{
    const moat_counters *counters = moat_worker_counters(h->worker);
    return moat_counter_read((const uint64_t *)((const char *)counters + offset));
}

/* A second harness on `on`'s worker, playing a peer at `on`'s tuple. */
static void init_beside(session_harness *h, session_harness *on, const char *id)
{
    session_harness_init_on(h, on->worker);
    g_strlcpy(h->id, id, sizeof h->id);
    g_snprintf(h->local_ufrag, sizeof h->local_ufrag, "%sufrag", id);
    h->path = on->path;
}

static void test_a_leg_takes_its_tuple_from_an_ordinary_session(void)
{
    session_harness victim, leg;
    session_harness_init(&victim);
    session_harness_create_selected(&victim); /* holds and selected the tuple */
    moat_worker *worker = victim.worker;
    const struct sockaddr_in6 *tuple = &victim.path.remote;
    g_assert_true(moat_worker_session_by_tuple(worker, tuple) == victim.session);

    init_beside(&leg, &victim, "leg");
    session_harness_create_cascade(&leg, link_ssrcs, G_N_ELEMENTS(link_ssrcs));
    g_assert_false(leg.session->ending);
    for (size_t i = 0; i < G_N_ELEMENTS(link_ssrcs); i++)
        g_assert_true(moat_worker_session_by_route(worker, tuple, link_ssrcs[i]) == leg.session);
    g_assert_true(leg.session->has_selected);
    /* The ordinary session lost the tuple and its pair there. */
    g_assert_null(moat_worker_session_by_tuple(worker, tuple));
    g_assert_false(victim.session->has_selected);
    g_assert_false(moat_ice_pairs_has_remote(&victim.session->pairs, tuple));
    g_assert_cmpuint(counter(&victim, offsetof(moat_counters, ice_pairs_taken_by_cascade)), ==, 1);
    g_assert_cmpuint(counter(&victim, offsetof(moat_counters, cascade_legs_unrouted)), ==, 0);

    /* And cannot take it back: the guard on a link's tuple refuses the check. */
    uint64_t refused = session_harness_dropped(&victim, MOAT_DROP_ICE_PAIR);
    moat_ice_client *peer = session_harness_ice_peer(victim.local_ufrag, HARNESS_GATEWAY_PWD);
    session_harness_send_check(&victim, peer, &victim.path, true);
    moat_ice_client_free(peer);
    g_assert_cmpuint(session_harness_dropped(&victim, MOAT_DROP_ICE_PAIR), ==, refused + 1);
    g_assert_null(moat_worker_session_by_tuple(worker, tuple));
    g_assert_false(victim.session->has_selected);

    session_harness_clear(&leg);
    session_harness_clear(&victim);
}

/* A leg one of whose SSRCs another leg routes on the tuple binds nothing
 * (the SSRCs it did get go back) and ends at once, counted. */
static void test_a_leg_without_its_routes_ends(void)
{
    session_harness first, second;
    session_harness_init(&first);
    moat_worker *worker = first.worker;
    moat_worker_set_now_us(worker, 1000000);
    session_harness_create_cascade(&first, link_ssrcs, 1);
    const struct sockaddr_in6 *tuple = &first.path.remote;
    g_assert_true(moat_worker_session_by_route(worker, tuple, link_ssrcs[0]) == first.session);

    init_beside(&second, &first, "second");
    const uint32_t clashing[] = {0xb1b1b1b1u, link_ssrcs[0]};
    session_harness_create_cascade(&second, clashing, G_N_ELEMENTS(clashing));
    g_assert_true(second.session->ending);
    g_assert_cmpstr(moat_session_end_reason(second.session), ==, "cascade routes refused");
    g_assert_false(second.session->has_selected);
    g_assert_null(moat_worker_session_by_route(worker, tuple, clashing[0]));
    g_assert_true(moat_worker_session_by_route(worker, tuple, link_ssrcs[0]) == first.session);
    g_assert_false(moat_session_tick(second.session, 1000000));
    g_assert_cmpuint(counter(&first, offsetof(moat_counters, cascade_legs_unrouted)), ==, 1);
    g_assert_cmpuint(counter(&first, offsetof(moat_counters, ice_pairs_taken_by_cascade)), ==, 0);
    g_assert_false(first.session->ending);

    session_harness_clear(&second);
    session_harness_clear(&first);
}

/* A leg that owns its tuple outright (no SSRCs named) keeps it from a leg
 * that routes by SSRC: the latter ends, the former is untouched. */
static void test_a_tuple_another_leg_owns_is_not_taken(void)
{
    session_harness first, second;
    session_harness_init(&first);
    moat_worker *worker = first.worker;
    session_harness_create_cascade(&first, NULL, 0);
    const struct sockaddr_in6 *tuple = &first.path.remote;
    g_assert_true(moat_worker_session_by_tuple(worker, tuple) == first.session);

    init_beside(&second, &first, "second");
    session_harness_create_cascade(&second, link_ssrcs, G_N_ELEMENTS(link_ssrcs));
    g_assert_true(second.session->ending);
    g_assert_true(moat_worker_session_by_tuple(worker, tuple) == first.session);
    g_assert_null(moat_worker_session_by_route(worker, tuple, link_ssrcs[0]));
    g_assert_cmpuint(counter(&first, offsetof(moat_counters, ice_pairs_taken_by_cascade)), ==, 0);

    session_harness_clear(&second);
    session_harness_clear(&first);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/core/session-cascade/takes-tuple-from-ordinary-session",
                    test_a_leg_takes_its_tuple_from_an_ordinary_session);
    g_test_add_func("/core/session-cascade/leg-without-routes-ends",
                    test_a_leg_without_its_routes_ends);
    g_test_add_func("/core/session-cascade/another-legs-tuple-kept",
                    test_a_tuple_another_leg_owns_is_not_taken);
    return g_test_run();
}
