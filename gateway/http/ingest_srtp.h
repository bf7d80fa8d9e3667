/* SDES-style SRTP keys for an RTP ingest (RFC 4568's key||salt, base64):
 * the "srtp" member of POST .../ingest, {"suite": NAME} for a key Moat
 * makes or {"suite": NAME, "key": BASE64} for the sender's own, turned into
 * the keying the ingest's session receives with. Control thread; no I/O.
 * Secrets: the caller clears the keying (moat_sdes_keying_clear) and frees
 * the key text with g_free after wiping it (moat_ingest_srtp_free_key). */
#ifndef MOAT_INGEST_SRTP_H
#define MOAT_INGEST_SRTP_H

#include "srtp/srtp_keying.h"

#include <jansson.h>
#include <stddef.h>

/* 0 with *keys filled (remote: the sender's key) and *key_text the
 * sender's key||salt in base64, *suite the suite's SDES name; -1 with a
 * message for a 400 in error. */
int moat_ingest_srtp_parse(json_t *value, moat_srtp_keying *keys, char **key_text,
                           const char **suite, char *error, size_t error_size);

void moat_ingest_srtp_free_key(char *key_text);

#endif
