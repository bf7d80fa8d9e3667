/* ICE short-term credentials (RFC 8839 §5.4): the ufrag/pwd pair a session
 * puts in its SDP answer and checks every Binding request against. */
#ifndef MOAT_ICE_CREDENTIALS_H
#define MOAT_ICE_CREDENTIALS_H

#include <stdbool.h>
#include <stdint.h>

#define MOAT_ICE_UFRAG_LENGTH 8
#define MOAT_ICE_PWD_LENGTH   24

/* ice-char = ALPHA / DIGIT / "+" / "/" */
bool moat_ice_char_valid(uint8_t c);

/* Fills ufrag (8 chars) and pwd (24 chars), NUL-terminated, from the
 * kernel's CSPRNG (getrandom). 0 on success; -1 if the CSPRNG failed, in
 * which case both are set to empty strings: predictable credentials are never
 * handed out. */
int moat_ice_credentials_generate(char ufrag[MOAT_ICE_UFRAG_LENGTH + 1],
                                  char pwd[MOAT_ICE_PWD_LENGTH + 1]);

#endif
