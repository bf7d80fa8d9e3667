/* Bounds-checked walk over a STUN message's attributes, and the size check of
 * MESSAGE-INTEGRITY and FINGERPRINT done before libnice reads them. */
#include "ice/stun_attributes.h"
#include "ice/stun_classify.h"

#define ATTRIBUTE_HEADER_LENGTH 4u

void moat_stun_attribute_iter_init(moat_stun_attribute_iter *it, const uint8_t *data, size_t length)
{
    it->data = data;
    it->length = length;
    /* A buffer shorter than a header yields an immediate error rather than a
     * read before its start or past its end. */
    it->offset = length >= MOAT_STUN_HEADER_LENGTH ? MOAT_STUN_HEADER_LENGTH : SIZE_MAX;
}

int moat_stun_attribute_next(moat_stun_attribute_iter *it, moat_stun_attribute *attribute)
{
    if (it->offset == it->length)
        return 0;
    if (it->offset > it->length || it->length - it->offset < ATTRIBUTE_HEADER_LENGTH) {
        it->offset = SIZE_MAX;
        return -1;
    }
    const uint8_t *header = it->data + it->offset;
    uint16_t type = (uint16_t)((header[0] << 8) | header[1]);
    uint16_t value_length = (uint16_t)((header[2] << 8) | header[3]);
    size_t padded = ((size_t)value_length + 3u) & ~(size_t)3u;
    size_t room = it->length - it->offset - ATTRIBUTE_HEADER_LENGTH;
    if (padded > room) {
        it->offset = SIZE_MAX;
        return -1;
    }
    attribute->type = type;
    attribute->length = value_length;
    attribute->value = header + ATTRIBUTE_HEADER_LENGTH;
    it->offset += ATTRIBUTE_HEADER_LENGTH + padded;
    return 1;
}

bool moat_stun_integrity_attributes_sized(const uint8_t *data, size_t length)
{
    moat_stun_attribute_iter it;
    moat_stun_attribute attribute;
    int step;

    moat_stun_attribute_iter_init(&it, data, length);
    while ((step = moat_stun_attribute_next(&it, &attribute)) == 1) {
        if (attribute.type == MOAT_STUN_ATTR_MESSAGE_INTEGRITY && attribute.length != 20)
            return false;
        if (attribute.type == MOAT_STUN_ATTR_FINGERPRINT && attribute.length != 4)
            return false;
    }
    return step == 0;
}
