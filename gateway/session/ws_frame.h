/* WebSocket framing (RFC 6455 §5) as the server side of a send-only stream
 * needs it: parsing one client frame's header from bytes received, unmasking
 * a payload, and building a server frame's header. No I/O, no allocation;
 * any thread. Reads nothing beyond `length`. */
#ifndef MOAT_WS_FRAME_H
#define MOAT_WS_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    MOAT_WS_CONTINUATION = 0x0,
    MOAT_WS_TEXT = 0x1,
    MOAT_WS_BINARY = 0x2,
    MOAT_WS_CLOSE = 0x8,
    MOAT_WS_PING = 0x9,
    MOAT_WS_PONG = 0xA,
};

/* A control frame's payload is at most this long (§5.5). */
#define MOAT_WS_MAX_CONTROL_PAYLOAD 125
/* The longest frame header: 2 bytes, a 64-bit length, a 4-byte mask. */
#define MOAT_WS_MAX_HEADER 14

typedef enum {
    MOAT_WS_PARSE_FRAME,     /* a whole frame is in the bytes: see out */
    MOAT_WS_PARSE_NEED_MORE, /* a frame starts but is not all there yet */
    MOAT_WS_PARSE_INVALID,   /* the connection must end (reason in out->error) */
} moat_ws_parse_result;

typedef struct {
    uint8_t opcode;
    bool fin;
    size_t header_length;
    size_t payload_length;
    uint8_t mask[4];
    const char *error; /* MOAT_WS_PARSE_INVALID: why */
} moat_ws_frame;

/* One client frame at the start of data. Invalid: an unmasked frame, RSV
 * bits (no extension is negotiated), an unknown opcode, a fragmented or
 * over-long control frame, or a payload over max_payload. */
moat_ws_parse_result moat_ws_frame_parse(const uint8_t *data, size_t length, size_t max_payload,
                                         moat_ws_frame *out);

/* Unmasks payload in place; `offset` is the payload byte it starts at. */
void moat_ws_unmask(uint8_t *payload, size_t length, const uint8_t mask[4], size_t offset);

/* A final, unmasked server frame's header for a payload of `length` bytes
 * into out; returns its length (2, 4 or 10). */
size_t moat_ws_server_header(uint8_t opcode, uint64_t length, uint8_t out[10]);

#endif
