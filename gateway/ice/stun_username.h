/* The local half of a Binding request's USERNAME, which is how a worker finds
 * the session a STUN packet from an unknown 5-tuple belongs to. */
#ifndef MOAT_ICE_STUN_USERNAME_H
#define MOAT_ICE_STUN_USERNAME_H

#include <stddef.h>
#include <stdint.h>

/* USERNAME is "<our ufrag>:<peer ufrag>" (RFC 8445 §7.2.2). Copies our ufrag,
 * NUL-terminated, into ufrag. 0 on success; -1 if the message is not
 * well-formed STUN, has no USERNAME before MESSAGE-INTEGRITY, has no ':', an
 * empty local part, a local part outside the ice-char set, or one that does
 * not fit in capacity (NUL included). Nothing is authenticated here: the
 * result only selects which credentials moat_ice_checker_handle_request()
 * verifies. */
int moat_stun_local_ufrag(const uint8_t *data, size_t length, char *ufrag, size_t capacity);

#endif
