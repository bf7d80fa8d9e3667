/* Writing one element of an RTP header extension (RFC 8285 one-byte
 * header form) into a packet in place: the transport-wide sequence number
 * and the playout delay a session stamps on what it sends. Pure; any
 * thread; the buffer belongs to the caller. */
#ifndef MOAT_RTP_EXTENSION_PUT_H
#define MOAT_RTP_EXTENSION_PUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes `size` bytes of `value` (1..16) as element `id` (1..14) of the
 * packet data[0..*length): over the element when it is there with that
 * size, appended to a one-byte-header block, or in a new block after the
 * CSRCs. *length grows by what was added; `capacity` bounds it. false,
 * nothing written, when the packet cannot take it: shorter than a header,
 * a two-byte-header block, the element there with another size, a block
 * running past the packet, or no room. */
bool moat_rtp_put_extension(uint8_t *data, size_t *length, size_t capacity, uint8_t id,
                            const uint8_t *value, size_t size);

#endif
