/* What the engine asks of the sessions its workers own: the calls a worker
 * makes into a session (packets by kind, timers, end, its table entries, its
 * description, plain RTP reads, the kernel filter's tick). The engine sits
 * below the session layer (docs/LAYERS.md) and sees a session only as an
 * opaque moat_session; gateway/session/ implements these functions (session.c,
 * session_plain.c, session_kernel.c) and the worker calls them directly: the
 * layering costs no indirection on the packet path. Worker thread only. */
#ifndef MOAT_SESSION_PORT_H
#define MOAT_SESSION_PORT_H

#include "engine/worker.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_session moat_session;
typedef struct moat_kernel_filter moat_kernel_filter;
struct json_t;

const char *moat_session_id(const moat_session *session);

/* The receive path (worker_receive.c), one call per datagram. */
void moat_session_handle_stun(moat_session *session, const moat_path *path, const uint8_t *data,
                              size_t length);
/* A DTLS datagram from the peer. true when it carried application data that
 * decrypted on the established DTLS association: authenticated traffic of
 * the session's own peer (its data channels), which the worker socket's
 * flood detector does not count. */
bool moat_session_handle_dtls(moat_session *session, const moat_path *path, const uint8_t *data,
                              size_t length);
/* An SRTP or SRTCP datagram from the peer (or an SRTP ingest's sender:
 * path NULL); true when it was SRTP that authenticated and was delivered.
 * Whatever authenticates from path confirms an ICE move pending there
 * (ice/ice_pairs.h). */
bool moat_session_handle_srtp(moat_session *session, const moat_path *path, uint8_t *data,
                              size_t length, size_t capacity);
/* This transport's own detector enforces (not counting its worker's). The
 * worker socket's detector is for floods spread over transports none of
 * which sees enough alone: what reaches a transport that enforces already
 * feeds it neither as ingress (worker_receive.c) nor as forgery
 * (moat_session_note_forgery), so one peer flooding its own session cannot
 * switch its whole worker on. */
bool moat_session_own_enforcing(const moat_session *session);
/* Plain RTP ingest (session_plain.c): the session's own socket is readable. */
void moat_session_plain_receive(moat_session *session);

/* Timers; returns false when the session must end. */
bool moat_session_tick(moat_session *session, uint64_t now_us);
const char *moat_session_end_reason(const moat_session *session);
/* Ends the session: plugin hang-up, close_notify, notification, then the
 * worker frees it. */
void moat_session_end(moat_session *session, const char *reason);
/* Whether an end already began a drain of its data channels (a second end
 * would cut it short). */
bool moat_session_draining(const moat_session *session);
/* Shutdown, once the wait for drains is over: a session still draining its
 * data channels ends now. Its SCTP association is aborted (the ABORT goes
 * to the peer, which learns at once that messages may be lost), then it
 * ends as after a drain (plugin hang-up, notification, the "ended (drain
 * cut at shutdown)" line) but without DTLS close_notify, which would tell
 * the peer all went well; the worker frees it. false (nothing done) for a
 * session not draining. The worker's thread, or the thread that stopped
 * the worker. */
bool moat_session_cut_drain(moat_session *session);
/* Frees everything; only the worker's table calls this. */
void moat_session_free(moat_session *session);

/* The packet rate the SDP lets this transport expect. */
uint32_t moat_session_declared_pps(const moat_session *session);
/* This transport's counters and detector state, as JSON. */
struct json_t *moat_session_describe(const moat_session *session);
/* Removes the session's own entries (its ufrags and pair tuples) from the
 * worker's tables; moat_worker_remove_session calls it. */
void moat_session_release_bindings(moat_session *session);

/* The kernel filter (session_kernel.c), from the worker's tick, never per
 * packet. Publishes what the filter needs to judge the session's packets
 * (enforcing, allowed SSRCs, their highest authenticated indexes, SRTP+ tags
 * ahead), and takes back what the kernel dropped for it: into its drop
 * counters (per transport and in total, like any drop) and into its detector,
 * as if those packets had reached it, so the detector stays on while the
 * kernel keeps a flood away. */
void moat_session_kernel_sync(moat_session *session, moat_kernel_filter *filter);
/* The same for drops no session owns (unknown tuples): the worker's counters
 * and its socket detector. */
void moat_worker_kernel_sync(moat_worker *worker, moat_kernel_filter *filter);

#endif
