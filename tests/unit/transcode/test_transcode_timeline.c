/* The transcoder's timeline without GStreamer: unwrapping across the 32-bit
 * wrap, late and duplicate packets, a restarted sender, a sender whose
 * timestamps run far ahead of real time (no overflow, a bounded timeline),
 * events mapped onto the output clock, the 20 ms frame grid and the
 * re-stamped event packet. */
#include "transcode/transcode_timeline.h"

#include <glib.h>

static void test_audio_unwrap_and_late(void)
{
    moat_transcode_timeline t;
    moat_transcode_timeline_init(&t, 8000, 48000, 1000);
    uint64_t ns;
    g_assert_true(moat_transcode_timeline_audio(&t, 0xffffff60u, &ns));
    g_assert_cmpuint(ns, ==, 0);
    g_assert_true(moat_transcode_timeline_audio(&t, 0x00000000u, &ns)); /* wrapped */
    g_assert_cmpuint(ns, ==, 20000000);
    g_assert_false(moat_transcode_timeline_audio(&t, 0x00000000u, &ns)); /* duplicate */
    g_assert_false(moat_transcode_timeline_audio(&t, 0xffffff60u, &ns)); /* late */
    g_assert_true(moat_transcode_timeline_audio(&t, 0x00000140u, &ns));  /* one lost */
    g_assert_cmpuint(ns, ==, 60000000);
    /* A restarted sender (far jump) continues 20 ms after the newest. */
    g_assert_true(moat_transcode_timeline_audio(&t, 0x80000000u, &ns));
    g_assert_cmpuint(ns, ==, 80000000);
    g_assert_true(moat_transcode_timeline_audio(&t, 0x800000a0u, &ns));
    g_assert_cmpuint(ns, ==, 100000000);
}

/* Timestamps 5 s apart, exactly the restart limit: each one is a restart,
 * 20 ms after the previous packet. (Taken as 5 s of media, 38,431 of them
 * overflowed the nanoseconds: UBSan stops the test.) */
static void test_jump_of_the_limit_restarts(void)
{
    moat_transcode_timeline t;
    moat_transcode_timeline_init(&t, 48000, 8000, 1);
    uint64_t ns;
    uint32_t ts = 77;
    for (int i = 0; i < 40000; i++, ts += 240000) {
        g_assert_true(moat_transcode_timeline_audio(&t, ts, &ns));
        g_assert_cmpuint(ns, ==, (uint64_t)i * 20000000u);
    }
}

/* Just under the limit: 5 s of media a packet is taken as such, past where
 * ticks * 10^9 leaves 64 bits, and the nanoseconds stay exact. */
static void test_far_ahead_exact(void)
{
    moat_transcode_timeline t;
    moat_transcode_timeline_init(&t, 48000, 8000, 1);
    uint64_t ns;
    uint32_t ts = 0;
    for (uint64_t i = 0; i < 40000; i++, ts += 239999) {
        g_assert_true(moat_transcode_timeline_audio(&t, ts, &ns));
        uint64_t ticks = i * 239999;
        g_assert_cmpuint(ns, ==, ticks / 48000 * 1000000000u + ticks % 48000 * 1000000000u / 48000);
    }
    g_assert_cmpuint(ns, >, (uint64_t)INT64_MAX / 48000);
}

/* At MOAT_TRANSCODE_TIMELINE_SECONDS the timeline starts over at 0; up to
 * it, audio and events map without overflow. */
static void test_bounded(void)
{
    moat_transcode_timeline t;
    moat_transcode_timeline_init(&t, 8000, 48000, 1000);
    uint64_t ns;
    g_assert_true(moat_transcode_timeline_audio(&t, 500, &ns));
    const int64_t end = 8000 * MOAT_TRANSCODE_TIMELINE_SECONDS;
    t.last_ext = end - 160; /* as if 68 years had gone by */
    g_assert_true(moat_transcode_timeline_audio(&t, 660, &ns));
    g_assert_cmpuint(ns, ==, (uint64_t)MOAT_TRANSCODE_TIMELINE_SECONDS * 1000000000u);
    g_assert_cmpint(t.last_ext, ==, end);
    /* 6 * 8000 * 2^31 output ticks from the anchor: 0 modulo 2^32. */
    g_assert_cmpuint(moat_transcode_timeline_event(&t, 660), ==, 1000);
    g_assert_cmpuint(moat_transcode_timeline_event(&t, 660 + 0x7fffffffu), ==,
                     1000 + 6u * 0x7fffffffu);
    g_assert_true(moat_transcode_timeline_audio(&t, 820, &ns));
    g_assert_cmpuint(ns, ==, 0);
    g_assert_true(moat_transcode_timeline_audio(&t, 980, &ns));
    g_assert_cmpuint(ns, ==, 20000000);
    g_assert_cmpuint(moat_transcode_timeline_event(&t, 980), ==, 1000 + 960);

    /* Clock rates far beyond any codec's are clamped, not overflowed. */
    moat_transcode_timeline wide;
    moat_transcode_timeline_init(&wide, 0xffffffffu, 0xffffffffu, 0);
    g_assert_true(moat_transcode_timeline_audio(&wide, 0, &ns));
    wide.last_ext = (int64_t)wide.in_clock * MOAT_TRANSCODE_TIMELINE_SECONDS;
    g_assert_cmpuint(moat_transcode_timeline_event(&wide, 0x7fffffffu), ==,
                     (uint32_t)(wide.last_ext + 0x7fffffff));
}

static void test_event_mapping(void)
{
    moat_transcode_timeline t;
    moat_transcode_timeline_init(&t, 8000, 48000, 0xfffffff0u);
    /* An event before any audio anchors the timeline. */
    g_assert_cmpuint(moat_transcode_timeline_event(&t, 5000), ==, 0xfffffff0u);
    uint64_t ns;
    g_assert_true(moat_transcode_timeline_audio(&t, 5160, &ns));
    g_assert_cmpuint(ns, ==, 20000000);
    /* 1 s after the anchor on the input is 48000 ticks on the output. */
    g_assert_cmpuint(moat_transcode_timeline_event(&t, 13000), ==, 0xfffffff0u + 48000u);
    /* Before the newest audio packet: still on the same line. */
    g_assert_cmpuint(moat_transcode_timeline_event(&t, 4840), ==, 0xfffffff0u - 960u);

    moat_transcode_timeline down;
    moat_transcode_timeline_init(&down, 48000, 8000, 7);
    g_assert_true(moat_transcode_timeline_audio(&down, 100, &ns));
    g_assert_cmpuint(moat_transcode_timeline_event(&down, 100 + 960), ==, 7 + 160);
}

static void test_frame_grid(void)
{
    /* Opus' first frame is short: 648 after the base becomes 960. */
    g_assert_cmpuint(moat_transcode_frame_timestamp(100, 48000, 100 + 648), ==, 100 + 960);
    g_assert_cmpuint(moat_transcode_frame_timestamp(100, 48000, 100 + 1608), ==, 100 + 1920);
    g_assert_cmpuint(moat_transcode_frame_timestamp(100, 8000, 100 + 160), ==, 100 + 160);
    g_assert_cmpuint(moat_transcode_frame_timestamp(0xffffff00u, 8000, 0x50u), ==, 0x40u);
    g_assert_cmpuint(moat_transcode_frame_timestamp(1000, 8000, 1000 - 150), ==, 1000 - 160);
}

static void test_event_packet(void)
{
    const uint8_t event[] = {9, 0x8a, 0x01, 0x40, 0xee}; /* digit 9, end, 320; one extra byte */
    uint8_t out[MOAT_TRANSCODE_EVENT_PACKET];
    size_t length = moat_transcode_event_packet(event, sizeof event, true, 110, 0x1234, 0xdeadbeef,
                                                0xcafe0001u, 8000, 48000, out);
    g_assert_cmpuint(length, ==, 16);
    const uint8_t expected[] = {0x80, 0x80 | 110, 0x12, 0x34, 0xde, 0xad, 0xbe, 0xef,
                                0xca, 0xfe,       0x00, 0x01, 9,    0x8a, 0x07, 0x80};
    g_assert_cmpmem(out, length, expected, sizeof expected);
    /* A duration that no longer fits saturates; a short payload is refused. */
    const uint8_t long_event[] = {1, 0x0a, 0x40, 0x00};
    moat_transcode_event_packet(long_event, 4, false, 101, 1, 2, 3, 8000, 48000, out);
    g_assert_cmpuint(out[1], ==, 101);
    g_assert_cmpuint(out[14] << 8 | out[15], ==, 0xffff);
    g_assert_cmpuint(moat_transcode_event_packet(event, 3, false, 101, 1, 2, 3, 8000, 8000, out),
                     ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/transcode_timeline/audio_unwrap_and_late", test_audio_unwrap_and_late);
    g_test_add_func("/transcode_timeline/jump_of_the_limit_restarts",
                    test_jump_of_the_limit_restarts);
    g_test_add_func("/transcode_timeline/far_ahead_exact", test_far_ahead_exact);
    g_test_add_func("/transcode_timeline/bounded", test_bounded);
    g_test_add_func("/transcode_timeline/event_mapping", test_event_mapping);
    g_test_add_func("/transcode_timeline/frame_grid", test_frame_grid);
    g_test_add_func("/transcode_timeline/event_packet", test_event_packet);
    return g_test_run();
}
