/* BUNDLE demultiplexing for the media routing core (plugin API v2): maps an
 * authenticated RTP packet to its m-line (mid header extension, then a
 * learned or declared SSRC, then the payload type), reads the header
 * extensions the core knows, counts sequence-number rollovers per SSRC and
 * unwraps RTX (RFC 4588) in place to the original stream.
 *
 * One demux per session, owned and used by the session's worker only; the
 * m-line table it points to must outlive it. No allocation. */
#ifndef MOAT_RTP_DEMUX_H
#define MOAT_RTP_DEMUX_H

#include "plugin.h"
#include "rtp/rtp_packet.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SSRCs remembered per session: media, RTX and simulcast layers. */
#define MOAT_DEMUX_MAX_STREAMS 32

typedef struct {
    uint32_t ssrc;
    int media_index;
    bool rtx;
    bool started;
    uint64_t highest; /* extended highest sequence number */
    uint64_t last_us; /* arrival of its latest packet (media streams) */
    char rid[MOAT_PLUGIN_RID_SIZE];
} moat_demux_stream;

typedef struct {
    const moat_media_info *media;
    size_t n_media;
    moat_extension_ids ids; /* BUNDLE shares one id per URI (RFC 8843 §9.2) */
    moat_demux_stream streams[MOAT_DEMUX_MAX_STREAMS];
    size_t n_streams;
    uint32_t primary[MOAT_PLUGIN_MAX_MEDIA]; /* first media SSRC with payload, per m-line */
} moat_rtp_demux;

void moat_rtp_demux_init(moat_rtp_demux *demux, const moat_media_info *media, size_t n_media);
/* Fills *out for `data` (plaintext RTP, `capacity` bytes of buffer). Returns 0,
 * or -1 when the packet is not valid RTP. A packet that matches no m-line is
 * still described, with media_index -1. An RTX packet is rewritten in place
 * (length shrinks by 2) when its original stream and payload type are known. */
int moat_rtp_demux_packet(moat_rtp_demux *demux, uint8_t *data, size_t length, size_t capacity,
                          uint64_t arrival_us, moat_rtp_packet *out);
/* Declares that `ssrc` is the simulcast layer `rid` of m-line
 * `media_index` (an RTX stream repairing that layer when `rtx`), as if its
 * first packet had carried the rid header extension: a cascade leg
 * (session_cascade.h) is told its layers' SSRCs over the control plane and
 * its packets carry no rid. False when the table is full, the SSRC known
 * or the index out of range. */
bool moat_rtp_demux_declare(moat_rtp_demux *demux, uint32_t ssrc, int media_index, const char *rid,
                            bool rtx);
/* Whether the m-line `media_index` accepted payload type `pt` (a codec's, or
 * its RTX's): what the core delivers to a plugin. */
bool moat_rtp_demux_accepts(const moat_rtp_demux *demux, int media_index, uint8_t pt);
/* The same for a packet the caller already parsed into `header`. */
void moat_rtp_demux_parsed(moat_rtp_demux *demux, uint8_t *data, size_t length, size_t capacity,
                           const moat_rtp_header *header, uint64_t arrival_us,
                           moat_rtp_packet *out);

#endif
