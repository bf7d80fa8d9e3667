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

typedef struct {
    moat_dtls_transport *transport;
    moat_certificate *certificate;
    moat_dtls_context *context;
    GQueue outbox; /* GBytes this side sent and the other has not received */
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

/* Delivers queued datagrams in both directions (subject to drop_rate) until
 * both queues are empty. */
void dtls_test_pair_pump(dtls_test_pair *p);

/* Pumps and drives both retransmission timers, sleeping until the next one is
 * due, until neither side is connecting and nothing is queued, or max_ms
 * passed. Returns whether it settled. */
gboolean dtls_test_pair_settle(dtls_test_pair *p, guint max_ms);

void dtls_test_pair_free(dtls_test_pair *p);

#endif
