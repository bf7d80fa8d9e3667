/* What a forwarding plugin changes in a source packet before it sends it
 * to one subscriber (SSRC, payload type, sequence number, timestamp, a
 * VP8/VP9 picture id and TL0PICIDX, header extensions stripped), as data,
 * and the one function that applies it. The forward path and the NACK
 * path both apply it, so a packet rebuilt from the source for a
 * retransmission is byte for byte the one first sent. Pure; the struct
 * belongs to its caller. */
#ifndef MOAT_RTP_REWRITE_H
#define MOAT_RTP_REWRITE_H

#include <stddef.h>
#include <stdint.h>

#define MOAT_RTP_REWRITE_STRIP_EXTENSIONS 0x01u
#define MOAT_RTP_REWRITE_PICTURE          0x02u /* write picture_id at picture_id_offset */
#define MOAT_RTP_REWRITE_TL0PICIDX        0x04u /* write tl0picidx at tl0picidx_offset */

/* 20 bytes: a retransmission map keeps one per packet sent. */
struct moat_rtp_rewrite {
    uint32_t ssrc;
    uint32_t timestamp;
    uint16_t sequence;
    uint16_t picture_id;       /* masked to picture_id_bits */
    uint8_t payload_type;      /* 7 bits */
    uint8_t flags;             /* MOAT_RTP_REWRITE_* */
    uint8_t picture_id_bits;   /* 7 or 15 with MOAT_RTP_REWRITE_PICTURE */
    uint8_t picture_id_offset; /* from the payload's start (descriptor) */
    uint8_t tl0picidx;
    uint8_t tl0picidx_offset; /* from the payload's start */
};
typedef struct moat_rtp_rewrite moat_rtp_rewrite;

/* Rewrites the RTP packet data[0..*length) in place: descriptor ids
 * first (at offsets from the payload's start, as parsed from this packet),
 * then extensions stripped (*length shrinks), then payload type, sequence
 * number, timestamp and SSRC. The marker bit, CSRCs, payload and padding
 * stay. MOAT_RTP_OK, or an error (nothing written) when the packet does not
 * parse or an offset is past the payload. */
int moat_rtp_rewrite_apply(uint8_t *data, size_t *length, const moat_rtp_rewrite *rewrite);

#endif
