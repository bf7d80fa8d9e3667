/* Data Channel Establishment Protocol (RFC 8832): parsing and building of
 * DATA_CHANNEL_OPEN and DATA_CHANNEL_ACK. Messages come from the peer, so the
 * parser treats them as hostile: every length is checked before it is used. */
#ifndef MOAT_DCEP_H
#define MOAT_DCEP_H

#include <stddef.h>
#include <stdint.h>

#include "sctp/data_channel.h"

enum {
    MOAT_DCEP_ACK = 0x02,
    MOAT_DCEP_OPEN = 0x03,
};

/* Channel types of DATA_CHANNEL_OPEN (RFC 8832 §8.2.2); the 0x80 bit means
 * unordered. */
enum {
    MOAT_DCEP_CHANNEL_RELIABLE = 0x00,
    MOAT_DCEP_CHANNEL_PARTIAL_RELIABLE_REXMIT = 0x01,
    MOAT_DCEP_CHANNEL_PARTIAL_RELIABLE_TIMED = 0x02,
    MOAT_DCEP_CHANNEL_UNORDERED_BIT = 0x80,
};

/* Fixed part of DATA_CHANNEL_OPEN, before label and protocol. */
#define MOAT_DCEP_OPEN_HEADER_SIZE 12

/* Priority we announce: "normal" in the W3C mapping (RFC 8831 §6.4). */
#define MOAT_DCEP_PRIORITY_NORMAL 256

typedef struct {
    uint8_t type; /* MOAT_DCEP_OPEN or MOAT_DCEP_ACK */
    /* The rest is set for OPEN only; label and protocol point into the
     * parsed buffer and are not NUL-terminated. */
    uint8_t channel_type;
    uint16_t priority;
    uint32_t reliability;
    const uint8_t *label;
    uint16_t label_length;
    const uint8_t *protocol;
    uint16_t protocol_length;
} moat_dcep_message;

/* Parses one DCEP message (the whole payload of an SCTP message with PPID 50).
 * 0 on success; -EBADMSG when the message is truncated, has a length that
 * disagrees with its fields or trailing bytes; -EPROTO for an unknown message
 * or channel type. */
int moat_dcep_parse(const uint8_t *data, size_t length, moat_dcep_message *out);

/* Turns a parsed OPEN received on stream_id into channel info. 0 on success;
 * -ENAMETOOLONG when label or protocol do not fit MOAT_DATA_CHANNEL_NAME_SIZE;
 * -EILSEQ when either is not valid UTF-8 or holds a NUL (they become C strings
 * and JSON further on). */
int moat_dcep_open_to_info(const moat_dcep_message *open, uint16_t stream_id,
                           moat_data_channel_info *info);

/* Length of the OPEN message describing info. */
size_t moat_dcep_open_length(const moat_data_channel_info *info);

/* Writes the OPEN message for info into out; returns its length, or 0 when
 * capacity is too small. */
size_t moat_dcep_build_open(const moat_data_channel_info *info, uint8_t *out, size_t capacity);

/* Writes the one-byte ACK into out (capacity >= 1); returns 1, or 0 when
 * capacity is 0. */
size_t moat_dcep_build_ack(uint8_t *out, size_t capacity);

#endif
