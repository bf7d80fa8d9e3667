/* Temporal layers (VP8's and VP9's TID) toward one subscriber, as pure
 * state (no gateway calls, no locks): which temporal layers it receives
 * under its bandwidth estimate, switching down at a frame's start and up
 * only at a layer sync frame (or a keyframe); and the renumbering that
 * keeps what is forwarded free of gaps when frames of higher layers are
 * dropped: sequence numbers (a receiver would NACK a gap and count it
 * lost) and picture ids (a VP8 decoder waits for a missing picture it may
 * depend on). TL0PICIDX needs no renumbering: only TL0 frames advance it,
 * and they are never dropped. Owned and used by the subscriber's worker. */
#ifndef MOAT_ROOM_TEMPORAL_H
#define MOAT_ROOM_TEMPORAL_H

#include "rtp/video_descriptor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TIDs 0..3 (VP8's TID has two bits; VP9's three, higher ones count as 3). */
#define ROOM_TEMPORAL_LAYERS 4
#define ROOM_TEMPORAL_ALL    (ROOM_TEMPORAL_LAYERS - 1)
/* Drops remembered to renumber packets that arrive late (reordered). */
#define ROOM_GAP_DROPS 64
/* The choice's hysteresis, as the spatial layers' (room_layers.h). */
#define ROOM_TEMPORAL_UP_FACTOR   1.15
#define ROOM_TEMPORAL_DOWN_FACTOR 0.85

/* Renumbering around drops in a space of 16 (sequence numbers) or 15
 * (picture ids) bits: an input maps to itself less the drops before it. */
typedef struct {
    uint16_t mask;                  /* 0xffff or 0x7fff */
    bool started;                   /* an input seen */
    uint16_t newest;                /* newest input seen, forwarded or dropped */
    uint16_t removed;               /* drops so far */
    uint16_t drops[ROOM_GAP_DROPS]; /* the newest drops, a ring */
    size_t n_drops, next_drop;
    bool forgot;        /* a drop left the ring: inputs before it cannot map */
    uint16_t forgotten; /* the newest drop that left the ring */
} room_gap_map;

void room_gap_init(room_gap_map *m, uint16_t mask);
/* `input` is dropped. Only a drop newer than every input seen closes up
 * (one that arrives late would collide with what was already sent: it
 * stays a gap, as a loss would). */
void room_gap_drop(room_gap_map *m, uint16_t input);
/* `input` is forwarded: false when it cannot be mapped (older than a drop
 * the ring forgot; drop it), else its output in *out. */
bool room_gap_forward(room_gap_map *m, uint16_t input, uint16_t *out);

typedef struct {
    int target;  /* highest TID wanted (the choice) */
    int current; /* highest TID forwarded */
} room_temporal_state;

void room_temporal_init(room_temporal_state *t);
/* Whether a packet whose descriptor is `d` passes (`keyframe`: it is one):
 * the current layer moves down to the target at a frame's start, and up at
 * a frame's start that is a keyframe, or a layer sync frame of a layer
 * above the current one, up to the target. A packet without a TID passes. */
bool room_temporal_packet(room_temporal_state *t, const moat_video_descriptor *d, bool keyframe);

/* The target for an estimate `estimate_bps` over a spatial layer whose
 * temporal layers send `bps[tid]` (0: not sent): the highest TID whose
 * cumulative rate fits (x 1.15 above the current target, x 0.85 at or
 * under it), TL0 at least; ROOM_TEMPORAL_ALL when the layer has no
 * temporal layers or everything it sends fits. */
int room_temporal_choose(uint64_t estimate_bps, const uint32_t bps[ROOM_TEMPORAL_LAYERS],
                         int target);

#endif
