/* [limits] session_media_kbps: one session's authenticated RTP is capped in
 * bytes (a second's burst) before any plugin sees it, the excess counted as
 * rate_limit; a session under its cap loses nothing, a cap of 0 is none, and
 * a cascade leg (many sessions' media between two nodes) is not capped. */
#include "session_harness.h"

#include "session/session_internal.h"

#include <glib.h>

#define PAYLOAD 1000

/* A keyed session with the peer's tuple selected, its media capped at
 * `bytes_per_s` (0 none). */
static void capped_session(session_harness *h, uint64_t bytes_per_s)
{
    session_harness_init(h);
    h->settings.session_media_bytes_per_s = bytes_per_s;
    session_harness_create_selected(h);
}

static uint64_t delivered(const session_harness *h)
{
    return *(const uint64_t *)h->session->plugin_state;
}

/* `packets` of PAYLOAD bytes spread evenly over `seconds` from 1 s on. */
static void send_for(session_harness *h, unsigned packets, double seconds)
{
    uint64_t step = (uint64_t)(seconds * 1e6 / packets);
    for (unsigned i = 0; i < packets; i++)
        session_harness_dispatch_srtp(h, (uint16_t)(i + 1), PAYLOAD, 1000000 + i * step, false);
}

/* 500 packets of 1 KB (plus header and tag) in one second against a cap of
 * 100 KB/s: the second's burst and the second's rate pass, about 200
 * packets; the rest is dropped as rate_limit, none as anything else. */
static void test_a_session_over_its_cap_is_cut_to_it(void)
{
    session_harness h;
    capped_session(&h, 100000);
    send_for(&h, 500, 1.0);
    uint64_t passed = delivered(&h);
    g_assert_cmpuint(passed, >=, 180);
    g_assert_cmpuint(passed, <=, 205);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_RATE_LIMIT), ==, 500 - passed);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_AUTH), ==, 0);
    session_harness_clear(&h);
}

/* 40 KB/s for 3 s against the same cap: everything is delivered. */
static void test_a_session_under_its_cap_loses_nothing(void)
{
    session_harness h;
    capped_session(&h, 100000);
    send_for(&h, 120, 3.0);
    g_assert_cmpuint(delivered(&h), ==, 120);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_RATE_LIMIT), ==, 0);
    session_harness_clear(&h);
}

/* session_media_kbps = 0: no cap at any rate. */
static void test_no_cap_when_zero(void)
{
    session_harness h;
    capped_session(&h, 0);
    send_for(&h, 2000, 0.5);
    g_assert_cmpuint(delivered(&h), ==, 2000);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_RATE_LIMIT), ==, 0);
    session_harness_clear(&h);
}

/* A cascade leg carries a room's publishers together: the cap is one
 * peer's, not the link's. */
static void test_a_cascade_leg_is_not_capped(void)
{
    session_harness h;
    capped_session(&h, 100000);
    h.session->cascade_leg = true;
    send_for(&h, 500, 1.0);
    g_assert_cmpuint(delivered(&h), ==, 500);
    g_assert_cmpuint(session_harness_dropped(&h, MOAT_DROP_RATE_LIMIT), ==, 0);
    session_harness_clear(&h);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/session/media-rate/over-the-cap-is-cut-to-it",
                    test_a_session_over_its_cap_is_cut_to_it);
    g_test_add_func("/session/media-rate/under-the-cap-loses-nothing",
                    test_a_session_under_its_cap_loses_nothing);
    g_test_add_func("/session/media-rate/zero-is-no-cap", test_no_cap_when_zero);
    g_test_add_func("/session/media-rate/cascade-leg-not-capped", test_a_cascade_leg_is_not_capped);
    return g_test_run();
}
