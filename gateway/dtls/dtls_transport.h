/* One DTLS 1.2 association (RFC 6347) over a datagram path Moat owns: no
 * sockets, datagrams come in through moat_dtls_transport_receive() and go out
 * through callbacks->send. It yields DTLS-SRTP keys (RFC 5764) once the peer's
 * certificate matches the SDP fingerprint, and carries application data (SCTP
 * packets) afterwards.
 *
 * A transport belongs to one media worker thread. Callbacks are called from
 * inside the transport's functions: send must not call back into the
 * transport; no callback may free it (free it after the call returns). */
#ifndef MOAT_DTLS_TRANSPORT_H
#define MOAT_DTLS_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtls/dtls_context.h"
#include "dtls/dtls_record.h"
#include "dtls/dtls_retired.h"
#include "srtp/srtp_keying.h"

typedef struct moat_dtls_transport moat_dtls_transport;

typedef enum { MOAT_DTLS_ROLE_CLIENT, MOAT_DTLS_ROLE_SERVER } moat_dtls_role;

typedef enum {
    MOAT_DTLS_NEW,
    MOAT_DTLS_CONNECTING,
    MOAT_DTLS_CONNECTED,
    MOAT_DTLS_CLOSED,
    MOAT_DTLS_FAILED
} moat_dtls_state;

/* Largest DTLS datagram sent during the handshake (the path MTU budget left
 * after IP, UDP and TURN framing). */
#define MOAT_DTLS_MTU 1200
/* One record's plaintext. */
#define MOAT_DTLS_MAX_APPLICATION_DATA 16384
/* Retransmissions of one flight before the handshake fails. */
#define MOAT_DTLS_MAX_RETRANSMITS 7
/* Whole handshake, from moat_dtls_transport_start(). */
#define MOAT_DTLS_HANDSHAKE_TIMEOUT_MS 30000
/* Encrypted records OpenSSL may hold unread while a handshake runs
 * (dtls_transport.c: a bound on what it holds now, not a lifetime total),
 * and the longest handshake message it reassembles (dtls_context.c;
 * OpenSSL takes at least a record's worth). */
#define MOAT_DTLS_MAX_EARLY_PROTECTED   16
#define MOAT_DTLS_MAX_HANDSHAKE_MESSAGE 16384
/* First retransmission timeout; doubles per retransmission up to the max. */
#define MOAT_DTLS_INITIAL_RETRANSMIT_MS 400
#define MOAT_DTLS_MAX_RETRANSMIT_MS     3200

enum {
    MOAT_DTLS_OK = 0,
    MOAT_DTLS_ERR_MALFORMED = -1, /* the record pre-parser dropped the datagram */
    MOAT_DTLS_ERR_STATE = -2,     /* not started, or already closed or failed */
    MOAT_DTLS_ERR_TOO_LONG = -3,  /* application data over MOAT_DTLS_MAX_APPLICATION_DATA */
    MOAT_DTLS_ERR_FAILED = -4,    /* this call failed the transport (closed() was called) */
    MOAT_DTLS_ERR_INVALID = -5,   /* NULL or empty argument */
    MOAT_DTLS_ERR_DROPPED = -6    /* retired: no record in the datagram was a closing alert */
};

typedef struct {
    /* Puts a datagram on the wire; it is only valid during the call. */
    void (*send)(void *user, const uint8_t *datagram, size_t length);
    /* Handshake done and the fingerprint matched; keys only valid during
     * the call (copy them). */
    void (*connected)(void *user, const moat_srtp_keying *keys);
    /* Decrypted application data (SCTP packets); valid during the call. */
    void (*application_data)(void *user, const uint8_t *data, size_t length);
    /* MOAT_DTLS_CLOSED when the peer sent close_notify, MOAT_DTLS_FAILED on
     * handshake error, fingerprint mismatch, fatal alert, too many
     * retransmits or the handshake timeout. Called at most once. */
    void (*closed)(void *user, moat_dtls_state state, const char *reason);
} moat_dtls_callbacks;

typedef struct {
    uint64_t datagrams_received; /* every datagram given to receive() */
    uint64_t records_received;   /* records in datagrams the pre-parser passed */
    uint64_t datagrams_rejected; /* dropped by the pre-parser, all reasons */
    uint64_t rejected[MOAT_DTLS_RECORD_RESULT_COUNT]; /* by moat_dtls_record_result */
    uint64_t datagrams_sent;
    uint64_t bytes_sent;
    uint64_t retransmits; /* handshake flights re-sent after a timeout */
    /* Listening (dtls_listen.h): HelloVerifyRequests sent, and datagrams
     * the stateless listener dropped (not a ClientHello, or unparsable). */
    uint64_t hello_verify_requests;
    uint64_t listen_dropped;
    /* Records a retired transport dropped, by moat_dtls_retired_drop. */
    uint64_t retired_dropped[MOAT_DTLS_RETIRED_DROP_COUNT];
    bool retired; /* moat_dtls_transport_retire succeeded */
} moat_dtls_transport_stats;

/* remote_fingerprint_alg and remote_fingerprint come from the peer's SDP
 * (a=fingerprint:sha-256 AB:CD:...) and are copied. send is required, the
 * other callbacks optional. NULL and a message on bad arguments. */
moat_dtls_transport *moat_dtls_transport_new(moat_dtls_context *ctx, moat_dtls_role role,
                                             const char *remote_fingerprint_alg,
                                             const char *remote_fingerprint,
                                             const moat_dtls_callbacks *callbacks, void *user,
                                             char *error, size_t error_size);

/* NEW -> CONNECTING. A client sends its ClientHello now, a server waits for
 * one. Starts the handshake deadline. */
int moat_dtls_transport_start(moat_dtls_transport *t);

/* One UDP payload the demultiplexer classified as DTLS. Returns MOAT_DTLS_OK
 * when it reached OpenSSL (which silently discards records it cannot
 * authenticate), MOAT_DTLS_ERR_MALFORMED when the pre-parser dropped it,
 * MOAT_DTLS_ERR_STATE outside CONNECTING/CONNECTED, MOAT_DTLS_ERR_FAILED if it
 * failed the transport. */
int moat_dtls_transport_receive(moat_dtls_transport *t, const uint8_t *datagram, size_t length);

/* Milliseconds until moat_dtls_transport_handle_timeout() is due (0: now), or
 * -1 when no timer runs. */
int64_t moat_dtls_transport_timeout_ms(moat_dtls_transport *t);

/* Retransmits the last flight if its timer expired; fails the transport after
 * MOAT_DTLS_MAX_RETRANSMITS retransmissions of a flight or when the handshake
 * deadline passed. Harmless when nothing is due. */
void moat_dtls_transport_handle_timeout(moat_dtls_transport *t);

/* One record of application data, only when CONNECTED. */
int moat_dtls_transport_send(moat_dtls_transport *t, const uint8_t *data, size_t length);

/* Sends close_notify when the handshake is complete and moves to CLOSED
 * without calling closed(). */
void moat_dtls_transport_shutdown(moat_dtls_transport *t);

/* Frees OpenSSL's record buffers (about 33 KB: DTLS keeps its read and
 * write buffers even in SSL_MODE_RELEASE_BUFFERS) when the transport is
 * CONNECTED and has neither received nor sent a datagram since the previous
 * call; OpenSSL takes them again for the next record, so nothing is lost,
 * only an allocation on the next datagram. Meant for a timer of about a
 * second: a media-only session's DTLS falls silent after the handshake, a
 * busy data channel keeps its buffers. Returns true when it freed them. */
bool moat_dtls_transport_trim(moat_dtls_transport *t);

/* Retirement, for an association that will carry no application data (a
 * media-only session): derives the peer's record key, has OpenSSL write our
 * close_notify (kept, not sent), checks our derived key authenticates it, and
 * frees the SSL (about 29 KB). Afterwards the state stays CONNECTED;
 * receive() only authenticates the peer's close_notify (CLOSED, our
 * close_notify answers it, closed() called) or fatal alert (FAILED) and drops
 * every other record (MOAT_DTLS_ERR_DROPPED, counted in
 * stats.retired_dropped); send() fails with MOAT_DTLS_ERR_STATE; no timer
 * runs; shutdown() sends the kept close_notify. Only call it once the peer
 * can no longer need a handshake retransmission (it has sent authenticated
 * SRTP). MOAT_DTLS_ERR_STATE (nothing changed) when the transport is not
 * CONNECTED, already retired, has a timer running or a cipher other than the
 * AEAD suites; MOAT_DTLS_ERR_FAILED (with a message) when the derived keys
 * failed the check: the SSL is kept and our close_notify is already written
 * (shutdown() sends it), so never call it while data may still be sent. */
int moat_dtls_transport_retire(moat_dtls_transport *t, char *error, size_t error_size);
bool moat_dtls_transport_retired(const moat_dtls_transport *t);

moat_dtls_state moat_dtls_transport_state(const moat_dtls_transport *t);
/* The negotiated SRTP profile once CONNECTED, else 0. */
moat_srtp_profile moat_dtls_transport_srtp_profile(const moat_dtls_transport *t);
/* Why the transport closed or failed; "" while it has not. */
const char *moat_dtls_transport_reason(const moat_dtls_transport *t);
void moat_dtls_transport_stats_get(const moat_dtls_transport *t, moat_dtls_transport_stats *out);
const char *moat_dtls_state_name(moat_dtls_state state);

void moat_dtls_transport_free(moat_dtls_transport *t);

#endif
