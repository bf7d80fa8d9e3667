/* Two DTLS transports, a client and a server, each with its own certificate
 * and context, wired back to back through in-memory queues. Datagrams are
 * queued rather than delivered from inside the send callback, as a real
 * network would, so neither side's OpenSSL is re-entered. */
#ifndef MOAT_DTLS_TEST_PAIR_H
#define MOAT_DTLS_TEST_PAIR_H

#include <glib.h>

#include "dtls/certificate.h"
#include "dtls/dtls_context.h"
#include "dtls/dtls_transport.h"

/* A certificate and the context made from it, as a daemon holds them. */
typedef struct {
    moat_certificate *certificate;
    moat_dtls_context *context;
} dtls_test_identity;

typedef struct {
    moat_dtls_transport *transport;
    moat_certificate *certificate;
    moat_dtls_context *context;
    gboolean borrowed_identity; /* certificate and context are not ours to free */
    GQueue outbox;              /* GBytes this side sent and the other has not received */
    gboolean connected;
    guint connected_calls;
    moat_srtp_keying keys;
    guint closed_calls;
    moat_dtls_state closed_state;
    char closed_reason[256];
    GPtrArray *received; /* GBytes of application data */
    gsize largest_handshake_datagram;
    guint datagrams_sent;
} dtls_test_endpoint;

typedef struct {
    const char *client_profiles; /* NULL: the context's default */
    const char *server_profiles;
    /* What each side expects of the other's certificate; NULL: the real
     * fingerprint. */
    const char *client_expects;
    const char *server_expects;
    /* Hand each side the real fingerprint in lowercase hex. */
    gboolean expect_lowercase;
    /* Taken over by the pair; NULL: a generated ECDSA certificate. */
    moat_certificate *server_certificate;
    /* Borrowed, shared with other pairs (and threads); NULL: the pair makes
     * its own. Profiles above do not apply to a shared identity. */
    const dtls_test_identity *client_identity;
    const dtls_test_identity *server_identity;
    /* OpenSSL cipher list the client offers (its own context only); NULL:
     * the context's. */
    const char *client_ciphers;
    double drop_rate; /* of every datagram in either direction */
    guint32 seed;
} dtls_test_pair_options;

typedef struct {
    dtls_test_endpoint client, server;
    double drop_rate;
    GRand *rand;
    guint dropped;
    guint delivered;
} dtls_test_pair;

/* Creates both sides, not yet started. Aborts the test on setup errors. */
dtls_test_pair *dtls_test_pair_new(const dtls_test_pair_options *options);

/* Starts the server, then the client. */
void dtls_test_pair_start(dtls_test_pair *p);

/* Moves the oldest datagram `from` sent to `to` (subject to drop_rate);
 * FALSE when there was none. */
gboolean dtls_test_pair_deliver(dtls_test_pair *p, dtls_test_endpoint *from,
                                dtls_test_endpoint *to);

/* Delivers queued datagrams in both directions (subject to drop_rate) until
 * both queues are empty. */
void dtls_test_pair_pump(dtls_test_pair *p);

/* Pumps and drives both retransmission timers, sleeping until the next one is
 * due, until neither side is connecting and nothing is queued, or max_ms
 * passed. Returns whether it settled. */
gboolean dtls_test_pair_settle(dtls_test_pair *p, guint max_ms);

/* A generated certificate and a default context; free with
 * dtls_test_identity_clear. */
void dtls_test_identity_init(dtls_test_identity *identity);
void dtls_test_identity_clear(dtls_test_identity *identity);

/* New, started and settled within DTLS_TEST_SETTLE_MS. */
#define DTLS_TEST_SETTLE_MS 20000
dtls_test_pair *dtls_test_pair_connect(const dtls_test_pair_options *options);

/* Both sides connected, once, and neither closed. */
void dtls_test_pair_assert_connected(dtls_test_pair *p);

/* Sends length patterned bytes from one side and checks the other received
 * exactly them as one message. */
void dtls_test_pair_round_trip(dtls_test_pair *p, dtls_test_endpoint *from, dtls_test_endpoint *to,
                               gsize length);

void dtls_test_pair_free(dtls_test_pair *p);

#endif
