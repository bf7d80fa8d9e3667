/* Extracts our ufrag, the local half of a Binding request's USERNAME, which is
 * how a worker finds the session of a STUN packet from an unknown 5-tuple
 * (nothing authenticated here). */
#include "ice/stun_username.h"
#include "ice/ice_credentials.h"
#include "ice/stun_attributes.h"
#include "ice/stun_classify.h"

#include <string.h>

static int copy_local_part(const moat_stun_attribute *username, char *ufrag, size_t capacity)
{
    const uint8_t *colon = memchr(username->value, ':', username->length);
    if (colon == NULL)
        return -1;
    size_t local_length = (size_t)(colon - username->value);
    if (local_length == 0 || local_length >= capacity)
        return -1;
    for (size_t i = 0; i < local_length; i++) {
        if (!moat_ice_char_valid(username->value[i]))
            return -1;
    }
    memcpy(ufrag, username->value, local_length);
    ufrag[local_length] = '\0';
    return 0;
}

int moat_stun_local_ufrag(const uint8_t *data, size_t length, char *ufrag, size_t capacity)
{
    if (ufrag == NULL || capacity == 0)
        return -1;
    ufrag[0] = '\0';

    moat_stun_kind kind = moat_stun_classify(data, length);
    if (kind == MOAT_STUN_NOT_STUN || kind == MOAT_STUN_MALFORMED)
        return -1;

    moat_stun_attribute_iter it;
    moat_stun_attribute attribute;
    moat_stun_attribute_iter_init(&it, data, length);
    int step;
    while ((step = moat_stun_attribute_next(&it, &attribute)) == 1) {
        /* Anything after MESSAGE-INTEGRITY is outside what the HMAC covers,
         * so a USERNAME there must not steer the session lookup. */
        if (attribute.type == MOAT_STUN_ATTR_MESSAGE_INTEGRITY ||
            attribute.type == MOAT_STUN_ATTR_FINGERPRINT)
            return -1;
        if (attribute.type == MOAT_STUN_ATTR_USERNAME)
            return copy_local_part(&attribute, ufrag, capacity);
    }
    return -1;
}
