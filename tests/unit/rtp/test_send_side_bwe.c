/* The sender-side estimator (rtp/send_side_bwe.h) with synthetic feedback
 * from a simulated bottleneck (a FIFO of a given capacity, random loss):
 * a clean path lets the estimate grow, a delay ramp (sending above the
 * capacity) cuts it, loss cuts it, a probe on a wide path lifts it and on
 * a narrow path fails, and feedback about packets never sent or already
 * acknowledged changes nothing. */
#include <glib.h>
#include <string.h>

#include "rtp/send_side_bwe.h"
#include "rtp/transport_cc.h"

#define PACKET        1200
#define FEEDBACK_US   50000u
#define BASE_DELAY_US 20000

typedef struct {
    moat_ssbwe e;
    uint64_t capacity_bps;
    double loss;       /* fraction dropped at random */
    uint64_t now;      /* sender clock, µs */
    int64_t link_free; /* when the bottleneck has sent what it holds */
    uint16_t first_unreported;
    bool started;
    int64_t arrival[65536];
    GRand *rand;
} sim;

static sim *sim_new(uint64_t initial_bps, uint64_t capacity_bps, double loss)
{
    sim *s = g_new0(sim, 1);
    moat_ssbwe_init(&s->e, initial_bps);
    s->capacity_bps = capacity_bps;
    s->loss = loss;
    s->now = 1000000;
    s->rand = g_rand_new_with_seed(7);
    return s;
}

static void sim_free(sim *s)
{
    g_rand_free(s->rand);
    g_free(s);
}

static void send_one(sim *s, size_t bytes, bool probe)
{
    uint16_t seq = moat_ssbwe_on_send(&s->e, bytes, s->now, probe);
    if (!s->started) {
        s->first_unreported = seq;
        s->started = true;
    }
    int64_t start = (int64_t)s->now > s->link_free ? (int64_t)s->now : s->link_free;
    s->link_free = start + (int64_t)(bytes * 8 * 1000000ull / s->capacity_bps);
    bool lost = g_rand_double(s->rand) < s->loss;
    s->arrival[seq] = lost ? -1 : s->link_free + BASE_DELAY_US;
}

/* Feedback for what has arrived (or was lost before) by now. */
static void feedback(sim *s)
{
    int64_t statuses[MOAT_TWCC_MAX_STATUS];
    size_t n = 0;
    uint16_t base = s->first_unreported;
    while (n < MOAT_TWCC_MAX_STATUS && base + n != s->e.next_seq) {
        uint16_t seq = (uint16_t)(base + n);
        int64_t at = s->arrival[seq];
        /* a lost packet is reported once a later one arrived */
        int64_t due = at >= 0 ? at : s->link_free;
        if (due > (int64_t)s->now && at >= 0)
            break;
        statuses[n++] = at;
    }
    if (n == 0)
        return;
    moat_ssbwe_on_feedback(&s->e, base, statuses, n, s->now);
    s->first_unreported = (uint16_t)(base + n);
}

/* Sends at `rate_bps` (plus `padding_bps` marked probe) for `duration_us`,
 * with feedback every FEEDBACK_US. */
static void run(sim *s, uint64_t rate_bps, uint64_t padding_bps, uint64_t duration_us)
{
    uint64_t end = s->now + duration_us, next_feedback = s->now + FEEDBACK_US;
    double media_credit = 0, padding_credit = 0;
    while (s->now < end) {
        s->now += 1000;
        media_credit += rate_bps / 8000.0;
        padding_credit += padding_bps / 8000.0;
        while (media_credit >= PACKET) {
            send_one(s, PACKET, false);
            media_credit -= PACKET;
        }
        while (padding_credit >= 256) {
            send_one(s, 256, true);
            padding_credit -= 256;
        }
        if (s->now >= next_feedback) {
            feedback(s);
            next_feedback += FEEDBACK_US;
        }
    }
}

static void test_clean_grows(void)
{
    sim *s = sim_new(1000000, 50000000, 0);
    run(s, 1000000, 0, 5000000);
    uint64_t estimate = moat_ssbwe_estimate(&s->e);
    g_assert_cmpuint(estimate, >, 1200000);
    /* Without a probe it grows no further than 1.5 x what is delivered. */
    g_assert_cmpuint(estimate, <=, 1600000);
    g_assert_cmpuint(s->e.stats.overuse_events, ==, 0);
    g_assert_cmpuint(s->e.stats.packets_lost, ==, 0);
    g_assert_cmpuint(s->e.stats.packets_acked, >, 400);
    sim_free(s);
}

static void test_delay_ramp_decreases(void)
{
    sim *s = sim_new(2000000, 50000000, 0);
    run(s, 1800000, 0, 2000000);
    g_assert_cmpuint(moat_ssbwe_estimate(&s->e), >=, 2000000);
    /* The path narrows to 600 kbit/s: the queue grows, delays ramp. */
    s->capacity_bps = 600000;
    uint64_t dropped_at = s->now;
    uint64_t cut_after = 0;
    for (int i = 0; i < 40 && !cut_after; i++) {
        run(s, 1800000, 0, 50000);
        if (moat_ssbwe_estimate(&s->e) < 1000000)
            cut_after = s->now - dropped_at;
    }
    g_assert_cmpuint(cut_after, >, 0);
    g_assert_cmpuint(cut_after, <, 1500000);
    g_assert_cmpuint(s->e.stats.overuse_events, >, 0);
    /* Sending what it says drains the queue; the estimate settles near the
     * capacity (not at the floor). */
    run(s, moat_ssbwe_estimate(&s->e) * 8 / 10, 0, 3000000);
    g_assert_cmpuint(moat_ssbwe_estimate(&s->e), >, 300000);
    g_assert_cmpuint(moat_ssbwe_estimate(&s->e), <, 1000000);
    sim_free(s);
}

/* The first cut after the path narrows lands at or under the new capacity:
 * it is taken from what arrived in the last ~150 ms (the bottleneck's rate
 * while its queue stands), not from a half-second window that still holds
 * the wide path's arrivals. A cut above the capacity needs a second one,
 * and a room subscriber a second layer switch and keyframe. */
static void test_first_cut_fits_the_narrowed_path(void)
{
    sim *s = sim_new(2000000, 50000000, 0);
    run(s, 1800000, 0, 2000000);
    s->capacity_bps = 400000;
    for (int i = 0; i < 40 && s->e.stats.overuse_events == 0; i++)
        run(s, 1800000, 0, FEEDBACK_US);
    g_assert_cmpuint(s->e.stats.overuse_events, ==, 1);
    g_assert_cmpuint(moat_ssbwe_estimate(&s->e), <=, 400000);
    g_assert_cmpuint(moat_ssbwe_estimate(&s->e), >=, 250000);
    sim_free(s);
}

static void test_loss_decreases(void)
{
    sim *s = sim_new(1500000, 50000000, 0.25);
    run(s, 1000000, 0, 2000000);
    g_assert_cmpuint(moat_ssbwe_estimate(&s->e), <, 1200000);
    g_assert_cmpuint(s->e.stats.packets_lost, >, 30);
    g_assert_cmpuint(s->e.stats.overuse_events, ==, 0);
    /* Loss gone: it recovers. */
    s->loss = 0;
    uint64_t low = moat_ssbwe_estimate(&s->e);
    run(s, 1000000, 0, 3000000);
    g_assert_cmpuint(moat_ssbwe_estimate(&s->e), >, low);
    sim_free(s);
}

static void test_probe_confirms_on_wide_path(void)
{
    sim *s = sim_new(600000, 10000000, 0);
    run(s, 400000, 0, 2000000);
    uint64_t before = moat_ssbwe_estimate(&s->e);
    g_assert_cmpuint(before, <, 700000);
    moat_ssbwe_probe_start(&s->e, 2000000, s->now);
    run(s, 400000, 1600000, 300000);
    moat_ssbwe_probe_end(&s->e, s->now);
    run(s, 400000, 0, 300000);
    g_assert_cmpint(moat_ssbwe_take_probe_result(&s->e), ==, 1);
    g_assert_cmpint(moat_ssbwe_take_probe_result(&s->e), ==, 0);
    g_assert_cmpuint(moat_ssbwe_estimate(&s->e), >=, 1600000);
    sim_free(s);
}

static void test_probe_fails_on_narrow_path(void)
{
    sim *s = sim_new(600000, 800000, 0);
    run(s, 400000, 0, 2000000);
    moat_ssbwe_probe_start(&s->e, 2000000, s->now);
    run(s, 400000, 1600000, 300000);
    moat_ssbwe_probe_end(&s->e, s->now);
    run(s, 400000, 0, 1200000);
    g_assert_cmpint(moat_ssbwe_take_probe_result(&s->e), ==, -1);
    g_assert_cmpuint(moat_ssbwe_estimate(&s->e), <, 1000000);
    g_assert_cmpuint(s->e.stats.probes_failed, ==, 1);
    sim_free(s);
}

static void test_hostile_feedback_ignored(void)
{
    moat_ssbwe e;
    moat_ssbwe_init(&e, 1000000);
    int64_t arrival[512];
    for (size_t i = 0; i < 512; i++)
        arrival[i] = (int64_t)i * 100;
    /* Nothing sent: everything is unknown. */
    moat_ssbwe_on_feedback(&e, 0, arrival, 512, 1000);
    g_assert_cmpuint(e.stats.ignored, ==, 512);
    g_assert_cmpuint(e.stats.packets_acked, ==, 0);
    for (int i = 0; i < 10; i++)
        moat_ssbwe_on_send(&e, 1000, 2000 + (uint64_t)i * 1000, false);
    /* Acknowledged twice, and sequence numbers ahead of what was sent. */
    moat_ssbwe_on_feedback(&e, 0, arrival, 10, 20000);
    moat_ssbwe_on_feedback(&e, 0, arrival, 10, 21000);
    moat_ssbwe_on_feedback(&e, 10, arrival, 100, 22000);
    g_assert_cmpuint(e.stats.packets_acked, ==, 10);
    g_assert_cmpuint(e.stats.packets_lost, ==, 0);
    /* Far-off and negative arrival times do not move the estimate out of
     * its bounds. */
    for (int i = 0; i < 200; i++)
        moat_ssbwe_on_send(&e, 1000, 30000 + (uint64_t)i * 1000, false);
    int64_t wild[200];
    for (size_t i = 0; i < 200; i++)
        wild[i] = (i % 2) ? INT64_C(1) << 40 : (int64_t)i;
    moat_ssbwe_on_feedback(&e, 10, wild, 200, 300000);
    g_assert_cmpuint(moat_ssbwe_estimate(&e), >=, MOAT_SSBWE_MIN_BPS);
    g_assert_cmpuint(moat_ssbwe_estimate(&e), <=, MOAT_SSBWE_MAX_BPS);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/send-side-bwe/clean-grows", test_clean_grows);
    g_test_add_func("/send-side-bwe/delay-ramp-decreases", test_delay_ramp_decreases);
    g_test_add_func("/send-side-bwe/first-cut-fits", test_first_cut_fits_the_narrowed_path);
    g_test_add_func("/send-side-bwe/loss-decreases", test_loss_decreases);
    g_test_add_func("/send-side-bwe/probe-confirms", test_probe_confirms_on_wide_path);
    g_test_add_func("/send-side-bwe/probe-fails", test_probe_fails_on_narrow_path);
    g_test_add_func("/send-side-bwe/hostile-feedback", test_hostile_feedback_ignored);
    return g_test_run();
}
