/* The TCP baseline's framing: each IP packet goes as a 2-byte big-endian
 * length and the packet. The reader takes the byte stream in any pieces and
 * hands out whole packets; a length of 0 or over its maximum is a protocol
 * error (the stream cannot be resynchronised). Pure, no I/O. */
#ifndef TUNNEL_FRAME_H
#define TUNNEL_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define TUNNEL_FRAME_HEADER 2
#define TUNNEL_FRAME_MAX    65535u

typedef struct {
    size_t max_packet; /* larger lengths are errors (at most TUNNEL_FRAME_MAX) */
    uint8_t buffer[TUNNEL_FRAME_HEADER + TUNNEL_FRAME_MAX];
    size_t have; /* bytes of the current frame so far */
} tunnel_frame_reader;

void tunnel_frame_reader_init(tunnel_frame_reader *r, size_t max_packet);

/* Takes up to `length` bytes of the stream from `data`. Returns how many
 * bytes it consumed (>= 0) and sets packet and packet_length when a whole
 * packet is ready (valid until the next call); -1 on a bad length. Call
 * again with the rest until it consumed everything. */
long tunnel_frame_feed(tunnel_frame_reader *r, const uint8_t *data, size_t length,
                       const uint8_t **packet, size_t *packet_length);

/* Writes the header for a packet of `length` bytes (1..TUNNEL_FRAME_MAX)
 * into header; -1 for a length that cannot be framed. */
int tunnel_frame_header(size_t length, uint8_t header[TUNNEL_FRAME_HEADER]);

#endif
