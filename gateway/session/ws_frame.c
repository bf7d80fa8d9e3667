/* Owns WebSocket frame parsing and building (ws_frame.h): client frame
 * headers checked before any payload byte is read, server headers. */
#include "session/ws_frame.h"

static moat_ws_parse_result invalid(moat_ws_frame *out, const char *why)
{
    out->error = why;
    return MOAT_WS_PARSE_INVALID;
}

static bool known_opcode(uint8_t opcode)
{
    return opcode <= MOAT_WS_BINARY || (opcode >= MOAT_WS_CLOSE && opcode <= MOAT_WS_PONG);
}

moat_ws_parse_result moat_ws_frame_parse(const uint8_t *data, size_t length, size_t max_payload,
                                         moat_ws_frame *out)
{
    *out = (moat_ws_frame){0};
    if (length < 2)
        return MOAT_WS_PARSE_NEED_MORE;
    out->fin = (data[0] & 0x80) != 0;
    out->opcode = data[0] & 0x0f;
    if (data[0] & 0x70)
        return invalid(out, "reserved bits set");
    if (!known_opcode(out->opcode))
        return invalid(out, "unknown opcode");
    if (!(data[1] & 0x80))
        return invalid(out, "unmasked client frame");
    uint64_t payload = data[1] & 0x7f;
    size_t header = 2;
    if (payload == 126) {
        if (length < 4)
            return MOAT_WS_PARSE_NEED_MORE;
        payload = (uint64_t)data[2] << 8 | data[3];
        header = 4;
    } else if (payload == 127) {
        if (length < 10)
            return MOAT_WS_PARSE_NEED_MORE;
        payload = 0;
        for (int i = 2; i < 10; i++)
            payload = payload << 8 | data[i];
        header = 10;
    }
    if (out->opcode >= MOAT_WS_CLOSE && (!out->fin || payload > MOAT_WS_MAX_CONTROL_PAYLOAD))
        return invalid(out, "fragmented or over-long control frame");
    if (payload > max_payload)
        return invalid(out, "frame too long");
    if (length < header + 4)
        return MOAT_WS_PARSE_NEED_MORE;
    for (int i = 0; i < 4; i++)
        out->mask[i] = data[header + (size_t)i];
    out->header_length = header + 4;
    out->payload_length = (size_t)payload;
    if (length - out->header_length < out->payload_length)
        return MOAT_WS_PARSE_NEED_MORE;
    return MOAT_WS_PARSE_FRAME;
}

void moat_ws_unmask(uint8_t *payload, size_t length, const uint8_t mask[4], size_t offset)
{
    for (size_t i = 0; i < length; i++)
        payload[i] ^= mask[(offset + i) % 4];
}

size_t moat_ws_server_header(uint8_t opcode, uint64_t length, uint8_t out[10])
{
    out[0] = (uint8_t)(0x80 | (opcode & 0x0f));
    if (length < 126) {
        out[1] = (uint8_t)length;
        return 2;
    }
    if (length <= 0xffff) {
        out[1] = 126;
        out[2] = (uint8_t)(length >> 8);
        out[3] = (uint8_t)length;
        return 4;
    }
    out[1] = 127;
    for (int i = 0; i < 8; i++)
        out[2 + i] = (uint8_t)(length >> (56 - 8 * i));
    return 10;
}
