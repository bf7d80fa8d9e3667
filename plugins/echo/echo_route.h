/* Which m-line an incoming RTP packet belongs to. */
#ifndef MOAT_ECHO_ROUTE_H
#define MOAT_ECHO_ROUTE_H

#include <stdint.h>

#include "echo_session.h"
#include "rtp/rtp_packet.h"

/* Returns the index into s->media of the packet's m-line, or -1. Tries, in
 * order: an SSRC already learned, the mid header extension, the declared
 * SSRCs, then payload type membership; what is found is remembered for the
 * packet's SSRC so later packets take the first, cheapest path. */
int moat_echo_route(moat_echo_session *s, const uint8_t *packet, const moat_rtp_header *h);

/* Index of the m-line whose local (gateway) SSRC is `ssrc`, or -1. */
int moat_echo_media_by_local_ssrc(const moat_echo_session *s, uint32_t ssrc);

#endif
