/* Cheap classification of a datagram that the RFC 7983 demultiplexer sent to
 * STUN, before any session lookup or HMAC work is spent on it. */
#ifndef MOAT_ICE_STUN_CLASSIFY_H
#define MOAT_ICE_STUN_CLASSIFY_H

#include <stddef.h>
#include <stdint.h>

#define MOAT_STUN_HEADER_LENGTH 20
#define MOAT_STUN_MAGIC_COOKIE  0x2112A442u

typedef enum {
    MOAT_STUN_NOT_STUN,  /* too short, top two bits set or no magic cookie */
    MOAT_STUN_MALFORMED, /* STUN header whose length field disagrees with the datagram */
    MOAT_STUN_BINDING_REQUEST,
    MOAT_STUN_BINDING_INDICATION, /* RFC 7675 consent keepalives from some peers */
    MOAT_STUN_BINDING_RESPONSE,   /* success or error response */
    MOAT_STUN_OTHER,              /* any other method */
} moat_stun_kind;

/* Looks at the 20-byte header only: top two bits 0, magic cookie, length
 * field == length - 20 and a multiple of 4. Attributes are not walked, so a
 * result other than NOT_STUN/MALFORMED says nothing about their validity. */
moat_stun_kind moat_stun_classify(const uint8_t *data, size_t length);

const char *moat_stun_kind_name(moat_stun_kind kind);

#endif
