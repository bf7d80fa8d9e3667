/* What a subscriber receives: a publisher's packet rewritten on the
 * subscriber's worker — its payload type mapped by codec name, header
 * extensions removed (their ids are the publisher's), the subscriber's
 * SSRC, and sequence numbers and timestamps that stay continuous when the
 * source changes (another publisher or simulcast layer), as do VP8 and
 * VP9 picture ids and TL0PICIDX (rtp/video_descriptor.h): a decoder that
 * sees a gap in picture ids waits for a keyframe it will not get. */
#ifndef MOAT_ROOM_FORWARD_H
#define MOAT_ROOM_FORWARD_H

#include "room.h"

/* Rewrites `p` in place and sends it; 0 sent (*kind says what), -1
 * dropped. The subscriber's worker, without the room's lock. */
int room_forward(room_peer *subscriber, moat_rtp_packet *p, moat_media_kind *kind);

#endif
