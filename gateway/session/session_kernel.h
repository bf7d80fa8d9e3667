/* A session's side of its worker's kernel filter (prefilter/kernel_filter.h).
 * Worker thread only, from the worker's tick: never per packet. */
#ifndef MOAT_SESSION_KERNEL_H
#define MOAT_SESSION_KERNEL_H

#include "engine/session_port.h"
#include "session/session.h"
#include "prefilter/kernel_filter.h"

/* moat_session_kernel_sync and moat_worker_kernel_sync: engine/session_port.h
 * (the worker calls them from its tick). */

/* What moat_session_kernel_sync does, on the filter's shared state: takes
 * the session's kernel drops back and publishes its view and its streams
 * (the SDP's SSRCs and every SSRC that authenticated, 0 included) into its
 * slot, if it has one. */
void moat_session_kernel_publish(moat_session *session, moat_kf_state *state);

#endif
