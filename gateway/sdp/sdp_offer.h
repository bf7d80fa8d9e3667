/* Building an SDP offer (JSEP, RFC 8829) as a full ICE agent and DTLS-SRTP
 * endpoint writes it: every m-line in one BUNDLE group, rtcp-mux,
 * a=setup:actpass unless told otherwise, host candidates and the SRTP+
 * schemes offered (SRTPPLUS.md §6). What Moat's tools send to a WHIP
 * endpoint; the gateway itself only answers. */
#ifndef MOAT_SDP_OFFER_H
#define MOAT_SDP_OFFER_H

#include <stddef.h>
#include <stdint.h>

#include "sdp/sdp_types.h"

#define MOAT_SDP_OFFER_MAX_RTCP_FB 8

typedef struct {
    uint8_t pt; /* 0..127 */
    const char *name;
    uint32_t clock_rate;
    uint8_t channels;                                /* 0: not written */
    const char *fmtp;                                /* NULL or "": no a=fmtp */
    const char *rtcp_fb[MOAT_SDP_OFFER_MAX_RTCP_FB]; /* NULL-terminated unless full */
} moat_sdp_offer_codec;

typedef struct {
    moat_media_kind kind; /* audio or video */
    const char *mid;
    moat_sdp_direction direction;
    const moat_sdp_offer_codec *codecs; /* preference order */
    size_t n_codecs;
    uint32_t ssrc; /* 0: no a=ssrc lines */
} moat_sdp_offer_media;

typedef struct {
    uint64_t session_id;
    const char *ice_ufrag, *ice_pwd;
    const char *fingerprint_sha256;       /* "AB:CD:..." */
    moat_sdp_setup setup;                 /* NONE is written as actpass */
    const char *cname;                    /* for a=ssrc; NULL: "moat" */
    const moat_sdp_candidate *candidates; /* under the first m-line, then end-of-candidates */
    size_t n_candidates;
    const moat_sdp_srtpplus *srtpplus; /* in preference order, on every m-line */
    size_t n_srtpplus;
    const moat_sdp_offer_media *media;
    size_t n_media; /* 1..MOAT_SDP_MAX_MEDIA */
} moat_sdp_offer_params;

/* Returns the offer (g_malloc'd, CRLF line ends; free with g_free), or NULL
 * with a message when a parameter cannot be written safely: missing or
 * invalid credentials, fingerprint, mid, codec name or fmtp (characters
 * outside their grammar, CR, LF), a payload type above 127, an unknown
 * SRTP+ scheme or invalid chain parameters, a candidate that does not
 * format. */
char *moat_sdp_offer_create(const moat_sdp_offer_params *params, char *error, size_t error_size);

#endif
