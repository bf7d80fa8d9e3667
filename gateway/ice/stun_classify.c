/* Header-only classification of a datagram the RFC 7983 demux sent to STUN
 * (RFC 8489 §5: magic cookie, length, class and method), before any session
 * lookup or HMAC work. */
#include "ice/stun_classify.h"

/* Message type layout (RFC 8489 §5): M11..M7 C1 M6..M4 C0 M3..M0. */
#define STUN_CLASS_MASK     0x0110u
#define STUN_CLASS_REQUEST  0x0000u
#define STUN_CLASS_INDICATE 0x0010u
#define STUN_CLASS_SUCCESS  0x0100u
#define STUN_CLASS_ERROR    0x0110u
#define STUN_METHOD_MASK    0x3EEFu
#define STUN_METHOD_BINDING 0x0001u

static uint16_t read16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t read32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

moat_stun_kind moat_stun_classify(const uint8_t *data, size_t length)
{
    if (data == NULL || length < MOAT_STUN_HEADER_LENGTH)
        return MOAT_STUN_NOT_STUN;
    if ((data[0] & 0xC0u) != 0)
        return MOAT_STUN_NOT_STUN;
    /* Without the cookie this is either RFC 3489 STUN, which ICE peers never
     * send, or something else entirely: both are not ours to parse. */
    if (read32(data + 4) != MOAT_STUN_MAGIC_COOKIE)
        return MOAT_STUN_NOT_STUN;

    size_t body = read16(data + 2);
    if (body != length - MOAT_STUN_HEADER_LENGTH || (body & 3u) != 0)
        return MOAT_STUN_MALFORMED;

    uint16_t type = read16(data);
    if ((type & STUN_METHOD_MASK) != STUN_METHOD_BINDING)
        return MOAT_STUN_OTHER;
    switch (type & STUN_CLASS_MASK) {
    case STUN_CLASS_REQUEST:
        return MOAT_STUN_BINDING_REQUEST;
    case STUN_CLASS_INDICATE:
        return MOAT_STUN_BINDING_INDICATION;
    case STUN_CLASS_SUCCESS:
    case STUN_CLASS_ERROR:
    default:
        return MOAT_STUN_BINDING_RESPONSE;
    }
}

const char *moat_stun_kind_name(moat_stun_kind kind)
{
    switch (kind) {
    case MOAT_STUN_NOT_STUN:
        return "not-stun";
    case MOAT_STUN_MALFORMED:
        return "malformed";
    case MOAT_STUN_BINDING_REQUEST:
        return "binding-request";
    case MOAT_STUN_BINDING_INDICATION:
        return "binding-indication";
    case MOAT_STUN_BINDING_RESPONSE:
        return "binding-response";
    case MOAT_STUN_OTHER:
        return "other";
    }
    return "unknown";
}
