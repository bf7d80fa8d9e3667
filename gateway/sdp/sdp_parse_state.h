/* What the offer parser keeps while it walks the lines and hands to the
 * resolution step (sdp_resolve.c) that applies session-level and BUNDLE
 * inheritance and checks what a usable offer must carry. */
#ifndef MOAT_SDP_PARSE_STATE_H
#define MOAT_SDP_PARSE_STATE_H

#include "sdp_types.h"

typedef struct {
    moat_sdp *sdp;
    moat_sdp_media *session; /* session-level attributes, parsed like an m-line's */
    bool media_has_direction[MOAT_SDP_MAX_MEDIA]; /* else the session's (default sendrecv) */
    bool has_origin;
    /* The line of a session-level a=fingerprint with a hash the gateway does
     * not take (0 none): an error only for an m-line left without one of
     * its own (RFC 8122: a media-level fingerprint replaces the session's). */
    size_t session_unsupported_fingerprint_line;
} moat_sdp_parse_state;

/* Inherits session and BUNDLE values into every m-line and validates the
 * result. 0, or -1 with a message. */
int moat_sdp_resolve(moat_sdp_parse_state *state, char *error, size_t error_size);

#endif
