/* SDES-SRTP termination in a call (RFC 4568): when the ng request changes a
 * party's transport between RTP/AVP and RTP/SAVP, Moat runs SRTP on the leg
 * facing the SRTP party. As the answerer of an SDES offer it picks one of
 * the party's a=crypto lines (honouring SDES-off / only- / no-) and answers
 * it with its own key; as the offerer it offers fresh keys for the allowed
 * suites and keys the leg from the line the party's answer picks (by tag).
 * Keys come from the CSPRNG (srtp/sdes_keys.h), or from the call's
 * journal when it is being restored (call_journal.h), and go to the leg's SRTP
 * session (moat_call_stream_set_srtp), which authenticates every packet
 * before it may latch. Transports that do not change are relayed as they
 * are (end-to-end SRTP untouched). A WebRTC party's media is plain RTP at
 * Moat (its session terminates DTLS-SRTP), so an SDES phone facing one is
 * terminated like one facing a plain phone. Control thread. */
#ifndef MOAT_CALL_SDES_H
#define MOAT_CALL_SDES_H

#include "call/call_journal.h"
#include "call/call_media.h"
#include "call/call_sdp.h"
#include "ng/ng_request.h"
#include "sdp/sdp_crypto.h"

#define MOAT_CALL_SDES_MAX_OFFERED 3 /* one line per suite Moat runs */

typedef struct {
    bool terminated; /* Moat runs SRTP towards this party on this m-line */
    char proto[32];  /* the party's own transport (its answer is rewritten back to it) */
    moat_sdp_crypto offered[MOAT_CALL_SDES_MAX_OFFERED]; /* what Moat offered this party */
    size_t n_offered;
    moat_sdp_crypto local; /* Moat's line in use once keyed */
    bool keyed;
    bool srtpplus; /* SRTP+ (prn) negotiated with the party */
} moat_call_sdes_leg;

typedef struct {
    moat_call_sdes_leg legs[2][MOAT_CALL_SDP_MAX_MEDIA]; /* [side][m-line] */
    /* The call's journal (not owned; NULL: none): each key Moat writes is
     * recorded there, or taken from it when the call is being restored. */
    moat_call_journal *journal;
    /* Set by the caller before each offer and answer: the party on side s
     * is a WebRTC party (its transport counts as RTP/AVP here). */
    bool webrtc[2];
} moat_call_sdes;

/* An offer from `side` (its SDP parsed in sdp): decides each m-line's
 * termination, keys the offerer's SDES legs, and fills the SDES fields of
 * `how` (the rewrite towards the other side). 0, or -1 with an
 * error-reason. */
int moat_call_sdes_offer(moat_call_sdes *sdes, int side, const moat_call_sdp *sdp,
                         const moat_ng_request *request, moat_call_stream *const *streams,
                         moat_call_sdp_rewrite *how, char *error, size_t error_size);

/* The answer from `answerer`: keys the answerer's SDES legs from the lines
 * it picked, and fills `how` (the rewrite back to the offerer, in the
 * offerer's own transport, with Moat's answer lines). */
int moat_call_sdes_answer(moat_call_sdes *sdes, int answerer, const moat_call_sdp *sdp,
                          moat_call_stream *const *streams, moat_call_sdp_rewrite *how, char *error,
                          size_t error_size);

/* Wipes the keys. */
void moat_call_sdes_clear(moat_call_sdes *sdes);

#endif
