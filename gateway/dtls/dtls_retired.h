/* What a DTLS 1.2 association still needs after its handshake when it carries
 * no application data (a media-only session): the peer's record key, to
 * authenticate the peer's close_notify or fatal alert, and our own
 * close_notify record, written by OpenSSL in advance. About 100 bytes instead
 * of OpenSSL's SSL object (~29 KB with its buffers and session).
 *
 * Keys come from public OpenSSL API (master secret, randoms, the TLS PRF of
 * RFC 5246 §6.3) for the three AEAD suites dtls_context.c allows. No replay
 * window: only records the peer's key authenticates end the association, and
 * a replayed alert is one the peer did send.
 *
 * Plain data, no locking: it belongs to its transport's worker thread. */
#ifndef MOAT_DTLS_RETIRED_H
#define MOAT_DTLS_RETIRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

typedef enum {
    MOAT_DTLS_AEAD_AES_128_GCM,
    MOAT_DTLS_AEAD_AES_256_GCM,
    MOAT_DTLS_AEAD_CHACHA20_POLY1305
} moat_dtls_aead;

#define MOAT_DTLS_RETIRED_KEY_MAX 32
#define MOAT_DTLS_RETIRED_IV_MAX  12
/* AEAD opens one datagram may cost: a peer sends each alert in a datagram
 * of its own; more alert records in one datagram are dropped unopened, so
 * a datagram packed with 13-byte-header forgeries costs at most this many
 * decryptions. */
#define MOAT_DTLS_RETIRED_OPENS_PER_DATAGRAM 2
/* Header, explicit nonce, alert and tag: 39 bytes with AES-GCM. */
#define MOAT_DTLS_RETIRED_CLOSE_NOTIFY_MAX 48

/* Why a record reaching a retired transport was dropped; an index into
 * per-reason counters. */
typedef enum {
    MOAT_DTLS_RETIRED_DROP_NOT_ALERT = 0, /* handshake, change_cipher_spec, application data */
    MOAT_DTLS_RETIRED_DROP_WRONG_EPOCH,   /* not epoch 1 (epoch 0 is unauthenticated) */
    MOAT_DTLS_RETIRED_DROP_BAD_LENGTH,    /* not one encrypted two-byte alert */
    MOAT_DTLS_RETIRED_DROP_BAD_TAG,       /* the peer's key does not authenticate it */
    MOAT_DTLS_RETIRED_DROP_WARNING,       /* an authenticated warning alert, not close_notify */
    MOAT_DTLS_RETIRED_DROP_OVER_BUDGET,   /* an alert past MOAT_DTLS_RETIRED_OPENS_PER_DATAGRAM */
    MOAT_DTLS_RETIRED_DROP_COUNT
} moat_dtls_retired_drop;

typedef enum {
    MOAT_DTLS_RETIRED_DROPPED,      /* nothing in the datagram ends the association */
    MOAT_DTLS_RETIRED_CLOSE_NOTIFY, /* the peer closed */
    MOAT_DTLS_RETIRED_FATAL_ALERT   /* the peer sent a fatal alert */
} moat_dtls_retired_verdict;

typedef struct {
    moat_dtls_aead aead;
    uint8_t peer_key[MOAT_DTLS_RETIRED_KEY_MAX];
    /* GCM: the 4-byte salt (RFC 5288); ChaCha20-Poly1305: the 12-byte IV
     * XORed with epoch and sequence number (RFC 7905). */
    uint8_t peer_iv[MOAT_DTLS_RETIRED_IV_MAX];
    uint8_t close_notify[MOAT_DTLS_RETIRED_CLOSE_NOTIFY_MAX];
    uint8_t close_notify_length;
} moat_dtls_retired;

/* Derives both directions' record keys of ssl's current (AEAD) cipher:
 * peer->peer_key/peer_iv get what the peer writes with, own->peer_key/peer_iv
 * what we write with (for checking our own records). Neither close_notify is
 * set. 0, or -1 with a message (a cipher that is not one of the three). */
int moat_dtls_retired_derive(SSL *ssl, bool we_are_client, moat_dtls_retired *peer,
                             moat_dtls_retired *own, char *error, size_t error_size);

/* Overhead of one protected record's fragment: explicit nonce and tag. */
size_t moat_dtls_retired_overhead(moat_dtls_aead aead);

/* Walks the datagram's records (lengths checked before every read) and
 * authenticates alerts of epoch 1 with the peer's key. Returns at the first
 * close_notify or fatal alert (*description: its AlertDescription); every
 * other record is dropped and counted in dropped[reason]. At most
 * MOAT_DTLS_RETIRED_OPENS_PER_DATAGRAM records are decrypted. */
moat_dtls_retired_verdict moat_dtls_retired_receive(const moat_dtls_retired *r,
                                                    const uint8_t *datagram, size_t length,
                                                    uint64_t dropped[MOAT_DTLS_RETIRED_DROP_COUNT],
                                                    uint8_t *description);

/* Short snake_case name for logs and metric labels ("bad_tag"). */
const char *moat_dtls_retired_drop_name(moat_dtls_retired_drop reason);

#endif
