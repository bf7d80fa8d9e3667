/* The PLPMTUD state machine (sctp_plpmtud.c) driven with a simulated path:
 * a probe of at most path_mtu bytes is acknowledged one round trip later,
 * larger ones are lost. Time is simulated; no I/O. */
#include <glib.h>

#include "sctp/sctp_plpmtud.h"

#define RTT_US 10000

typedef struct {
    moat_plpmtud p;
    int64_t now;
    uint32_t path_mtu;
    double loss; /* share of probes that fit but are lost anyway */
    GRand *rand;
    GArray *in_flight; /* probe */
    GArray *in_flight_at;
    unsigned pmtu_changes;
} sim;

static void sim_init(sim *s, uint32_t max, uint32_t path_mtu)
{
    moat_plpmtud_init(&s->p, max);
    s->now = 1000000;
    s->path_mtu = path_mtu;
    s->loss = 0;
    s->rand = g_rand_new_with_seed(42);
    s->in_flight = g_array_new(false, false, sizeof(moat_plpmtud_probe));
    s->in_flight_at = g_array_new(false, false, sizeof(int64_t));
    s->pmtu_changes = 0;
}

static void sim_clear(sim *s)
{
    g_rand_free(s->rand);
    g_array_unref(s->in_flight);
    g_array_unref(s->in_flight_at);
}

/* Advances by step_us: delivers acknowledgements that are due, then polls. */
static void sim_step(sim *s, int64_t step_us)
{
    s->now += step_us;
    for (guint i = 0; i < s->in_flight->len;) {
        int64_t at = g_array_index(s->in_flight_at, int64_t, i);
        if (at > s->now) {
            i++;
            continue;
        }
        moat_plpmtud_probe pr = g_array_index(s->in_flight, moat_plpmtud_probe, i);
        g_array_remove_index(s->in_flight, i);
        g_array_remove_index(s->in_flight_at, i);
        if (moat_plpmtud_on_ack(&s->p, pr.seq, pr.size, s->now))
            s->pmtu_changes++;
    }
    moat_plpmtud_probe probe;
    unsigned sent = 0;
    while (moat_plpmtud_poll(&s->p, s->now, &probe)) {
        g_assert_cmpuint(++sent, <=, 2 * MOAT_PLPMTUD_ROUND_SIZES);
        g_assert_cmpuint(probe.size % 4, ==, 0);
        g_assert_cmpuint(probe.size, >=, MOAT_PLPMTUD_BASE);
        g_assert_cmpuint(probe.size, <=, s->p.max);
        if (probe.size > s->path_mtu)
            continue;
        if (s->loss > 0 && g_rand_double(s->rand) < s->loss)
            continue;
        int64_t at = s->now + RTT_US;
        g_array_append_val(s->in_flight, probe);
        g_array_append_val(s->in_flight_at, at);
    }
    g_assert_cmpuint(moat_plpmtud_pmtu(&s->p), <=, s->p.max);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s->p), >=, MOAT_PLPMTUD_BASE);
}

/* Steps until the search completes; returns the simulated time it took. */
static int64_t sim_until_complete(sim *s, int64_t limit_us)
{
    int64_t start = s->now;
    while (s->p.state != MOAT_PLPMTUD_SEARCH_COMPLETE && s->now - start < limit_us)
        sim_step(s, 1000);
    g_assert_cmpint(s->p.state, ==, MOAT_PLPMTUD_SEARCH_COMPLETE);
    return s->now - start;
}

static void test_init_clamps(void)
{
    moat_plpmtud p;
    moat_plpmtud_init(&p, 100000);
    g_assert_cmpuint(p.max, ==, MOAT_PLPMTUD_MAX);
    g_assert_cmpuint(moat_plpmtud_pmtu(&p), ==, MOAT_PLPMTUD_BASE);
    moat_plpmtud_init(&p, 500);
    g_assert_cmpuint(p.max, ==, MOAT_PLPMTUD_BASE);
    moat_plpmtud_init(&p, 1503);
    g_assert_cmpuint(p.max, ==, 1500);
    g_assert_cmpint(p.state, ==, MOAT_PLPMTUD_DISABLED);
}

static void test_disabled_sends_nothing(void)
{
    moat_plpmtud p;
    moat_plpmtud_probe probe;
    moat_plpmtud_init(&p, 16384);
    g_assert_false(moat_plpmtud_poll(&p, 5000000, &probe));
    g_assert_cmpint(moat_plpmtud_deadline(&p), ==, INT64_MAX);
    /* max == base: nothing to search. */
    moat_plpmtud_init(&p, MOAT_PLPMTUD_BASE);
    moat_plpmtud_start(&p, 0);
    g_assert_cmpint(p.state, ==, MOAT_PLPMTUD_DISABLED);
    g_assert_false(moat_plpmtud_poll(&p, 5000000, &probe));
}

/* Loopback: the maximum is confirmed by the first round trip. */
static void test_loopback_one_round_trip(void)
{
    sim s;
    sim_init(&s, 16384, 65535);
    moat_plpmtud_start(&s.p, s.now);
    sim_step(&s, 0);
    g_assert_cmpuint(s.p.counters.probes_sent, <=, MOAT_PLPMTUD_ROUND_SIZES);
    sim_step(&s, RTT_US);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), ==, 16384);
    g_assert_cmpint(s.p.state, ==, MOAT_PLPMTUD_SEARCH_COMPLETE);
    g_assert_cmpuint(s.p.counters.searches, ==, 1);
    sim_clear(&s);
}

/* Paths of many sizes: the result is within the granularity below the path,
 * never above, and the search ends in bounded time. */
static void test_search_converges(void)
{
    static const uint32_t paths[] = {1200, 1203, 1204, 1240, 1372, 1400,  1432,  1435, 1452,
                                     1472, 2000, 4000, 8932, 9000, 12000, 16380, 16383};
    for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
        sim s;
        sim_init(&s, 16384, paths[i]);
        moat_plpmtud_start(&s.p, s.now);
        int64_t took = sim_until_complete(&s, 120000000);
        uint32_t pmtu = moat_plpmtud_pmtu(&s.p);
        g_assert_cmpuint(pmtu, <=, paths[i]);
        g_assert_cmpuint(pmtu + MOAT_PLPMTUD_GRANULARITY + 4, >, paths[i]);
        /* Each round that confirms nothing costs MAX_PROBES timers. */
        g_assert_cmpint(took, <, 40000000);
        if (g_test_verbose())
            g_printerr("path %u: pmtu %u in %.1f s, %" G_GUINT64_FORMAT " probes\n", paths[i], pmtu,
                       (double)took / 1e6, s.p.counters.probes_sent);
        sim_clear(&s);
    }
}

/* A 1500-byte Ethernet path (IPv4, AES-GCM): the plateau is confirmed by the
 * first round trip, long before the search ends. */
static void test_plateau_first_round_trip(void)
{
    sim s;
    sim_init(&s, 16384, 1435);
    moat_plpmtud_start(&s.p, s.now);
    sim_step(&s, 0);
    sim_step(&s, RTT_US);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), ==, 1432);
    g_assert_cmpint(s.p.state, ==, MOAT_PLPMTUD_SEARCHING);
    sim_until_complete(&s, 60000000);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), ==, 1432);
    sim_clear(&s);
}

/* A size is only declared too big after MAX_PROBES probe timers, at least
 * PROBE_TIMER apart. */
static void test_probe_timer_and_max_probes(void)
{
    sim s;
    sim_init(&s, 16384, 1200); /* nothing above the base gets through */
    moat_plpmtud_start(&s.p, s.now);
    sim_step(&s, 0);
    uint32_t first_top = s.p.sizes[0];
    g_assert_cmpuint(first_top, ==, 16384);
    uint64_t sent = s.p.counters.probes_sent;
    sim_step(&s, MOAT_PLPMTUD_PROBE_TIMER_US - 1);
    g_assert_cmpuint(s.p.counters.probes_sent, ==, sent); /* not before the timer */
    sim_step(&s, 1);
    g_assert_cmpuint(s.p.counters.probes_sent, ==, 2 * sent); /* second attempt */
    g_assert_cmpuint(s.p.failed, ==, 16384 + 4);
    sim_step(&s, MOAT_PLPMTUD_PROBE_TIMER_US);
    g_assert_cmpuint(s.p.failed, ==, 16384 + 4);
    g_assert_cmpuint(s.p.counters.probes_sent, ==, 3 * sent);
    sim_step(&s, MOAT_PLPMTUD_PROBE_TIMER_US);
    /* Third expiry: the round's smallest size is too big; a new round. */
    g_assert_cmpuint(s.p.failed, <, first_top);
    g_assert_cmpuint(s.p.counters.probes_lost, ==, 3 * sent);
    sim_until_complete(&s, 60000000);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), ==, MOAT_PLPMTUD_BASE);
    sim_clear(&s);
}

/* Random loss of probes that fit delays the search but never makes the
 * result exceed the path; it may stop lower. */
static void test_lossy_path(void)
{
    for (unsigned seed = 1; seed <= 20; seed++) {
        sim s;
        sim_init(&s, 16384, 1472);
        g_rand_set_seed(s.rand, seed);
        s.loss = 0.3;
        moat_plpmtud_start(&s.p, s.now);
        sim_until_complete(&s, 200000000);
        g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), <=, 1472);
        sim_clear(&s);
    }
}

/* Acknowledgements that do not belong to the round are ignored: unknown
 * sizes, future and old sequence numbers, duplicates. */
static void test_foreign_acks_ignored(void)
{
    sim s;
    sim_init(&s, 16384, 0);
    moat_plpmtud_start(&s.p, s.now);
    moat_plpmtud_probe probe;
    g_assert_true(moat_plpmtud_poll(&s.p, s.now, &probe));
    g_assert_false(moat_plpmtud_on_ack(&s.p, probe.seq, probe.size + 4, s.now));
    g_assert_false(moat_plpmtud_on_ack(&s.p, probe.seq + 100, probe.size, s.now));
    g_assert_false(moat_plpmtud_on_ack(&s.p, probe.seq - 1, probe.size, s.now));
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), ==, MOAT_PLPMTUD_BASE);
    g_assert_true(moat_plpmtud_on_ack(&s.p, probe.seq, probe.size, s.now));
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), ==, probe.size);
    g_assert_false(moat_plpmtud_on_ack(&s.p, probe.seq, probe.size, s.now));
    sim_clear(&s);
}

/* The path shrinks after the search: a suspected loss sends confirmation
 * probes of the PLPMTU; when MAX_PROBES of them are lost, the PLPMTU falls
 * back to the base, and a new search finds the smaller size. */
static void test_black_hole(void)
{
    sim s;
    sim_init(&s, 16384, 65535);
    moat_plpmtud_start(&s.p, s.now);
    sim_until_complete(&s, 1000000);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), ==, 16384);
    s.path_mtu = 1435;
    moat_plpmtud_suspect(&s.p, s.now);
    g_assert_true(s.p.confirming);
    for (int i = 0; i < 3000 && s.p.counters.black_holes == 0; i++)
        sim_step(&s, 1000);
    g_assert_cmpuint(s.p.counters.black_holes, ==, 1);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), ==, MOAT_PLPMTUD_BASE);
    /* Three probe timers: not sooner. */
    g_assert_cmpuint(s.p.counters.probes_lost, >=, 3);
    sim_until_complete(&s, 60000000);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), <=, 1435);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), >, 1400);
    sim_clear(&s);
}

/* A path that carries nothing for a while (congestion, an outage) is not a
 * smaller path: without a base-size probe getting through, the PLPMTU
 * stays, and is confirmed once the path is back. */
static void test_outage_is_not_a_black_hole(void)
{
    sim s;
    sim_init(&s, 16384, 65535);
    moat_plpmtud_start(&s.p, s.now);
    sim_until_complete(&s, 1000000);
    s.path_mtu = 0;
    moat_plpmtud_suspect(&s.p, s.now);
    for (int i = 0; i < 10000; i++)
        sim_step(&s, 1000);
    g_assert_cmpuint(s.p.counters.black_holes, ==, 0);
    g_assert_true(s.p.confirming);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), ==, 16384);
    s.path_mtu = 65535;
    for (int i = 0; i < 1100 && s.p.confirming; i++)
        sim_step(&s, 1000);
    g_assert_false(s.p.confirming);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), ==, 16384);
    sim_clear(&s);
}

/* A suspicion the path answers is cleared without a change. */
static void test_suspect_confirmed(void)
{
    sim s;
    sim_init(&s, 16384, 65535);
    moat_plpmtud_start(&s.p, s.now);
    sim_until_complete(&s, 1000000);
    moat_plpmtud_suspect(&s.p, s.now);
    sim_step(&s, 0);
    sim_step(&s, RTT_US);
    g_assert_false(s.p.confirming);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), ==, 16384);
    g_assert_cmpuint(s.p.counters.black_holes, ==, 0);
    sim_clear(&s);
}

/* Without any loss report, the periodic confirmation catches a path that
 * shrank, and PMTU_RAISE_TIMER later searches upwards again once it grows. */
static void test_confirmation_and_raise_timers(void)
{
    sim s;
    sim_init(&s, 16384, 9000);
    moat_plpmtud_start(&s.p, s.now);
    sim_until_complete(&s, 60000000);
    uint32_t found = moat_plpmtud_pmtu(&s.p);
    g_assert_cmpuint(found, <=, 9000);
    s.path_mtu = 1435;
    for (int i = 0; i < 100 && s.p.counters.black_holes == 0; i++)
        sim_step(&s, 1000000);
    g_assert_cmpuint(s.p.counters.black_holes, ==, 1);
    sim_until_complete(&s, 60000000);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), <=, 1435);
    uint64_t searches = s.p.counters.searches;
    s.path_mtu = 65535;
    int64_t deadline = moat_plpmtud_deadline(&s.p);
    g_assert_cmpint(deadline, >, s.now);
    for (int i = 0; i < 700 && s.p.counters.searches == searches; i++)
        sim_step(&s, 1000000);
    g_assert_cmpuint(s.p.counters.searches, ==, searches + 1);
    sim_until_complete(&s, 60000000);
    g_assert_cmpuint(moat_plpmtud_pmtu(&s.p), ==, 16384);
    sim_clear(&s);
}

/* The deadline says when poll has work: polling before it sends nothing. */
static void test_deadline(void)
{
    sim s;
    sim_init(&s, 16384, 1300);
    moat_plpmtud_start(&s.p, s.now);
    g_assert_cmpint(moat_plpmtud_deadline(&s.p), <=, s.now);
    sim_step(&s, 0);
    int64_t deadline = moat_plpmtud_deadline(&s.p);
    g_assert_cmpint(deadline, ==, s.now + MOAT_PLPMTUD_PROBE_TIMER_US);
    moat_plpmtud_probe probe;
    g_assert_false(moat_plpmtud_poll(&s.p, deadline - 1, &probe));
    g_assert_true(moat_plpmtud_poll(&s.p, deadline, &probe));
    sim_clear(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sctp/plpmtud/init_clamps", test_init_clamps);
    g_test_add_func("/sctp/plpmtud/disabled_sends_nothing", test_disabled_sends_nothing);
    g_test_add_func("/sctp/plpmtud/loopback_one_round_trip", test_loopback_one_round_trip);
    g_test_add_func("/sctp/plpmtud/search_converges", test_search_converges);
    g_test_add_func("/sctp/plpmtud/plateau_first_round_trip", test_plateau_first_round_trip);
    g_test_add_func("/sctp/plpmtud/probe_timer_and_max_probes", test_probe_timer_and_max_probes);
    g_test_add_func("/sctp/plpmtud/lossy_path", test_lossy_path);
    g_test_add_func("/sctp/plpmtud/foreign_acks_ignored", test_foreign_acks_ignored);
    g_test_add_func("/sctp/plpmtud/black_hole", test_black_hole);
    g_test_add_func("/sctp/plpmtud/suspect_confirmed", test_suspect_confirmed);
    g_test_add_func("/sctp/plpmtud/outage_is_not_a_black_hole", test_outage_is_not_a_black_hole);
    g_test_add_func("/sctp/plpmtud/confirmation_and_raise_timers",
                    test_confirmation_and_raise_timers);
    g_test_add_func("/sctp/plpmtud/deadline", test_deadline);
    return g_test_run();
}
