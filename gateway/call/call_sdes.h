/* SDES-SRTP termination on call legs (RFC 4568): where one party speaks
 * RTP/SAVP with a=crypto and the other plain RTP/AVP, the leg facing the
 * SRTP party keys an SRTP session (call_media.h) from our a=crypto line and
 * the party's. Offer: an SRTP offerer's line is chosen under the request's
 * SDES policy and answered with our key; a plain offerer sent on as SAVP
 * gets our offered lines. Answer: the answerer's chosen line keys its leg,
 * and the offerer gets its own profile back (with our answer line when it
 * offered SRTP). Key material is wiped when a call is freed. Control
 * thread. */
#ifndef MOAT_CALL_SDES_H
#define MOAT_CALL_SDES_H

#include "call/call_media.h"
#include "call/call_sdp.h"
#include "ng/ng_request.h"

#define MOAT_CALL_SDES_OFFERS 3

/* What Moat said to one party, per m-line. */
typedef struct {
    moat_sdp_crypto offered[MOAT_CALL_SDP_MAX_MEDIA][MOAT_CALL_SDES_OFFERS];
    size_t n_offered[MOAT_CALL_SDP_MAX_MEDIA]; /* 0: we offered no SDES to this party */
    moat_sdp_crypto answer[MOAT_CALL_SDP_MAX_MEDIA];
    bool has_answer[MOAT_CALL_SDP_MAX_MEDIA]; /* we answered this party's SDES offer */
} moat_call_sdes_side;

/* Fills how->protocols / drop_crypto / extra (extra strings are the
 * caller's to g_free) for the offer from side `offerer` to the other side,
 * and keys the offerer's legs that terminate SRTP. 0, or -1 with error. */
int moat_call_sdes_offer(moat_call_sdes_side sides[2], int offerer, const moat_call_sdp *offer,
                         const moat_ng_request *request, moat_call_stream *const *streams,
                         moat_call_sdp_rewrite *how, char **extra, char *error, size_t error_size);

/* The same for the answer from side `answerer` to the offerer, whose offer
 * SDP was `offer`. */
int moat_call_sdes_answer(moat_call_sdes_side sides[2], int answerer, const moat_call_sdp *answer,
                          const moat_call_sdp *offer, moat_call_stream *const *streams,
                          moat_call_sdp_rewrite *how, char **extra, char *error, size_t error_size);

void moat_call_sdes_clear(moat_call_sdes_side *side);

#endif
