/* Which offered payload types the gateway accepts on an RTP m-line, and
 * which of their RTCP feedback types it echoes. */
#ifndef MOAT_SDP_CODEC_SELECT_H
#define MOAT_SDP_CODEC_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "sdp_types.h"

#define MOAT_SDP_MAX_ACCEPTED_CODECS 16

typedef struct {
    const moat_sdp_codec *offered;
    const char *name; /* canonical: "opus", "PCMU", "VP8", "H264", ... */
    uint32_t clock_rate;
    uint8_t channels;     /* written in a=rtpmap when nonzero */
    const char *fmtp;     /* what the answer writes; "" for none */
    bool telephone_event; /* carries no media of its own */
} moat_sdp_codec_choice;

/* Fills `out` with the accepted codecs in the offerer's preference order and
 * returns how many. Returns 0 when nothing but telephone-event would remain:
 * such an m-line is rejected. */
size_t moat_sdp_codec_select(const moat_sdp_media *m, moat_sdp_codec_choice *out, size_t max);

/* Keeps the choices `accept` takes (telephone-event only while a media
 * codec remains), in order; returns how many are left, 0 when no media
 * codec is. */
size_t moat_sdp_codec_filter(moat_sdp_codec_choice *choices, size_t n, size_t media_index,
                             moat_media_kind kind,
                             bool (*accept)(void *user, size_t media_index, moat_media_kind kind,
                                            const char *name, uint32_t clock_rate),
                             void *user);

/* nack, nack pli, ccm fir, goog-remb and transport-cc: what the gateway
 * implements (transport-cc only where its header extension is answered:
 * sdp_negotiate.h). */
bool moat_sdp_rtcp_fb_supported(const char *feedback);

#endif
