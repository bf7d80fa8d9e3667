/* What lets a sender be tried as the UDP baseline listener's peer: a DTLS
 * handshake record holding a ClientHello (RFC 6347 §4.1, §4.2.2): content
 * type 22, then the handshake type 1 after the 13-byte record header. Any
 * thread; reads nothing beyond `length`. */
#ifndef MOAT_TUNNEL_HELLO_H
#define MOAT_TUNNEL_HELLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TUNNEL_DTLS_RECORD_HEADER    13
#define TUNNEL_DTLS_HANDSHAKE_HEADER 12

static inline bool tunnel_is_client_hello(const uint8_t *datagram, size_t length)
{
    return length >= TUNNEL_DTLS_RECORD_HEADER + TUNNEL_DTLS_HANDSHAKE_HEADER &&
           datagram[0] == 22 && datagram[TUNNEL_DTLS_RECORD_HEADER] == 1;
}

#endif
