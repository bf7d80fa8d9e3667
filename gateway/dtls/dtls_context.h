/* The DTLS configuration every transport is made from: one SSL_CTX and the
 * datagram BIO method. Configure it on one thread, then share it read-only
 * with every worker; it must outlive every transport made from it. */
#ifndef MOAT_DTLS_CONTEXT_H
#define MOAT_DTLS_CONTEXT_H

#include <stddef.h>

#include <openssl/bio.h>
#include <openssl/ssl.h>

#include "dtls/certificate.h"

typedef struct moat_dtls_context moat_dtls_context;

/* The profiles offered (client) or chosen from, in this order (server). */
#define MOAT_DTLS_DEFAULT_SRTP_PROFILES                                                            \
    "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80:SRTP_AES128_CM_SHA1_32"

/* DTLS 1.2 only, ECDHE key exchange with AEAD ciphers only, use_srtp with
 * the default profiles, a client certificate always requested and required,
 * any certificate accepted by OpenSSL (the transport compares its
 * fingerprint with the SDP's), no session cache or tickets, no
 * renegotiation, no cookie exchange (ICE already proved the peer's address).
 * The context keeps its own references to the certificate's X509 and key. */
moat_dtls_context *moat_dtls_context_new(const moat_certificate *cert, char *error,
                                         size_t error_size);

/* Replaces the use_srtp list: colon-separated names from
 * MOAT_DTLS_DEFAULT_SRTP_PROFILES, in preference order. Only before the
 * context is shared. Returns 0, or -1 with a message. */
int moat_dtls_context_set_srtp_profiles(moat_dtls_context *ctx, const char *profiles, char *error,
                                        size_t error_size);

void moat_dtls_context_free(moat_dtls_context *ctx);

/* For the transport; borrowed. */
SSL_CTX *moat_dtls_context_ssl_ctx(const moat_dtls_context *ctx);
const BIO_METHOD *moat_dtls_context_bio_method(const moat_dtls_context *ctx);

#endif
