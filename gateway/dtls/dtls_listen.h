/* A DTLS server that answers ClientHellos statelessly (RFC 6347 §4.2.1), for
 * a transport whose peer's address nothing else vouches for (no ICE before
 * it, as in moat-tunnel's UDP baseline). While listening, every ClientHello
 * without a valid cookie gets a HelloVerifyRequest carrying one (an HMAC of
 * the datagram's source and the current minute under a key drawn for this
 * transport) and nothing is kept: a forged source receives one datagram
 * smaller than the ClientHello, never a certificate flight, and holds
 * nothing. The first ClientHello that returns a valid cookie starts the
 * handshake (the handshake deadline starts then).
 *
 * Same thread contract as dtls_transport.h: the transport's owner only. */
#ifndef MOAT_DTLS_LISTEN_H
#define MOAT_DTLS_LISTEN_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

#include "dtls/dtls_transport.h"

/* The longest source address the cookie binds (a struct sockaddr_in6). */
#define MOAT_DTLS_LISTEN_SOURCE_MAX 32

/* Server transports only, NEW -> CONNECTING (listening), instead of
 * moat_dtls_transport_start. MOAT_DTLS_ERR_STATE when not a new server
 * transport, MOAT_DTLS_ERR_FAILED when no key could be drawn. */
int moat_dtls_transport_listen(moat_dtls_transport *t);

/* The source of the next datagram given to moat_dtls_transport_receive
 * (copied; the bytes of the caller's socket address). Until a cookie is
 * valid, receive() answers or drops and returns MOAT_DTLS_OK; the send
 * callback's datagram goes to this source. MOAT_DTLS_ERR_INVALID for an
 * empty or longer address. */
int moat_dtls_transport_listen_source(moat_dtls_transport *t, const void *address, size_t length);

/* Still waiting for a ClientHello with a valid cookie. */
bool moat_dtls_transport_listening(const moat_dtls_transport *t);

/* dtls_context.c: the cookie callbacks every context carries (they answer
 * only for a listening transport). */
void moat_dtls_listen_install(SSL_CTX *ctx);

#endif
