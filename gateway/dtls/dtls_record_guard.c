/* What a transport lets OpenSSL see of the encrypted records it is given:
 * none shorter than its cipher's nonce and tag, and while it connects no
 * more than MOAT_DTLS_MAX_EARLY_PROTECTED that OpenSSL would have to hold. */
#include "dtls_transport_private.h"

#include <stdint.h>

#include <openssl/objects.h>
#include <openssl/ssl.h>

#include "dtls_record.h"
#include "dtls_retired.h"

/* OpenSSL 3.0 raises a fatal internal_error, instead of discarding the
 * record as RFC 6347 §4.1.2.7 asks, when an encrypted record is too short to
 * hold its AEAD cipher's explicit nonce and tag; one spoofed datagram would
 * end the association. Such records are dropped before OpenSSL sees them.
 * Before a cipher is chosen no encrypted record can be legitimate. */
size_t moat_dtls_transport_shortest_protected(const moat_dtls_transport *t)
{
    if (t->ssl == NULL)
        return moat_dtls_retired_overhead(t->retired->aead);
    const SSL_CIPHER *cipher = SSL_get_current_cipher(t->ssl);
    if (cipher == NULL)
        cipher = SSL_get_pending_cipher(t->ssl);
    if (cipher == NULL)
        return SIZE_MAX;
    switch (SSL_CIPHER_get_cipher_nid(cipher)) {
    case NID_chacha20_poly1305:
        return 16; /* tag; the nonce is implicit (RFC 7905) */
    default:
        return 8 + 16; /* AES-GCM: explicit nonce and tag (RFC 5288) */
    }
}

/* Whether OpenSSL has read the peer's ChangeCipherSpec: its read epoch is
 * then 1, and the records of epoch 1 it held are read (a genuine Finished
 * that came early) or discarded (a forgery) at its next read. Only full
 * handshakes run (no resumption, tickets or renegotiation), so after that
 * the peer's Finished is all that is left to read. */
static bool peer_cipher_read(const moat_dtls_transport *t)
{
    switch (SSL_get_state(t->ssl)) {
    case TLS_ST_SR_CHANGE:
    case TLS_ST_SR_FINISHED:
    case TLS_ST_CR_CHANGE:
    case TLS_ST_CR_FINISHED:
        return true;
    default:
        return false;
    }
}

/* Before the handshake completes a peer has few reasons to send encrypted
 * records OpenSSL cannot read at once (its Finished ahead of its
 * ChangeCipherSpec, a server's first data after its own Finished), and
 * OpenSSL keeps each such record in a whole 16.7 KB read buffer (up to 100
 * of them): past the cap the records are dropped. The cap bounds what
 * OpenSSL holds now, not what came: anyone can send records from a peer's
 * address, and a lifetime count they filled refused the peer's own Finished
 * for good. */
bool moat_dtls_transport_early_allowed(moat_dtls_transport *t, const uint8_t *records,
                                       size_t length)
{
    if (!t->peer_cipher_read && peer_cipher_read(t)) {
        t->peer_cipher_read = true;
        t->early_protected = 0;
    }
    size_t unread = moat_dtls_record_count_unread(records, length, t->peer_cipher_read ? 1 : 0);
    if (unread == 0)
        return true;
    if (t->early_protected + unread > MOAT_DTLS_MAX_EARLY_PROTECTED)
        return false;
    t->early_protected += (unsigned)unread;
    return true;
}
