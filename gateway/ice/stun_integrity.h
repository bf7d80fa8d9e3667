/* A STUN request's MESSAGE-INTEGRITY checked against one short-term
 * password (RFC 8489 §14.5) with the HMAC's key pads computed once, so that
 * a check that does not authenticate is refused for one HMAC-SHA1 of the
 * message (~0.25 us) before anything is spent on it: before the session's
 * check budgets, and before libnice's full validation (~0.9 us: CRC-32
 * FINGERPRINT, attribute lookups, a keyed HMAC each time), which still runs
 * on every check that passes. One per password of a session, used on its
 * worker only. */
#ifndef MOAT_ICE_STUN_INTEGRITY_H
#define MOAT_ICE_STUN_INTEGRITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_stun_integrity moat_stun_integrity;

typedef enum {
    MOAT_STUN_INTEGRITY_OK,
    MOAT_STUN_INTEGRITY_MALFORMED, /* attributes run past the end, or one MESSAGE-INTEGRITY is
                                      not 20 bytes */
    MOAT_STUN_INTEGRITY_BAD,       /* no MESSAGE-INTEGRITY, or one the password does not make */
} moat_stun_integrity_result;

/* NULL for an empty password or on allocation failure. */
moat_stun_integrity *moat_stun_integrity_new(const char *password);
void moat_stun_integrity_free(moat_stun_integrity *key);

/* Whether key was made for this password (a session's changes with an ICE
 * restart). */
bool moat_stun_integrity_is_for(const moat_stun_integrity *key, const char *password);

/* Checks the first MESSAGE-INTEGRITY of a message that has at least the
 * 20-byte STUN header: the HMAC over the message before it, with the header's
 * length as if it ended the message. Walks the attributes within length. */
moat_stun_integrity_result moat_stun_integrity_verify(moat_stun_integrity *key,
                                                      const uint8_t *message, size_t length);

#endif
