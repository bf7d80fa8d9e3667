/* The baseline transfer side: TLS 1.2 over TCP with the cipher suite the
 * gateway's DTLS negotiates (ECDHE-ECDSA-AES128-GCM-SHA256, X25519, an
 * ECDSA P-256 certificate), OpenSSL on blocking sockets. Each message is
 * one SSL_write, so one TLS record, as each data channel message is one
 * SCTP message. The sender is the TLS client. */
#ifndef BENCH_DATACHANNEL_TLS_TRANSFER_H
#define BENCH_DATACHANNEL_TLS_TRANSFER_H

#include <netinet/in.h>
#include <stdbool.h>

#include "dtls/certificate.h"
#include "transfer_run.h"

/* The suite both transports use. */
#define TLS_TRANSFER_CIPHER "ECDHE-ECDSA-AES128-GCM-SHA256"

typedef struct {
    /* The sender's TCP socket (not yet connected), or the receiver's
     * listening socket. */
    int fd;
    struct sockaddr_in peer; /* where the sender connects */
    bool is_sender;
    const moat_certificate *certificate; /* the receiver's (server) identity */
    transfer_params params;
} tls_side;

/* A transfer_side: arg is a tls_side. The receiver's result detail names the
 * negotiated protocol and cipher. */
void tls_transfer_side(void *arg, transfer_result *result);

#endif
