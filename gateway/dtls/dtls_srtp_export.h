/* DTLS-SRTP key derivation (RFC 5764 §4.2): the negotiated protection
 * profile and the TLS exporter's "EXTRACTOR-dtls_srtp" output, split into our
 * keys and the peer's by which side of the handshake we were. */
#ifndef MOAT_DTLS_SRTP_EXPORT_H
#define MOAT_DTLS_SRTP_EXPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

#include "srtp/srtp_keying.h"

/* The profile the handshake selected, or 0 if use_srtp was not negotiated
 * or selected a profile Moat does not support. */
moat_srtp_profile moat_dtls_srtp_selected_profile(SSL *ssl);

/* After a completed handshake. Returns 0, or -1 with a message. */
int moat_dtls_srtp_export(SSL *ssl, bool we_are_client, moat_srtp_keying *out, char *error,
                          size_t error_size);

#endif
