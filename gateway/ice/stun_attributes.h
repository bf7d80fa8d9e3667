/* Bounds-checked walk over the attributes of a STUN message. Every read is
 * checked against the datagram's real length, never against a length field
 * alone, because the message comes from the network. */
#ifndef MOAT_ICE_STUN_ATTRIBUTES_H
#define MOAT_ICE_STUN_ATTRIBUTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_STUN_ATTR_USERNAME          0x0006u
#define MOAT_STUN_ATTR_MESSAGE_INTEGRITY 0x0008u
#define MOAT_STUN_ATTR_FINGERPRINT       0x8028u

typedef struct {
    const uint8_t *data;
    size_t length; /* bytes of the whole message, header included */
    size_t offset; /* start of the next attribute header */
} moat_stun_attribute_iter;

typedef struct {
    uint16_t type;
    uint16_t length; /* value length without padding */
    const uint8_t *value;
} moat_stun_attribute;

/* data/length: a message of at least MOAT_STUN_HEADER_LENGTH bytes (see
 * moat_stun_classify); the walk starts right after the header. */
void moat_stun_attribute_iter_init(moat_stun_attribute_iter *it, const uint8_t *data,
                                   size_t length);

/* 1: *attribute filled; 0: clean end of message; -1: an attribute header or
 * its padded value runs past the end (the iterator then stays at -1). */
int moat_stun_attribute_next(moat_stun_attribute_iter *it, moat_stun_attribute *attribute);

/* libnice hashes 20 bytes from MESSAGE-INTEGRITY's value whatever its
 * length field says, and reads FINGERPRINT as 4 bytes: false for other sizes
 * (or a malformed attribute list), so callers can refuse a message before
 * libnice reads past the datagram. */
bool moat_stun_integrity_attributes_sized(const uint8_t *data, size_t length);

#endif
