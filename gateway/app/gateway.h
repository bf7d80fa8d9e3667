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
/* A second stop signal: moat_gateway_stop does not wait for drains (those
 * under way are cut at once). Async-signal-safe; any thread. */
void moat_gateway_hurry(void);
/* After the main loop returned (its signal sources no longer run): SIGTERM,
 * SIGINT and SIGHUP call moat_gateway_hurry instead of being ignored (or,
 * once GLib removed its source, killing the process). */
void moat_gateway_catch_stop_signals(void);

#endif
