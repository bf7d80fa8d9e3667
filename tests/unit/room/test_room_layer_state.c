/* A subscriber's simulcast layer state without a network (room_layers.c):
 * it waits for a keyframe of the target before switching and asks for one
 * again, stops the current layer on an automatic step down, and chooses
 * layers from REMB and loss with hysteresis. */
#include <glib.h>
#include <string.h>

#include "room_layers.h"

static void test_keyframe_wait(void)
{
    room_layer_state s;
    room_layers_init(&s);
    room_layers_set_target(&s, 2, 1000);
    g_assert_true(s.keyframe_wanted);
    s.keyframe_wanted = false;
    /* Nothing before the target's keyframe; other layers never. */
    g_assert_cmpint(room_layers_packet(&s, 2, false, true, 2000), ==, ROOM_LAYER_DROP);
    g_assert_cmpint(room_layers_packet(&s, 0, true, true, 2000), ==, ROOM_LAYER_DROP);
    g_assert_cmpuint(room_layers_mask(&s), ==, 1u << 2);
    /* No keyframe for a while: asked again. */
    g_assert_cmpint(room_layers_packet(&s, 2, false, true, 1000 + ROOM_LAYER_REASK_US), ==,
                    ROOM_LAYER_DROP);
    g_assert_true(s.keyframe_wanted);
    g_assert_cmpint(room_layers_packet(&s, 2, true, true, 3000000), ==, ROOM_LAYER_SWITCHED);
    g_assert_cmpint(room_layers_packet(&s, 2, false, true, 3000001), ==, ROOM_LAYER_FORWARD);
    /* Switching down: the current layer flows until the target's keyframe. */
    room_layers_set_target(&s, 0, 4000000);
    g_assert_cmpuint(room_layers_mask(&s), ==, (1u << 2) | 1u);
    g_assert_cmpint(room_layers_packet(&s, 2, false, true, 4000001), ==, ROOM_LAYER_FORWARD);
    g_assert_cmpint(room_layers_packet(&s, 0, false, true, 4000002), ==, ROOM_LAYER_DROP);
    g_assert_cmpint(room_layers_packet(&s, 0, true, true, 4000003), ==, ROOM_LAYER_SWITCHED);
    g_assert_cmpint(room_layers_packet(&s, 2, true, true, 4000004), ==, ROOM_LAYER_DROP);
    g_assert_cmpuint(room_layers_mask(&s), ==, 1u);
    /* A codec without detectable keyframes switches blind after a delay. */
    room_layers_set_target(&s, 1, 5000000);
    g_assert_cmpint(room_layers_packet(&s, 1, false, false, 5000001), ==, ROOM_LAYER_DROP);
    g_assert_cmpint(room_layers_packet(&s, 1, false, false, 5000000 + ROOM_LAYER_BLIND_SWITCH_US),
                    ==, ROOM_LAYER_SWITCHED);
    g_assert_cmpint(room_layers_packet(&s, -1, true, true, 6000000), ==, ROOM_LAYER_DROP);
}

/* An automatic step down stops the current layer at once (the path no
 * longer carries it); a pinned one, or one back to the current layer,
 * does not. */
static void test_step_down_drops_current(void)
{
    const uint32_t rates[3] = {2500000, 600000, 150000};
    room_layer_state s;
    room_layers_init(&s);
    room_layers_set_target(&s, 0, 1000);
    g_assert_cmpint(room_layers_packet(&s, 0, true, true, 2000), ==, ROOM_LAYER_SWITCHED);
    g_assert_false(room_layers_is_step_down(&s, 0, rates, 3));
    g_assert_false(room_layers_is_step_down(&s, 2, (const uint32_t[3]){2500000, 600000, 0}, 3));
    g_assert_true(room_layers_is_step_down(&s, 2, rates, 3));
    room_layers_set_target(&s, 2, 3000);
    room_layers_drop_current(&s);
    g_assert_cmpint(room_layers_packet(&s, 0, false, true, 3001), ==, ROOM_LAYER_DROP);
    g_assert_cmpint(room_layers_packet(&s, 2, false, true, 3002), ==, ROOM_LAYER_DROP);
    g_assert_cmpint(room_layers_packet(&s, 2, true, true, 3003), ==, ROOM_LAYER_SWITCHED);
    g_assert_cmpint(room_layers_packet(&s, 2, false, true, 3004), ==, ROOM_LAYER_FORWARD);
    /* Up again (not a step down): l flows until h's keyframe. */
    g_assert_false(room_layers_is_step_down(&s, 0, rates, 3));
    room_layers_set_target(&s, 0, 4000);
    g_assert_cmpint(room_layers_packet(&s, 2, false, true, 4001), ==, ROOM_LAYER_FORWARD);
    /* Stepping down, then back to the current layer before the keyframe:
     * the current layer flows again. */
    g_assert_cmpint(room_layers_packet(&s, 0, true, true, 4002), ==, ROOM_LAYER_SWITCHED);
    room_layers_set_target(&s, 1, 5000);
    room_layers_drop_current(&s);
    g_assert_cmpint(room_layers_packet(&s, 0, false, true, 5001), ==, ROOM_LAYER_DROP);
    room_layers_set_target(&s, 0, 5002);
    g_assert_cmpint(room_layers_packet(&s, 0, false, true, 5003), ==, ROOM_LAYER_FORWARD);
    /* Pinned: never a step down. */
    s.pinned = true;
    g_assert_false(room_layers_is_step_down(&s, 2, rates, 3));
}

static void test_choice(void)
{
    const uint32_t rates[3] = {2500000, 600000, 150000}; /* h, m, l as Chromium lists them */
    room_layer_state s;
    room_layers_init(&s);
    uint64_t t = 10000000;
    /* 1.5 Mbit/s initial estimate: m. */
    room_layers_set_target(&s, room_layers_choose(&s, rates, 3, t), t);
    g_assert_cmpint(s.target, ==, 1);
    /* A REMB under m's rate by the margin: down to l at once. */
    room_layers_on_remb(&s, 400000, t + 1);
    room_layers_set_target(&s, room_layers_choose(&s, rates, 3, t + 1), t + 1);
    g_assert_cmpint(s.target, ==, 2);
    /* Enough for m, but only just: not with the hold time unspent, nor
     * without the margin. */
    room_layers_on_remb(&s, 650000, t + 2);
    g_assert_cmpint(room_layers_choose(&s, rates, 3, t + 2), ==, 2);
    g_assert_cmpint(room_layers_choose(&s, rates, 3, t + 1 + ROOM_LAYER_UP_HOLD_US), ==, 2);
    room_layers_on_remb(&s, 800000, t + 3);
    g_assert_cmpint(room_layers_choose(&s, rates, 3, t + 1 + ROOM_LAYER_UP_HOLD_US), ==, 1);
    room_layers_set_target(&s, 1, t + 1 + ROOM_LAYER_UP_HOLD_US);
    /* A REMB never raises the estimate (it is bounded by what the peer
     * receives): 9 Mbit/s leaves the loss-based 1.5 Mbit/s deciding. */
    uint64_t t2 = t + 1 + ROOM_LAYER_UP_HOLD_US;
    room_layers_on_remb(&s, 9000000, t2);
    g_assert_cmpuint(room_layers_estimate(&s, t2), ==, 1500000);
    g_assert_cmpint(room_layers_choose(&s, rates, 3, t2 + ROOM_LAYER_UP_HOLD_US), ==, 1);
    /* Loss cuts it by half the loss; loss-free reports grow it 5 % each,
     * until h fits with the margin: up to h. */
    room_layers_on_loss(&s, 128, t2 + 1);
    g_assert_cmpuint(s.estimate_bps, ==, 1125000);
    room_layers_on_loss(&s, 0, t2 + 2);
    g_assert_cmpuint(s.estimate_bps, ==, 1181250);
    for (int i = 0; i < 20; i++)
        room_layers_on_loss(&s, 0, t2 + 3 + (uint64_t)i);
    g_assert_cmpint(room_layers_choose(&s, rates, 3, t2 + ROOM_LAYER_UP_HOLD_US), ==, 0);
    /* Growth stops at twice the top layer. */
    for (int i = 0; i < 100; i++)
        room_layers_on_loss(&s, 0, t2 + 30 + (uint64_t)i);
    room_layers_choose(&s, rates, 3, t2 + ROOM_LAYER_UP_HOLD_US);
    g_assert_cmpuint(s.estimate_bps, ==, 5000000);
    /* A recent REMB under the layer's rate (congestion) brings it down. */
    room_layers_set_target(&s, 0, t2 + ROOM_LAYER_UP_HOLD_US);
    room_layers_on_remb(&s, 1000000, t2 + ROOM_LAYER_UP_HOLD_US + 1);
    g_assert_cmpint(room_layers_choose(&s, rates, 3, t2 + ROOM_LAYER_UP_HOLD_US + 2), ==, 1);
    /* A layer that stops sending is not chosen; none sending: unchanged. */
    const uint32_t only_l[3] = {0, 0, 150000};
    s.target = 0;
    g_assert_cmpint(room_layers_choose(&s, only_l, 3, t + 6), ==, 2);
    const uint32_t none[3] = {0, 0, 0};
    g_assert_cmpint(room_layers_choose(&s, none, 3, t + 6), ==, 0);
    /* Pinned: left alone. */
    s.pinned = true;
    s.target = 0;
    g_assert_cmpint(room_layers_choose(&s, only_l, 3, t + 7), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/room/layers/keyframe-wait", test_keyframe_wait);
    g_test_add_func("/room/layers/choice", test_choice);
    g_test_add_func("/room/layers/step-down-drops-current", test_step_down_drops_current);
    return g_test_run();
}
