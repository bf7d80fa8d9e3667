/* The transport's state, shared by the files that implement
 * dtls_transport.h (dtls_transport.c, dtls_listen.c) and nobody else. Same
 * thread contract as the transport: its worker only. */
#ifndef MOAT_DTLS_TRANSPORT_PRIVATE_H
#define MOAT_DTLS_TRANSPORT_PRIVATE_H

#include <glib.h>
#include <openssl/ssl.h>

#include "dtls_datagram_bio.h"
#include "dtls_transport.h"
#include "fingerprint.h"

typedef struct moat_dtls_listener moat_dtls_listener;

#define ALGORITHM_MAX_LENGTH 16
#define REASON_MAX_LENGTH    256

struct moat_dtls_transport {
    SSL *ssl; /* NULL once retired */
    /* Set by moat_dtls_transport_retire: the peer's key and our
     * close_notify; owned. */
    moat_dtls_retired *retired;
    bool capturing;         /* OpenSSL's writes go to retired->close_notify */
    bool close_notify_sent; /* the retired close_notify, sent at most once */
    moat_dtls_datagram_link link;
    moat_dtls_role role;
    moat_dtls_state state;
    moat_dtls_callbacks callbacks;
    void *user;
    char remote_alg[ALGORITHM_MAX_LENGTH];
    char remote_fingerprint[MOAT_FINGERPRINT_MAX_LENGTH];
    moat_srtp_profile profile;
    unsigned flight_retransmits; /* of the flight in flight; reset per flight */
    /* OpenSSL reported no retransmission timer running, and none has
     * started since (retransmit_timer clears it): the session tick need
     * not ask again (DTLSv1_get_timeout is an SSL_ctrl, a few hundred
     * nanoseconds per session per tick). */
    bool timer_stopped;
    gint64 handshake_deadline_us; /* monotonic */
    /* Encrypted records taken while connecting that OpenSSL may still hold
     * (each in a whole read buffer: those of an epoch it cannot read yet,
     * application data before the peer's Finished): capped. Counted again
     * from 0 once OpenSSL has read the peer's ChangeCipherSpec
     * (peer_cipher_read), which makes it read, or discard, what it held. */
    unsigned early_protected;
    bool peer_cipher_read;
    moat_dtls_transport_stats stats;
    uint64_t trim_seen; /* datagrams both ways at the last moat_dtls_transport_trim */
    bool buffers_freed; /* by trim; taken back before OpenSSL reads or writes */
    char reason[REASON_MAX_LENGTH];
    /* Set by moat_dtls_transport_listen until a ClientHello returns a valid
     * cookie (dtls_listen.c); owned. */
    moat_dtls_listener *listener;
};

/* dtls_record_guard.c: the shortest encrypted record OpenSSL may be given
 * (SIZE_MAX before a cipher is chosen), and whether the encrypted records
 * of `records` may go to OpenSSL while connecting (counts them). The
 * transport's thread. */
size_t moat_dtls_transport_shortest_protected(const moat_dtls_transport *t);
bool moat_dtls_transport_early_allowed(moat_dtls_transport *t, const uint8_t *records,
                                       size_t length);

/* Runs OpenSSL on what the datagram BIO holds: the handshake while
 * CONNECTING, then application data. */
void moat_dtls_transport_advance(moat_dtls_transport *t);

/* dtls_listen.c: a listening transport's receive path (the datagram already
 * passed the record pre-parser) and the listener's release. */
int moat_dtls_listener_receive(moat_dtls_transport *t, const uint8_t *datagram, size_t length);
void moat_dtls_listener_free(moat_dtls_listener *listener);

#endif
