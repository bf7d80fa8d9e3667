/* A publisher's packets to its subscribers through the gateway's fan-out
 * list (plugin.h fanout_*): the list is rebuilt under the room's lock when
 * someone joins or leaves (or a subscriber follows another publisher), and
 * a packet takes one relay ring slot per worker its subscribers are on, not
 * one per subscriber. Simulcast layers (chosen per subscriber, packet by
 * packet) go through relay_rtp_many after a scan of the room. */
#ifndef MOAT_ROOM_FANOUT_H
#define MOAT_ROOM_FANOUT_H

#include "room.h"

/* Attach (before the publisher joins) and detach (after it left). Its
 * fanout stays NULL when the gateway has none. */
void room_fanout_open(room_peer *publisher);
void room_fanout_close(room_peer *publisher);
/* Room lock held: republishes every publisher's list. */
void room_fanout_rebuild(room *r);
/* The publisher's worker: false when the packet must take the scan path
 * (no list, or a simulcast layer's packet). */
bool room_fanout_send(room_peer *publisher, const moat_rtp_packet *p, int layer);
/* The publisher's worker: the packet to every subscriber watching `layer`
 * (room_simulcast_wants), taken in one hold of the room's lock into the
 * publisher's layer_targets (its worker's, freed by room_fanout_close). */
void room_fanout_send_layer(room_peer *publisher, const moat_rtp_packet *p, int layer);

#endif
