/* The fan-out roles a legitimate session can take (--subscribers): the
 * publisher (audio and video sendonly, paced by sfu_source.h) or a
 * subscriber (recvonly, counting what arrives with sfu_loss.h). A
 * subscriber either offers (WHEP) or answers an offer the SFU made (Janus
 * videoroom). An offering peer is the controlling agent and also answers a
 * full peer's checks; an answering subscriber is an ICE-lite responder,
 * since the offering full agent controls (RFC 8445 §6.1.1). The caller sets
 * flood_session.sfu before flood_session_open and frees it after the
 * reports; the session's media loop is the only user. */
#ifndef SFU_PEER_H
#define SFU_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flood_session.h"
#include "ice/ice_checker.h"
#include "sfu_loss.h"
#include "sfu_source.h"

typedef enum { SFU_ROLE_PUBLISHER, SFU_ROLE_SUBSCRIBER } sfu_role;

struct sfu_peer {
    sfu_role role;
    bool answering;            /* the SFU offered; we answered as ICE-lite */
    moat_ice_checker *checker; /* answers the peer's checks */
    uint32_t audio_ssrc, video_ssrc;
    uint8_t audio_pt, video_pt;
    sfu_source source; /* publisher */
    bool sending;
    uint64_t sent, send_errors;
    sfu_loss loss; /* subscriber */
};

sfu_peer *sfu_peer_new(sfu_role role);
/* Frees the checker; counters stay readable. */
void sfu_peer_release(sfu_peer *p);
void sfu_peer_free(sfu_peer *p);

/* The offer (g_malloc'd): audio (Opus) and video (VP8) in one BUNDLE,
 * sendonly for the publisher, recvonly for a subscriber. */
char *sfu_peer_build_offer(const flood_session *s, char *error, size_t error_size);
/* After session_answer_apply: the publisher's payload types by kind. */
int sfu_peer_take_answer(flood_session *s, const char *answer, char *error, size_t error_size);
/* An answering subscriber: our recvonly answer to the SFU's offer
 * (g_malloc'd), ICE-lite, DTLS passive (the SFU starts the handshake). */
char *sfu_peer_build_answer(flood_session *s, const char *offer, char *error, size_t error_size);

/* An incoming Binding request: answered (as the controlling agent, or as
 * the controlled lite one when answering); for an answering subscriber a
 * nominating one selects the pair and waits for the SFU's DTLS. */
void sfu_peer_on_stun_request(flood_session *s, const uint8_t *data, size_t length,
                              const struct sockaddr_in6 *from, uint64_t now_us);

/* Publisher: starts the paced source; sends what is due. */
void sfu_peer_start(flood_session *s, uint64_t now_us);
void sfu_peer_send_due(flood_session *s, uint64_t now_us);
uint64_t sfu_peer_next_due_us(const flood_session *s);
/* One SRTP or SRTCP datagram from the selected pair. */
void sfu_peer_on_srtp(flood_session *s, uint8_t *data, size_t length);

#endif
