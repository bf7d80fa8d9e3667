/* What the call layer needs from SDP to decide on transcoding: the codecs
 * of one m-line (payload types, rtpmap names and rates, RFC 3551 static
 * types), the plan for two legs (which codec on each side, telephone-event
 * on each side, or no transcoding when they share a codec), and the ng
 * `codec-transcode` rewrite that adds codecs to an offer so the answerer
 * may pick one the offerer lacks. Stateless; any thread. Hostile input:
 * bounded lines (sdp_lex.h), at most MOAT_TRANSCODE_SDP_MAX_CODECS. */
#ifndef MOAT_TRANSCODE_SDP_H
#define MOAT_TRANSCODE_SDP_H

#include "transcode/transcoder.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_TRANSCODE_SDP_MAX_CODECS 32
#define MOAT_TRANSCODE_SDP_MAX_LENGTH 65536

typedef struct {
    char name[32]; /* as in a=rtpmap, or the RFC 3551 name of a static type */
    uint32_t clock_rate;
    unsigned channels;
    uint8_t payload_type;
} moat_transcode_sdp_codec;

/* The formats of one m-line in preference (m=) order; formats without a
 * name (dynamic without rtpmap) are left out. */
typedef struct {
    moat_transcode_sdp_codec codecs[MOAT_TRANSCODE_SDP_MAX_CODECS];
    size_t n_codecs;
} moat_transcode_sdp_codecs;

/* The codecs of the m-line at `media_index` (0-based). 0, or -1 with a
 * message (no such m-line, malformed m= or a=rtpmap). */
int moat_transcode_sdp_codecs_of(const char *text, size_t length, size_t media_index,
                                 moat_transcode_sdp_codecs *out, char *error, size_t error_size);

/* How a call's two legs exchange audio: the first codec the answer chose
 * (its first non-telephone-event codec) against the offer. When the offer
 * has it, no transcoding; otherwise the offer's first codec the transcoder
 * supports on side 0, the answer's on side 1, with each side's
 * telephone-event of the codec's clock rate (or any) when present. Names
 * point into the two codec lists, which must outlive the plan. */
typedef struct {
    bool transcode;
    moat_transcoder_codec sides[2]; /* side 0: offerer, side 1: answerer */
} moat_transcode_plan;

/* 0, or -1 with a message when transcoding is needed but impossible. */
int moat_transcode_plan_make(const moat_transcode_sdp_codecs *offer,
                             const moat_transcode_sdp_codecs *answer, moat_transcode_plan *plan,
                             char *error, size_t error_size);

/* Appends `text` to out with every name of `add` (that the transcoder
 * supports and the m-line lacks) added to each audio m-line: a static
 * payload type for PCMU/PCMA/G722 when free, else a free dynamic one, an
 * a=rtpmap, and a telephone-event at the added codec's rate when the
 * m-line has one at another rate. -1 with a message on malformed SDP. */
int moat_transcode_sdp_add_codecs(const char *text, size_t length, const char *const *add,
                                  size_t n_add, GString *out, char *error, size_t error_size);

/* Appends `text` to out with the m-line at `media_index` restricted to
 * `codec` (and its telephone-event when it has one): what a party gets back
 * when the other side answered with a codec it lacks and Moat transcodes.
 * The m-line's formats become those payload types, its a=rtpmap and a=fmtp
 * lines are replaced by theirs; everything else is kept. -1 with a message
 * on malformed SDP or a missing m-line. */
int moat_transcode_sdp_restrict(const char *text, size_t length, size_t media_index,
                                const moat_transcoder_codec *codec, GString *out, char *error,
                                size_t error_size);
/* The most moat_transcode_sdp_restrict makes an SDP whose lines end in
 * CRLF (Moat's rewrite writes them so) longer, for a codec whose name is
 * at most 31 bytes (moat_transcode_sdp_codec's): the m-line's formats
 * " 255 255" (8), "a=rtpmap:255 <name>/<rate>/<channels>\r\n" (68),
 * "a=rtpmap:255 telephone-event/<rate>\r\n" (41) and "a=fmtp:255 0-16\r\n"
 * (17); what it drops (the old formats, a=rtpmap, a=fmtp, empty lines)
 * only shortens it. What an answer's reply reserves per m-line for it. */
#define MOAT_TRANSCODE_SDP_RESTRICT_GROWTH 134

#endif
