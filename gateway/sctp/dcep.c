/* Data Channel Establishment Protocol (RFC 8832): parses a peer's
 * DATA_CHANNEL_OPEN and ACK with every length checked, and builds ours. */
#include "sctp/dcep.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <glib.h>

static uint16_t read_u16(const uint8_t *p)
{
    return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static uint32_t read_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void write_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void write_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static bool channel_type_known(uint8_t type)
{
    switch (type & (uint8_t)~MOAT_DCEP_CHANNEL_UNORDERED_BIT) {
    case MOAT_DCEP_CHANNEL_RELIABLE:
    case MOAT_DCEP_CHANNEL_PARTIAL_RELIABLE_REXMIT:
    case MOAT_DCEP_CHANNEL_PARTIAL_RELIABLE_TIMED:
        return true;
    default:
        return false;
    }
}

int moat_dcep_parse(const uint8_t *data, size_t length, moat_dcep_message *out)
{
    if (data == NULL || out == NULL || length < 1)
        return -EBADMSG;
    memset(out, 0, sizeof *out);
    out->type = data[0];
    switch (data[0]) {
    case MOAT_DCEP_ACK:
        /* The ACK is the message type alone (RFC 8832 §5.2). */
        return length == 1 ? 0 : -EBADMSG;
    case MOAT_DCEP_OPEN:
        break;
    default:
        return -EPROTO;
    }
    if (length < MOAT_DCEP_OPEN_HEADER_SIZE)
        return -EBADMSG;
    out->channel_type = data[1];
    out->priority = read_u16(data + 2);
    out->reliability = read_u32(data + 4);
    out->label_length = read_u16(data + 8);
    out->protocol_length = read_u16(data + 10);
    /* size_t arithmetic: two 16-bit lengths plus the header cannot wrap. */
    size_t expected =
        (size_t)MOAT_DCEP_OPEN_HEADER_SIZE + out->label_length + (size_t)out->protocol_length;
    if (length != expected)
        return -EBADMSG;
    if (!channel_type_known(out->channel_type))
        return -EPROTO;
    out->label = data + MOAT_DCEP_OPEN_HEADER_SIZE;
    out->protocol = out->label + out->label_length;
    return 0;
}

/* Copies a peer-supplied name into a C string buffer of
 * MOAT_DATA_CHANNEL_NAME_SIZE bytes. */
static int copy_name(const uint8_t *name, uint16_t length, char *dest)
{
    if (length >= MOAT_DATA_CHANNEL_NAME_SIZE)
        return -ENAMETOOLONG;
    if (length > 0 && memchr(name, '\0', length) != NULL)
        return -EILSEQ;
    if (!g_utf8_validate((const char *)name, length, NULL))
        return -EILSEQ;
    if (length > 0)
        memcpy(dest, name, length);
    dest[length] = '\0';
    return 0;
}

static int32_t clamp_limit(uint32_t value)
{
    return value > (uint32_t)INT32_MAX ? INT32_MAX : (int32_t)value;
}

int moat_dcep_open_to_info(const moat_dcep_message *open, uint16_t stream_id,
                           moat_data_channel_info *info)
{
    if (open == NULL || info == NULL || open->type != MOAT_DCEP_OPEN)
        return -EINVAL;
    memset(info, 0, sizeof *info);
    int rc = copy_name(open->label, open->label_length, info->label);
    if (rc == 0)
        rc = copy_name(open->protocol, open->protocol_length, info->protocol);
    if (rc != 0)
        return rc;
    info->stream_id = stream_id;
    info->ordered = (open->channel_type & MOAT_DCEP_CHANNEL_UNORDERED_BIT) == 0;
    info->max_retransmits = -1;
    info->max_lifetime_ms = -1;
    info->negotiated = false;
    switch (open->channel_type & (uint8_t)~MOAT_DCEP_CHANNEL_UNORDERED_BIT) {
    case MOAT_DCEP_CHANNEL_PARTIAL_RELIABLE_REXMIT:
        info->max_retransmits = clamp_limit(open->reliability);
        break;
    case MOAT_DCEP_CHANNEL_PARTIAL_RELIABLE_TIMED:
        info->max_lifetime_ms = clamp_limit(open->reliability);
        break;
    default:
        /* Reliable: the reliability parameter is ignored (RFC 8832 §5.1). */
        break;
    }
    return 0;
}

size_t moat_dcep_open_length(const moat_data_channel_info *info)
{
    return MOAT_DCEP_OPEN_HEADER_SIZE + strnlen(info->label, sizeof info->label) +
           strnlen(info->protocol, sizeof info->protocol);
}

size_t moat_dcep_build_open(const moat_data_channel_info *info, uint8_t *out, size_t capacity)
{
    size_t label_length = strnlen(info->label, sizeof info->label);
    size_t protocol_length = strnlen(info->protocol, sizeof info->protocol);
    size_t total = MOAT_DCEP_OPEN_HEADER_SIZE + label_length + protocol_length;
    if (out == NULL || capacity < total)
        return 0;
    uint8_t type = MOAT_DCEP_CHANNEL_RELIABLE;
    uint32_t reliability = 0;
    if (info->max_retransmits >= 0) {
        type = MOAT_DCEP_CHANNEL_PARTIAL_RELIABLE_REXMIT;
        reliability = (uint32_t)info->max_retransmits;
    } else if (info->max_lifetime_ms >= 0) {
        type = MOAT_DCEP_CHANNEL_PARTIAL_RELIABLE_TIMED;
        reliability = (uint32_t)info->max_lifetime_ms;
    }
    if (!info->ordered)
        type |= MOAT_DCEP_CHANNEL_UNORDERED_BIT;
    out[0] = MOAT_DCEP_OPEN;
    out[1] = type;
    write_u16(out + 2, MOAT_DCEP_PRIORITY_NORMAL);
    write_u32(out + 4, reliability);
    write_u16(out + 8, (uint16_t)label_length);
    write_u16(out + 10, (uint16_t)protocol_length);
    memcpy(out + MOAT_DCEP_OPEN_HEADER_SIZE, info->label, label_length);
    memcpy(out + MOAT_DCEP_OPEN_HEADER_SIZE + label_length, info->protocol, protocol_length);
    return total;
}

size_t moat_dcep_build_ack(uint8_t *out, size_t capacity)
{
    if (out == NULL || capacity < 1)
        return 0;
    out[0] = MOAT_DCEP_ACK;
    return 1;
}
