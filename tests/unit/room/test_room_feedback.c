/* The room's REMB aggregation (room_feedback_aggregate): what a publisher is
 * told from its subscribers' estimates. One viewer's REMB of 1 bit/s must
 * not throttle the publisher for every other viewer, and nothing goes below
 * the floor. */
#include "room.h"
#include "rtp/rtcp_packet.h"

#include <glib.h>
#include <string.h>

room_settings room_config = {ROOM_DEFAULT_ROOMS, ROOM_DEFAULT_TTL_S * 1000000ull,
                             ROOM_DEFAULT_FLOOR};

static uint64_t aggregate(const uint64_t *given, size_t n, uint64_t floor_bps)
{
    uint64_t copy[16];
    g_assert_cmpuint(n, <=, G_N_ELEMENTS(copy));
    memcpy(copy, given, n * sizeof *given);
    return room_feedback_aggregate(copy, n, floor_bps);
}

static void test_one_low_viewer_is_an_outlier(void)
{
    /* Three viewers at 1.2, 1.5 and 2 Mbit/s and one at 1 bit/s: the
     * publisher keeps the slowest ordinary viewer's rate. */
    const uint64_t estimates[] = {1500000, 1, 2000000, 1200000};
    g_assert_cmpuint(aggregate(estimates, 4, 100000), ==, 1200000);
    const uint64_t three[] = {1000000, 1, 1000000};
    g_assert_cmpuint(aggregate(three, 3, 100000), ==, 1000000);
}

static void test_slow_but_not_outlying_viewer_counts(void)
{
    /* 400 kbit/s is above a quarter of the median (1 Mbit/s): followed. */
    const uint64_t estimates[] = {1000000, 400000, 1200000};
    g_assert_cmpuint(aggregate(estimates, 3, 100000), ==, 400000);
}

static void test_floor(void)
{
    /* One or two viewers: the lowest counts, never below the floor. */
    const uint64_t one[] = {1};
    g_assert_cmpuint(aggregate(one, 1, 100000), ==, 100000);
    const uint64_t two[] = {2000000, 1};
    g_assert_cmpuint(aggregate(two, 2, 100000), ==, 100000);
    /* A majority of low viewers moves the median: the floor still holds. */
    const uint64_t most[] = {1, 1, 1, 2000000};
    g_assert_cmpuint(aggregate(most, 4, 100000), ==, 100000);
    /* Floor 0: the estimates as they are. */
    g_assert_cmpuint(aggregate(two, 2, 0), ==, 1);
    g_assert_cmpuint(room_feedback_aggregate(NULL, 0, 100000), ==, 0);
}

/* A viewer's REMB past any rate the API takes (exponent 63: about 2^64)
 * is kept as ROOM_MAX_BITRATE, not passed on (libwebrtc drops a REMB past
 * INT64_MAX as invalid) nor shown as -1 by the API. */
static void test_absurd_remb_is_clamped(void)
{
    static const uint8_t huge[] = {0x8F, 206, 0x00, 0x04, 0,   0,   0,    1,    0,    0,
                                   0,    0,   'R',  'E',  'M', 'B', 0x00, 0xFF, 0xFF, 0xFF};
    moat_rtcp_iter it;
    moat_rtcp_header h;
    moat_rtcp_iter_init(&it, huge, sizeof huge);
    g_assert_cmpint(moat_rtcp_iter_next(&it, &h), ==, 1);
    moat_rtcp_fb fb;
    g_assert_cmpint(moat_rtcp_parse_fb(&h, &fb), ==, MOAT_RTP_OK);
    room_peer viewer = {0};
    room_feedback_note_remb(&viewer, &fb, 1000);
    g_assert_cmpuint(atomic_load(&viewer.estimate_bps), ==, ROOM_MAX_BITRATE);
    g_assert_cmpuint(atomic_load(&viewer.estimate_us), ==, 1000);
}

/* A viewer's keyframe requests reach its publisher once a second: the
 * first at once (also right after joining, and at a clock near zero), the
 * rest of that second dropped and counted; a cascade leg's always pass
 * (they are the other node's viewers', each bounded there). */
static void test_keyframe_requests_once_a_second(void)
{
    room_peer viewer = {0};
    g_assert_true(room_feedback_keyframe_allowed(&viewer, 0));
    g_assert_false(room_feedback_keyframe_allowed(&viewer, 20000));
    g_assert_cmpuint(atomic_load(&viewer.keyframe_requests_dropped), ==, 1);

    room_peer flooder = {0};
    uint64_t now = 5000000;
    unsigned passed = 0;
    for (int i = 0; i < 300; i++, now += 20000) /* every 20 ms for 6 s */
        passed += room_feedback_keyframe_allowed(&flooder, now);
    g_assert_cmpuint(passed, ==, 6);
    g_assert_cmpuint(atomic_load(&flooder.keyframe_requests_dropped), ==, 294);
    /* A second after the last one passed, the next passes. */
    g_assert_false(room_feedback_keyframe_allowed(&flooder, 11000000 - 1));
    g_assert_true(room_feedback_keyframe_allowed(&flooder, 11000000));

    /* A request inside the window is owed, not forgotten: it goes once
     * when the window ends (the subscriber's timer asks), and only once. */
    room_peer asks = {0};
    g_assert_true(room_feedback_keyframe_allowed(&asks, 1000000));
    g_assert_false(room_feedback_keyframe_owed(&asks, 1500000)); /* nothing asked since */
    g_assert_false(room_feedback_keyframe_allowed(&asks, 1300000));
    g_assert_false(room_feedback_keyframe_allowed(&asks, 1600000));
    g_assert_false(room_feedback_keyframe_owed(&asks, 2000000 - 1));
    g_assert_true(room_feedback_keyframe_owed(&asks, 2000000));
    g_assert_false(room_feedback_keyframe_owed(&asks, 2100000));
    g_assert_false(room_feedback_keyframe_allowed(&asks, 2500000)); /* the window restarted */
    g_assert_true(room_feedback_keyframe_owed(&asks, 3000000));

    room_peer leg = {.relay = true};
    for (int i = 0; i < 10; i++)
        g_assert_true(room_feedback_keyframe_allowed(&leg, 5000000 + (uint64_t)i * 20000));
    g_assert_cmpuint(atomic_load(&leg.keyframe_requests_dropped), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/room/feedback/outlier", test_one_low_viewer_is_an_outlier);
    g_test_add_func("/room/feedback/slow-viewer", test_slow_but_not_outlying_viewer_counts);
    g_test_add_func("/room/feedback/floor", test_floor);
    g_test_add_func("/room/feedback/absurd-remb", test_absurd_remb_is_clamped);
    g_test_add_func("/room/feedback/keyframe-requests-once-a-second",
                    test_keyframe_requests_once_a_second);
    return g_test_run();
}
