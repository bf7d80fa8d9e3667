/* SDP of SIP phones for the call layer: plain RTP/AVP (and SAVP, AVPF)
 * offers and answers without ICE or DTLS. Parsing reads what the relay
 * needs (per m-line: the party's address and ports, rtcp-mux, transport,
 * direction);
 * rewriting copies the text line by line and changes only what Moat must:
 * c= (our address), m= ports and transport, o= with replace-origin,
 * a=rtcp/a=rtcp-mux, ICE attributes removed, stripped codecs. Hostile input:
 * bounded lines (sdp_lex.h), no hostnames, at most MOAT_CALL_SDP_MAX_MEDIA
 * m-lines. Stateless; any thread. */
#ifndef MOAT_CALL_SDP_H
#define MOAT_CALL_SDP_H

#include "sdp/sdp_crypto.h"

#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_CALL_SDP_MAX_MEDIA  8
#define MOAT_CALL_SDP_MAX_LENGTH 65536
#define MOAT_CALL_SDP_MAX_CRYPTO 8 /* a=crypto lines kept per m-line */

/* a=sendrecv, sendonly, recvonly, inactive (RFC 4566 section 6). */
typedef enum {
    MOAT_CALL_SDP_SENDRECV = 0, /* also without the attribute */
    MOAT_CALL_SDP_SENDONLY,
    MOAT_CALL_SDP_RECVONLY,
    MOAT_CALL_SDP_INACTIVE,
} moat_call_sdp_direction;

typedef struct {
    char kind[16];           /* audio, video, ... */
    char proto[32];          /* RTP/AVP, RTP/SAVP, ... */
    uint16_t port;           /* 0: the m-line is refused or disabled */
    struct sockaddr_in6 rtp; /* the party's RTP address; sin6_family 0: none (0.0.0.0, hold) */
    uint16_t rtcp_port;      /* a=rtcp; 0: RTP port + 1 */
    bool rtcp_mux;
    moat_call_sdp_direction direction; /* media level, else session level */
    bool ice;                          /* ICE attributes (session or media level) */
    /* WebRTC markers (session or media level): a=ice-ufrag, a=ice-pwd,
     * a=fingerprint. */
    bool ice_ufrag, ice_pwd, fingerprint;
    size_t n_formats;
    /* a=crypto lines (SDES, RFC 4568) of suites Moat runs, in offer order;
     * malformed ones and further ones are not kept. Secret: the registry
     * wipes what it stores. */
    moat_sdp_crypto crypto[MOAT_CALL_SDP_MAX_CRYPTO];
    size_t n_crypto;
    bool srtpplus_prn; /* a=srtpplus:prn (SRTPPLUS.md), media or session level */
} moat_call_sdp_media;

typedef struct {
    moat_call_sdp_media media[MOAT_CALL_SDP_MAX_MEDIA];
    size_t n_media;
} moat_call_sdp;

/* 0, or -1 with a message for the error-reason. */
int moat_call_sdp_parse(const char *text, size_t length, moat_call_sdp *out, char *error,
                        size_t error_size);

/* Where the party's RTCP goes when the leg does not mux: a=rtcp's port,
 * else the RTP port + 1, on the RTP address; false when there is none
 * (m-line disabled or held, or an RTP port of 65535 with no a=rtcp). */
bool moat_call_rtcp_destination(const moat_call_sdp_media *media, struct sockaddr_in6 *to);

/* Whether the party is a WebRTC client: an m-line in use with a DTLS
 * transport (UDP/TLS/RTP/SAVPF) or a fingerprint. ICE alone is not enough:
 * SIP phones may run ICE (RFC 5245) over plain RTP. */
bool moat_call_sdp_is_webrtc(const moat_call_sdp *sdp);
/* A WebRTC party's SDP must carry what ICE-lite and DTLS-SRTP need on each
 * m-line in use: a=ice-ufrag, a=ice-pwd and a=fingerprint. 0, or -1 with
 * a message for the error-reason. */
int moat_call_sdp_check_webrtc(const moat_call_sdp *sdp, char *error, size_t error_size);

typedef struct {
    const char *address;                     /* our address for c= (and o= with replace_origin) */
    uint16_t ports[MOAT_CALL_SDP_MAX_MEDIA]; /* our RTP port per m-line; 0 keeps 0 */
    bool rtcp_mux[MOAT_CALL_SDP_MAX_MEDIA];  /* announce a=rtcp-mux (else a=rtcp:port+1) */
    const char *transport_protocol;          /* NULL: keep each m-line's */
    bool replace_origin;
    const char *const *strip; /* codec names removed ("all": every one) */
    size_t n_strip;
    /* SDES termination (call_sdes.c): per m-line, the transport to write
     * (NULL: transport_protocol) and, when replace_crypto[i], the a=crypto
     * lines that replace the party's (none: all removed). */
    const char *media_transport[MOAT_CALL_SDP_MAX_MEDIA];
    bool replace_crypto[MOAT_CALL_SDP_MAX_MEDIA];
    const moat_sdp_crypto *crypto[MOAT_CALL_SDP_MAX_MEDIA];
    size_t n_crypto[MOAT_CALL_SDP_MAX_MEDIA];
    bool srtpplus[MOAT_CALL_SDP_MAX_MEDIA]; /* with replace_crypto: write a=srtpplus:prn */
} moat_call_sdp_rewrite;

/* Appends the rewritten SDP (CRLF lines) to out; -1 with a message when the
 * text does not parse or stripping leaves an m-line without a codec. */
int moat_call_sdp_rewrite_text(const char *text, size_t length, const moat_call_sdp_rewrite *how,
                               GString *out, char *error, size_t error_size);

#endif
