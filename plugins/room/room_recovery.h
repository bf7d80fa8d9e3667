/* A publisher's streams on their way in (room_recovery.c): padding-only
 * packets dropped with no hole left in the sequence numbers relayed (the
 * later ones are renumbered), duplicates dropped, and packets lost between
 * the publisher and the gateway NACKed (RFC 4585 generic NACK, where the
 * publisher negotiated nack for the codec and [room] nack_publishers is
 * on; rtp/nack_tracker.h decides when), a keyframe asked for when a video
 * loss cannot be repaired. All on the publisher's worker; the counters are
 * atomics read by the API. */
#ifndef MOAT_ROOM_RECOVERY_H
#define MOAT_ROOM_RECOVERY_H

#include "room.h"

#include "rtp/nack_tracker.h"

#include <jansson.h>

#define ROOM_RECOVERY_STREAMS  4         /* audio and three simulcast layers */
#define ROOM_RECOVERY_DROPS    256       /* recent padding drops, for late packets */
#define ROOM_RECOVERY_NACK_MAX 64        /* sequence numbers per NACK packet */
#define ROOM_RECOVERY_IDLE_US  10000000u /* a stream silent this long gives up its slot */

typedef struct {
    uint32_t ssrc;    /* 0: slot free */
    uint64_t last_us; /* its last packet */
    int media_index;
    bool video;
    bool nack; /* NACK this stream's losses */
    moat_nack_tracker tracker;
    uint16_t dropped;                    /* padding-only packets dropped, mod 2^16 */
    uint16_t drops[ROOM_RECOVERY_DROPS]; /* the latest of them (a ring) */
    size_t n_drops, next_drop;
    bool started;
    uint16_t newest; /* the newest sequence number seen (before rewriting) */
} room_recovery_stream;

struct room_recovery {
    room_recovery_stream streams[ROOM_RECOVERY_STREAMS];
};

/* One packet of the publisher (not RTX padding; repaired ones included):
 * true to relay it (its sequence number possibly rewritten in place),
 * false when it was dropped (counted). */
bool room_recovery_on_packet(room_peer *publisher, moat_rtp_packet *p);
/* Timer: NACKs due again, losses given up. */
void room_recovery_tick(room_peer *publisher, uint64_t now_us);
void room_recovery_free(room_peer *publisher);
/* Control thread, room lock held: the counters into the publisher's JSON. */
void room_recovery_describe(const room_peer *publisher, json_t *out);

#endif
