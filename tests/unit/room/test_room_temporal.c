/* Temporal layers toward a subscriber (room_temporal.c): the renumbering
 * that closes up over dropped packets and pictures (wraparound, reordering,
 * retransmissions of what was dropped, a forgotten drop), the per-packet
 * filter that goes down at a frame's start and up only at a layer sync
 * frame or a keyframe, and the choice from the estimate with hysteresis. */
#include <glib.h>

#include "room_temporal.h"

static uint16_t forward(room_gap_map *m, uint16_t input)
{
    uint16_t out = 0;
    g_assert_true(room_gap_forward(m, input, &out));
    return out;
}

static void test_gap_in_order(void)
{
    room_gap_map m;
    room_gap_init(&m, 0xffff);
    /* Across the wrap: 0xfffd..0x0004 with 0xffff, 0x0000 and 0x0003 dropped. */
    g_assert_cmpuint(forward(&m, 0xfffd), ==, 0xfffd);
    g_assert_cmpuint(forward(&m, 0xfffe), ==, 0xfffe);
    room_gap_drop(&m, 0xffff);
    room_gap_drop(&m, 0x0000);
    g_assert_cmpuint(forward(&m, 0x0001), ==, 0xffff);
    g_assert_cmpuint(forward(&m, 0x0002), ==, 0x0000);
    room_gap_drop(&m, 0x0003);
    g_assert_cmpuint(forward(&m, 0x0004), ==, 0x0001);
}

static void test_gap_reordered(void)
{
    room_gap_map m;
    room_gap_init(&m, 0xffff);
    g_assert_cmpuint(forward(&m, 100), ==, 100);
    /* 101 comes late, after 102 was dropped and 103 forwarded. */
    room_gap_drop(&m, 102);
    g_assert_cmpuint(forward(&m, 103), ==, 102);
    g_assert_cmpuint(forward(&m, 101), ==, 101);
    /* A retransmission of the dropped 102 would take 103's number. */
    uint16_t out;
    g_assert_false(room_gap_forward(&m, 102, &out));
    /* A drop that comes late (older than what was forwarded) stays a gap:
     * closing it up would give 105 the number 104 already went out with. */
    g_assert_cmpuint(forward(&m, 105), ==, 104);
    room_gap_drop(&m, 104);
    g_assert_cmpuint(forward(&m, 106), ==, 105);
    /* Duplicated drops (a picture's second packet) count once. */
    room_gap_drop(&m, 107);
    room_gap_drop(&m, 107);
    g_assert_cmpuint(forward(&m, 108), ==, 106);
}

static void test_gap_forgotten(void)
{
    room_gap_map m;
    room_gap_init(&m, 0xffff);
    g_assert_cmpuint(forward(&m, 1000), ==, 1000);
    g_assert_cmpuint(forward(&m, 1001), ==, 1001);
    for (uint16_t i = 0; i < ROOM_GAP_DROPS + 2; i++)
        room_gap_drop(&m, (uint16_t)(1002 + 2 * i));
    /* 1002 + 2i dropped, 1003 + 2i kept: the latest maps after 1001. */
    uint16_t last = (uint16_t)(1003 + 2 * (ROOM_GAP_DROPS + 1));
    g_assert_cmpuint(forward(&m, last), ==, 1001 + ROOM_GAP_DROPS + 2);
    /* One still in the ring's reach maps exactly... */
    uint16_t recent = (uint16_t)(last - 2);
    g_assert_cmpuint(forward(&m, recent), ==, 1001 + ROOM_GAP_DROPS + 1);
    /* ...one before a forgotten drop cannot. */
    uint16_t out;
    g_assert_false(room_gap_forward(&m, 1003, &out));
}

static void test_gap_pictures(void)
{
    /* 15-bit picture ids wrap at 2^15, 7-bit ones at 2^7. */
    room_gap_map m;
    room_gap_init(&m, 0x7fff);
    g_assert_cmpuint(forward(&m, 0x7ffe), ==, 0x7ffe);
    room_gap_drop(&m, 0x7fff);
    g_assert_cmpuint(forward(&m, 0), ==, 0x7fff);
    g_assert_cmpuint(forward(&m, 0), ==, 0x7fff); /* the same picture's next packet */
    room_gap_init(&m, 0x7f);
    g_assert_cmpuint(forward(&m, 0x7e), ==, 0x7e);
    room_gap_drop(&m, 0x7f);
    g_assert_cmpuint(forward(&m, 0x00), ==, 0x7f);
    g_assert_cmpuint(forward(&m, 0x01), ==, 0x00);
}

static moat_video_descriptor frame(uint8_t tid, bool sync, bool begins)
{
    moat_video_descriptor d = {0};
    d.has_tid = true;
    d.tid = tid;
    d.layer_sync = sync;
    d.begins_frame = begins;
    return d;
}

static void test_filter(void)
{
    room_temporal_state t;
    room_temporal_init(&t);
    moat_video_descriptor none = {0};
    g_assert_true(room_temporal_packet(&t, &none, false));
    moat_video_descriptor tl2 = frame(2, false, true), tl2_rest = frame(2, false, false);
    g_assert_true(room_temporal_packet(&t, &tl2, false));
    /* Down to TL0 in the middle of a TL2 frame: the frame ends first. */
    t.target = 0;
    g_assert_true(room_temporal_packet(&t, &tl2_rest, false));
    moat_video_descriptor tl0 = frame(0, false, true), tl1 = frame(1, false, true);
    g_assert_true(room_temporal_packet(&t, &tl0, false));
    g_assert_cmpint(t.current, ==, 0);
    g_assert_false(room_temporal_packet(&t, &tl2, false));
    g_assert_false(room_temporal_packet(&t, &tl1, false));
    /* Up: not at a frame that may reference a TL1 frame not sent, nor at a
     * TL2 sync frame before TL1 is there; at a TL1 sync frame. */
    t.target = ROOM_TEMPORAL_ALL;
    g_assert_false(room_temporal_packet(&t, &tl1, false));
    moat_video_descriptor tl2_sync = frame(2, true, true), tl1_sync = frame(1, true, true);
    g_assert_false(room_temporal_packet(&t, &tl2_sync, false));
    g_assert_true(room_temporal_packet(&t, &tl1_sync, false));
    g_assert_cmpint(t.current, ==, 1);
    g_assert_false(room_temporal_packet(&t, &tl2, false));
    g_assert_true(room_temporal_packet(&t, &tl2_sync, false));
    g_assert_cmpint(t.current, ==, 2);
    /* A keyframe takes the target at once. */
    t.target = 0;
    g_assert_true(room_temporal_packet(&t, &tl0, false));
    g_assert_false(room_temporal_packet(&t, &tl1, false));
    t.target = ROOM_TEMPORAL_ALL;
    g_assert_true(room_temporal_packet(&t, &tl0, true));
    g_assert_true(room_temporal_packet(&t, &tl2, false));
    g_assert_true(room_temporal_packet(&t, &tl1, false));
}

static void test_choose(void)
{
    const uint32_t l1t3[ROOM_TEMPORAL_LAYERS] = {300000, 100000, 200000, 0};
    /* Everything fits (at 0.85 x when it is what is sent). */
    g_assert_cmpint(room_temporal_choose(700000, l1t3, ROOM_TEMPORAL_ALL), ==, ROOM_TEMPORAL_ALL);
    g_assert_cmpint(room_temporal_choose(520000, l1t3, ROOM_TEMPORAL_ALL), ==, ROOM_TEMPORAL_ALL);
    /* TL2 then TL1 go. */
    g_assert_cmpint(room_temporal_choose(500000, l1t3, ROOM_TEMPORAL_ALL), ==, 1);
    g_assert_cmpint(room_temporal_choose(300000, l1t3, ROOM_TEMPORAL_ALL), ==, 0);
    g_assert_cmpint(room_temporal_choose(10000, l1t3, 1), ==, 0);
    /* Back up only 1.15 x above. */
    g_assert_cmpint(room_temporal_choose(650000, l1t3, 1), ==, 1);
    g_assert_cmpint(room_temporal_choose(460000, l1t3, 0), ==, 1);
    g_assert_cmpint(room_temporal_choose(700000, l1t3, 1), ==, ROOM_TEMPORAL_ALL);
    /* A layer without temporal layers (or not measured) has nothing to drop. */
    const uint32_t plain[ROOM_TEMPORAL_LAYERS] = {500000, 0, 0, 0};
    g_assert_cmpint(room_temporal_choose(1000, plain, ROOM_TEMPORAL_ALL), ==, ROOM_TEMPORAL_ALL);
    const uint32_t nothing[ROOM_TEMPORAL_LAYERS] = {0};
    g_assert_cmpint(room_temporal_choose(1000, nothing, 0), ==, ROOM_TEMPORAL_ALL);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/room/temporal/gap-in-order", test_gap_in_order);
    g_test_add_func("/room/temporal/gap-reordered", test_gap_reordered);
    g_test_add_func("/room/temporal/gap-forgotten", test_gap_forgotten);
    g_test_add_func("/room/temporal/gap-pictures", test_gap_pictures);
    g_test_add_func("/room/temporal/filter", test_filter);
    g_test_add_func("/room/temporal/choose", test_choose);
    return g_test_run();
}
