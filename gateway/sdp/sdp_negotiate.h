/* The decisions behind an answer: which m-lines are accepted, with which
 * codecs and header extensions, which transport and roles, which SRTP+
 * scheme, and the gateway's own SSRCs. sdp_answer_write.c turns the plan
 * into text; the negotiation is what the rest of the gateway uses. */
#ifndef MOAT_SDP_NEGOTIATE_H
#define MOAT_SDP_NEGOTIATE_H

#include "sdp_codec_select.h"
#include "sdp_types.h"

typedef struct {
    bool accepted;
    bool data_channel;
    bool data_channel_legacy; /* offered as "DTLS/SCTP <port>" (pre-RFC 8841) */
    moat_sdp_codec_choice codecs[MOAT_SDP_MAX_ACCEPTED_CODECS];
    size_t n_codecs;
    /* RFC 4588: the offered rtx payload type whose apt= names codecs[c]
     * (video only), NULL none; answered after the codecs. */
    const moat_sdp_codec *rtx[MOAT_SDP_MAX_ACCEPTED_CODECS];
    size_t extmaps[MOAT_SDP_MAX_EXTMAPS]; /* indexes into the offer's m-line extmaps */
    size_t n_extmaps;
} moat_sdp_plan_media;

typedef struct {
    moat_sdp_plan_media media[MOAT_SDP_MAX_MEDIA];
    const moat_sdp_media *transport; /* the first accepted m-line: remote ICE and DTLS */
    uint32_t max_message_size;       /* what the answer announces */
} moat_sdp_plan;

/* transport-wide congestion control (draft-holmer-rmcat-transport-wide-cc-
 * extensions): its header extension is answered on m-lines where the peer
 * sends (the gateway then feeds back what it receives, session_media.c);
 * the transport-cc rtcp-fb is answered where the extension is. */
#define MOAT_SDP_URI_TRANSPORT_CC                                                                  \
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
bool moat_sdp_plan_transport_cc(const moat_sdp_media *m, const moat_sdp_plan_media *pm);

/* params must already be checked (sdp_answer.c). 0, or -1 with a message. */
int moat_sdp_negotiate(const moat_sdp *offer, const moat_sdp_answer_params *params,
                       moat_sdp_plan *plan, moat_sdp_negotiation *out, char *error,
                       size_t error_size);

#endif
