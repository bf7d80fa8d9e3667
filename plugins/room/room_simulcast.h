/* Simulcast in rooms: a publisher's video layers (learned from the rid the
 * core's demux reports, measured per second) and each subscriber's one
 * layer, rewritten by room_forward.c into one continuous stream. The
 * layer is chosen through the API (pinned) or from the subscriber's
 * estimated bandwidth (room_layers.h); a switch waits for a keyframe of
 * the target layer, asked of the publisher through its keyframe flag. */
#ifndef MOAT_ROOM_SIMULCAST_H
#define MOAT_ROOM_SIMULCAST_H

#include "room.h"

#include "rtp/rtcp_feedback.h"

#include <jansson.h>

/* Publisher, at attach: the layers of its simulcast video m-line. */
void room_simulcast_publisher_init(room_peer *publisher);
/* Publisher's worker: the layer of a video packet (learning its SSRC),
 * -1 when it is none of them. */
int room_simulcast_layer_of(room_peer *publisher, const moat_rtp_packet *p);
/* Publisher's worker: a packet of `layer` that is relayed counts in its
 * bitrate (and its keyframes give the layer's size). Padding, duplicates
 * and retransmissions used as padding (Firefox's, through RTX: thousands
 * on its low layer) are not measured: the caller measures only what it
 * relays. */
void room_simulcast_measure(room_peer *publisher, int layer, const moat_rtp_packet *p);
/* Publisher's worker, room lock held: whether subscriber `s` takes a packet
 * of `layer` (-1: not simulcast, everyone does). */
bool room_simulcast_wants(const room_peer *s, int layer);

/* Subscriber's worker: whether to forward a video packet of the source
 * (0 forward, -1 drop); switches layers at keyframes. */
int room_simulcast_forward(room_peer *s, const moat_rtp_packet *p, const room_codec *codec);
/* Subscriber's worker: API requests and the automatic choice (timer). */
void room_simulcast_tick(room_peer *s, uint64_t now_us);
/* Subscriber's worker: REMB and receiver reports from its peer. */
void room_simulcast_feedback(room_peer *s, const uint8_t *packet, size_t length, uint64_t now_us);

/* Subscriber's worker: its peer asked for a keyframe (PLI, FIR, video
 * turned back on). The source is asked for the layer the subscriber
 * receives, not every layer (whose other viewers need none); for every
 * layer only when it receives none yet, its source has none (plain video)
 * or its layer state is still the previous source's. */
void room_simulcast_viewer_keyframe(room_peer *s);

/* Publisher's worker, on a video packet: sends the keyframe requests its
 * subscribers asked for (keyframe_wanted: every layer; keyframe_layers:
 * those layers, one PLI each, so viewers of the other layers are not sent
 * a keyframe they did not need). */
void room_simulcast_ask_keyframes(room_peer *publisher, int video_index);

/* A cascade leg subscriber's worker (room.h relay): the source layer a
 * video packet of `ssrc` belongs to, -1 when the source has none (it then
 * goes on the plain video SSRC). */
int room_simulcast_relay_layer(room_peer *s, uint32_t ssrc);
/* A cascade leg subscriber's worker: a PLI or FIR from the other node
 * naming one of the layer SSRCs we send asks the source for a keyframe on
 * that layer only; false when it names none (the caller asks for every
 * layer). */
bool room_simulcast_relay_keyframe(room_peer *s, const moat_rtcp_fb *fb);

/* Any thread: whether the publisher sends simulcast layers. A local
 * publisher does when its SDP names rids; a cascade leg (relay) offers
 * layers on every link, and does not once its video came plain (the other
 * node's source has no layers) with no layer packet within the last
 * LAYER_STALE_US before that. */
bool room_simulcast_layered(const room_peer *publisher);

/* Room lock held: the "layers" of a publisher, the "layer" of a
 * subscriber (NULL when not simulcast). */
json_t *room_simulcast_describe_publisher(const room_peer *publisher);
json_t *room_simulcast_describe_subscriber(const room_peer *s);

/* POST /api/rooms/<room>/subscribers/<id>/layer {"rid": "h"|"auto"};
 * `rest` is "<room>/subscribers/<id>/layer". Control thread. */
char *room_simulcast_api(const char *method, const char *rest, const char *body, size_t length,
                         int *status);

#endif
