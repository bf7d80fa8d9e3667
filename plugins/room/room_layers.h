/* Simulcast layer choice for one subscriber, as pure state (no gateway
 * calls, no locks): which layer it receives, switching only at a keyframe
 * of the target layer, and the automatic choice from its estimated
 * bandwidth with hysteresis. The estimate grows on loss-free receiver
 * reports and shrinks on lossy ones; a REMB only ever lowers it: a
 * receiver's REMB is bounded by what it already receives (about 1.5 x),
 * so it says when a layer is too much, never that a higher one would fit.
 * Moving up a layer is thus the probe. Owned and used by the subscriber's
 * worker only. */
#ifndef MOAT_ROOM_LAYERS_H
#define MOAT_ROOM_LAYERS_H

#include "rtp/rtp_keyframe.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROOM_MAX_LAYERS 3
/* Without a detectable keyframe (unknown codec), switch this long after
 * asking for one. */
#define ROOM_LAYER_BLIND_SWITCH_US 1000000u
/* A keyframe asked for the target layer is asked again after this. */
#define ROOM_LAYER_REASK_US 1000000u
/* Automatic choice: a higher layer needs the estimate above its bitrate by
 * this factor, held ROOM_LAYER_UP_HOLD_US since the last switch; the
 * current one is left when the estimate falls under its bitrate by
 * ROOM_LAYER_DOWN_FACTOR. */
#define ROOM_LAYER_UP_FACTOR   1.15
#define ROOM_LAYER_DOWN_FACTOR 0.85
#define ROOM_LAYER_UP_HOLD_US  3000000u
/* The estimator: start value, bounds, REMB validity, loss thresholds. */
#define ROOM_BWE_INITIAL_BPS 1500000u
#define ROOM_BWE_MIN_BPS     50000u
#define ROOM_BWE_MAX_BPS     20000000u
#define ROOM_BWE_REMB_AGE_US 5000000u

typedef enum {
    ROOM_LAYER_DROP = 0, /* not the layer the subscriber receives */
    ROOM_LAYER_FORWARD,  /* the current layer */
    ROOM_LAYER_SWITCHED, /* the target layer's keyframe: it is current from here */
} room_layer_verdict;

typedef struct {
    int current;           /* forwarded layer, -1 before the first keyframe */
    int target;            /* wanted layer, -1 none */
    bool pinned;           /* chosen through the API: no automatic choice */
    bool keyframe_wanted;  /* ask the publisher (the caller clears it) */
    bool drop_current;     /* a step down: the current layer is not forwarded
                              while the target's keyframe is awaited */
    uint64_t asked_us;     /* last keyframe request for the target */
    uint64_t switched_us;  /* last switch or choice */
    uint64_t estimate_bps; /* loss-based bandwidth estimate */
    uint64_t remb_bps;     /* last REMB */
    uint64_t remb_us;      /* when, 0 none */
} room_layer_state;

void room_layers_init(room_layer_state *s);
/* Sets the target (a layer index, or -1 for none); asks for a keyframe when
 * it differs from the current layer. */
void room_layers_set_target(room_layer_state *s, int layer, uint64_t now_us);
/* One video packet of `layer` (the subscriber's copy). keyframe_known:
 * the codec's keyframes are detectable. */
room_layer_verdict room_layers_packet(room_layer_state *s, int layer, bool keyframe,
                                      bool keyframe_known, uint64_t now_us);
/* Bits of the layers the subscriber needs now (current and target). */
unsigned room_layers_mask(const room_layer_state *s);

/* An automatic step down (the path no longer carries the current layer):
 * from now until the target's keyframe, the current layer is dropped too,
 * so the bottleneck's queue drains before that keyframe has to cross it
 * (forwarding on would keep it full, and the keyframe, and everything
 * forwarded, would wait behind it or be lost in it). No effect when no
 * switch is awaited. */
void room_layers_drop_current(room_layer_state *s);
/* Whether `target` is a step down from the current layer: both sending,
 * the target at a lower bitrate, not pinned. Pure. */
bool room_layers_is_step_down(const room_layer_state *s, int target, const uint32_t *bitrates,
                              size_t n);

/* The estimator's inputs: a REMB, and a receiver report's fraction lost
 * (0..255) for the stream the subscriber receives. */
/* The estimate that decides: the loss-based one, capped by a recent REMB. */
uint64_t room_layers_estimate(const room_layer_state *s, uint64_t now_us);
void room_layers_on_remb(room_layer_state *s, uint64_t bitrate_bps, uint64_t now_us);
void room_layers_on_loss(room_layer_state *s, uint8_t fraction_lost, uint64_t now_us);
/* Automatic choice over layers with these bitrates (bps, 0: not sending);
 * returns the layer to target (-1 when none sends). Leaves a pinned state
 * alone (returns its target). */
int room_layers_choose(room_layer_state *s, const uint32_t *bitrates, size_t n, uint64_t now_us);

#endif
