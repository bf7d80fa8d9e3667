/* A connected session's legitimate traffic: RTP from its rtp_source through
 * SRTP (and SRTP+ when negotiated), a sender report every second, and the
 * echoes and RTCP that come back (loss, jitter, RTT; PLI/FIR ask for a
 * keyframe). */
#ifndef LEGIT_MEDIA_H
#define LEGIT_MEDIA_H

#include "flood_session.h"

/* Right after DTLS connected: sizes and fields the attack thread reads. */
void legit_media_prepare(flood_session *s);
/* Starts the source (with a random offset within one frame interval so
 * sessions do not send in lockstep) and the echo statistics. */
void legit_media_start(flood_session *s, uint64_t now_us);
/* Sends every frame (and sender report) that is due. */
void legit_media_send_due(flood_session *s, uint64_t now_us);
uint64_t legit_media_next_due_us(const flood_session *s);
/* One SRTP or SRTCP datagram from the selected pair. */
void legit_media_on_srtp(flood_session *s, uint8_t *data, size_t length, uint64_t now_us);

#endif
