/* A data channel transfer side built from the gateway's own modules: a
 * DTLS 1.2 transport (gateway/dtls) carrying an SCTP association
 * (gateway/sctp) over a connected UDP socket, driven by a poll loop with
 * the 10 ms SCTP timer tick the gateway's workers use. The sender is the
 * DTLS client and opens one reliable channel with DCEP; the receiver
 * measures the messages that arrive on it. */
#ifndef BENCH_DATACHANNEL_DC_TRANSFER_H
#define BENCH_DATACHANNEL_DC_TRANSFER_H

#include <stdbool.h>

#include "dtls/dtls_context.h"
#include "transfer_run.h"

typedef struct {
    int udp_fd; /* connected to the other side's socket */
    bool is_sender;
    moat_dtls_context *context;   /* this side's identity */
    const char *peer_fingerprint; /* sha-256 of the other side's certificate */
    transfer_params params;
} dc_side;

/* A transfer_side: arg is a dc_side. */
void dc_transfer_side(void *arg, transfer_result *result);

#endif
