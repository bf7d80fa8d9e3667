/* A session's side of its worker's kernel filter (prefilter/kernel_filter.h).
 * Worker thread only, from the worker's tick: never per packet. */
#ifndef MOAT_SESSION_KERNEL_H
#define MOAT_SESSION_KERNEL_H

#include "session/session.h"
#include "prefilter/kernel_filter.h"

/* Publishes what the filter needs to judge the session's packets (enforcing,
 * allowed SSRCs, their highest authenticated indexes, SRTP+ tags ahead), and
 * takes back what the kernel dropped for it: into its drop counters (per
 * transport and in total, like any drop) and into its detector, as if those
 * packets had reached it, so the detector stays on while the kernel keeps a
 * flood away. */
void moat_session_kernel_sync(moat_session *session, moat_kernel_filter *filter);

/* The same for drops no session owns (unknown tuples): the worker's counters
 * and its socket detector. */
void moat_worker_kernel_sync(moat_worker *worker, moat_kernel_filter *filter);

#endif
