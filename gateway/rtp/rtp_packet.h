/* RTP fixed header (RFC 3550 section 5.1), header extensions (RFC 8285) and
 * the RTP/RTCP split on a muxed port (RFC 5761). Parsing never writes and
 * never reads past `len`; offsets in moat_rtp_header are from the start of the
 * packet and are valid only together with the buffer that was parsed. */
#ifndef MOAT_RTP_PACKET_H
#define MOAT_RTP_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtp/rtp_error.h"

#define MOAT_RTP_VERSION           2
#define MOAT_RTP_FIXED_HEADER_SIZE 12
#define MOAT_RTP_MAX_CSRC          15

/* Profiles of the two RFC 8285 extension forms. The two-byte form carries an
 * application-chosen 4-bit value in the low bits ("appbits"). */
#define MOAT_RTP_EXTENSION_ONE_BYTE      0xBEDE
#define MOAT_RTP_EXTENSION_TWO_BYTE      0x1000
#define MOAT_RTP_EXTENSION_TWO_BYTE_MASK 0xFFF0

typedef struct {
    uint8_t version;
    bool padding, extension, marker;
    uint8_t csrc_count, payload_type;
    uint16_t sequence;
    uint32_t timestamp, ssrc;
    /* Fixed header + CSRCs + extension (its 4-byte header and data). */
    size_t header_length;
    uint16_t extension_profile;
    /* Extension data, after the 4-byte profile/length word; 0/0 without one. */
    size_t extension_offset, extension_length;
    size_t payload_offset, payload_length;
    uint8_t padding_length;
} moat_rtp_header;

/* Parses and validates the header of an RTP packet. Returns MOAT_RTP_OK or a
 * negative moat_rtp_result; *out is only meaningful on success. */
int moat_rtp_parse(const uint8_t *buf, size_t len, moat_rtp_header *out);

/* One step of the walk over a one-byte-form extension block (RFC 8285
 * section 4.2) ext[0..n), the one rule every reader and writer of that form
 * follows: zero octets are padding; id 15, or an id-0 octet with a nonzero
 * length (what libwebrtc treats as malformed), ends processing. From *at,
 * returns MOAT_RTP_ONE_BYTE_ELEMENT with the next element's id and value
 * (*value = ext + offset, *size 1..16) and *at past it; MOAT_RTP_ONE_BYTE_END
 * when the block is done or processing ends (*at stays at the octet that ended
 * it, n at a clean end); MOAT_RTP_ONE_BYTE_OVERRUN when the element runs past
 * the block. Pure; any thread. */
enum { MOAT_RTP_ONE_BYTE_ELEMENT, MOAT_RTP_ONE_BYTE_END, MOAT_RTP_ONE_BYTE_OVERRUN };
int moat_rtp_one_byte_next(const uint8_t *ext, size_t n, size_t *at, uint8_t *id,
                           const uint8_t **value, size_t *size);

/* Finds the element with `id` in the header extension of a packet parsed into
 * `h` (one-byte form: id 1..14, two-byte form: id 1..255). On success *data
 * points into `buf` and *len is the element's length (may be 0 in the
 * two-byte form). Returns MOAT_RTP_ERR_NOT_FOUND when absent, when the packet
 * has no extension or an unknown profile, MOAT_RTP_ERR_MALFORMED when an
 * element runs past the extension. */
int moat_rtp_find_extension(const uint8_t *buf, const moat_rtp_header *h, uint8_t id,
                            const uint8_t **data, size_t *len);

/* In-place header rewrites. `buf` must hold at least the 12-byte fixed header
 * (true of any packet moat_rtp_parse accepted). */
void moat_rtp_set_ssrc(uint8_t *buf, uint32_t ssrc);
void moat_rtp_set_sequence(uint8_t *buf, uint16_t sequence);
/* Keeps the marker bit; payload_type is masked to 7 bits. */
void moat_rtp_set_payload_type(uint8_t *buf, uint8_t payload_type);
void moat_rtp_set_timestamp(uint8_t *buf, uint32_t timestamp);

/* RFC 5761 section 4: on a port shared by RTP and RTCP, a packet whose second
 * octet is 192..223 is RTCP (those values would be RTP payload types 64..95
 * with the marker set, which rtcp-mux forbids). False for packets shorter
 * than 2 octets. Neither kind is validated further here. */
bool moat_rtp_is_rtcp(const uint8_t *buf, size_t len);

#endif
