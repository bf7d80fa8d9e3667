/* The daemon's composition: start-up and shut-down of every module in order
 * (configuration, certificate, workers, plugins, calls, ng, HTTP). Control
 * thread; main.c calls it. The state it fills is session/gateway_state.h. */
#ifndef MOAT_APP_GATEWAY_H
#define MOAT_APP_GATEWAY_H

#include "session/gateway_state.h"

#include <stddef.h>

/* Start-up in order; each returns 0 or -1 with one clear line in `error`. */
int moat_gateway_start(moat_gateway *gateway, char *error, size_t error_size);
/* Ends every session: data channels drain for up to 6 s (in all); sessions
 * still draining then are cut (SCTP ABORT to the peer). */
void moat_gateway_stop(moat_gateway *gateway);

#endif
