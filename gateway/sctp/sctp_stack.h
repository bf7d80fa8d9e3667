/* The process-wide SCTP stack: usrsctp in AF_CONN mode without its own
 * threads (usrsctp_init_nothreads), its tunables, and its timer clock.
 *
 * usrsctp keeps global state (endpoints, timers, statistics) behind its own
 * internal locks; Moat accepts that one shared stack serves all media
 * workers. What it does not accept is usrsctp calling into a session from a
 * foreign thread, so usrsctp's callbacks only fill mailboxes (sctp_mailbox.h)
 * and each association's owner thread delivers them. */
#ifndef MOAT_SCTP_STACK_H
#define MOAT_SCTP_STACK_H

#include <stdint.h>

/* How often moat_sctp_stack_handle_timers should run: usrsctp's timers have
 * 10 ms granularity (hz = 100). */
#define MOAT_SCTP_TIMER_INTERVAL_MS 10

/* Once per process, from any thread, before any association is created;
 * later calls return the first call's result. 0 or -errno. */
int moat_sctp_stack_init(void);

/* Call from every media worker's timer tick (about every
 * MOAT_SCTP_TIMER_INTERVAL_MS) with the milliseconds since that worker's
 * previous call. usrsctp has one clock for the whole process: only the first
 * thread that ever calls this advances it (usrsctp_handle_timers), so N
 * workers ticking do not make time run N times faster. On every calling
 * thread it then delivers the pending packets and events of the associations
 * that thread owns, running their callbacks there. */
void moat_sctp_stack_handle_timers(uint32_t elapsed_ms);

#endif
