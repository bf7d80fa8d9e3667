/* A media worker: one thread, one UDP socket (its own port), one epoll loop
 * with an eventfd for tasks from the control thread and a timerfd tick. It
 * owns every session placed on it; nothing on its packet path takes a lock
 * another worker could hold. */
#ifndef MOAT_WORKER_H
#define MOAT_WORKER_H

#include "engine/counters.h"
#include "engine/own_sockets.h"
#include "base/log.h"
#include "prefilter/prefilter_settings.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct moat_worker moat_worker;

/* Both ends of a datagram. The local address matters on a host with several
 * addresses: a reply must leave from the address the request arrived on, or
 * the peer's ICE agent rejects it (RFC 8445 §7.2.5.2.1). */
typedef struct {
    struct sockaddr_in6 remote;
    struct in6_addr local;
} moat_path;
typedef struct moat_session moat_session;
typedef struct moat_ice_checker moat_ice_checker;

#define MOAT_WORKER_BATCH   64
#define MOAT_WORKER_TICK_MS 10
/* Receive buffers leave room for in-place growth (SRTP tags on relay). */
#define MOAT_DATAGRAM_CAPACITY 2048

/* Binds the socket now so that a port in use is reported before anything
 * starts. */
moat_worker *moat_worker_new(unsigned index, const char *bind_address, uint16_t port, char *error,
                             size_t error_size);
/* Before start: the prefilter settings, which must outlive the worker. */
void moat_worker_set_prefilter(moat_worker *worker, const moat_prefilter_settings *settings);
/* Those settings, or NULL (a worker of a test without them). */
const moat_prefilter_settings *moat_worker_prefilter(const moat_worker *worker);
/* Before start: the gateway's data-channel limits (outlive the worker). A
 * worker without them gives each session the default limit and no total. */
struct moat_data_limits_s;
void moat_worker_set_data_limits(moat_worker *worker, struct moat_data_limits_s *limits);
/* Before start: the record of Moat's own sockets (own_sockets.h; it
 * outlives the worker). The worker's port is marked there until the worker
 * is freed; a STUN check from one of them is dropped ("loop"), and the
 * worker's sessions (an ingest's socket) read it too. NULL: none. */
void moat_worker_set_own_sockets(moat_worker *worker, moat_own_sockets *own);
moat_own_sockets *moat_worker_own_sockets(const moat_worker *worker);
/* Before start: loads the eBPF socket filter onto the worker's socket
 * (prefilter/kernel_filter.h); -1 with the reason when BPF is unavailable. */
int moat_worker_attach_kernel_filter(moat_worker *worker, char *error, size_t error_size);
void moat_worker_detach_kernel_filter(moat_worker *worker);
/* NULL when the user-space prefilter works alone. */
const struct moat_kernel_filter *moat_worker_kernel_filter(const moat_worker *worker);
/* Before start: the routing core's relay (relay.h), shared by every worker
 * and outliving them; the worker drains its rings once per wake-up. */
struct moat_relay;
void moat_worker_set_relay(moat_worker *worker, struct moat_relay *relay);
struct moat_relay *moat_worker_relay(const moat_worker *worker);
/* Any thread: wakes the worker's loop (relay rings, tasks). */
void moat_worker_wake(moat_worker *worker);
int moat_worker_start(moat_worker *worker, char *error, size_t error_size);
/* Ends every session gracefully (data channels drain first; one already
 * draining is left to finish); any thread.
 * Sessions leave the worker as they finish. */
void moat_worker_end_sessions(moat_worker *worker);
/* Asks the thread to finish, waits for it, and closes every session (a
 * worker driven by its caller: the same on the calling thread); a data
 * channel drain still under way is cut (moat_session_cut_drain). */
void moat_worker_stop(moat_worker *worker);
void moat_worker_free(moat_worker *worker);

/* One pointer a layer above keeps per worker (the session layer's shared
 * retransmission caches, session_rtx_share.c): set and read on the
 * worker's thread only; the worker owns it from then on and calls
 * free_fn(data) in moat_worker_free, after its sessions closed. Setting it
 * again frees the previous one. */
void moat_worker_set_local(moat_worker *worker, void *data, void (*free_fn)(void *data));
void *moat_worker_local(const moat_worker *worker);

unsigned moat_worker_index(const moat_worker *worker);
uint16_t moat_worker_port(const moat_worker *worker);
unsigned moat_worker_session_count(const moat_worker *worker);
/* Grows the socket's receive buffer past the system limit (needs
 * CAP_NET_ADMIN); for benchmarks that queue a backlog. */
int moat_worker_force_receive_buffer(moat_worker *worker, int bytes);
/* CPU time the worker thread has used, in nanoseconds (any thread). */
uint64_t moat_worker_cpu_ns(const moat_worker *worker);
/* Read-only view for the control thread (see counters.h). */
const moat_counters *moat_worker_counters(const moat_worker *worker);

/* Runs `task(data)` on the worker thread. Any thread. If the worker has
 * stopped, `release(data)` is called instead (when given). */
typedef void (*moat_worker_task_fn)(moat_worker *worker, void *data);
void moat_worker_post(moat_worker *worker, moat_worker_task_fn task, void *data,
                      void (*release)(void *data));

/* ---- worker thread only ---- */
/* {index, enforcing, ingress_pps, transports: [...]} for the stats snapshot. */
struct json_t *moat_worker_describe(moat_worker *worker);
bool moat_worker_is_current(const moat_worker *worker);
/* The worker socket's detector enforces (a flood over many 5-tuples): every
 * transport of the worker then enforces too. */
bool moat_worker_enforcing(const moat_worker *worker);
/* Feeds the worker socket's detector. */
void moat_worker_note_datagram(moat_worker *worker);
void moat_worker_note_bad_datagram(moat_worker *worker);
/* Worker thread: after a wake-up's receive loop (load_monitor.h). */
void moat_worker_note_wake(moat_worker *worker, unsigned datagrams, bool drained);
/* Worker thread: the admission chance the worker can afford for flooded
 * streams, MOAT_GUARD_CHANCE_ALL unless it is overloaded. */
uint32_t moat_worker_admission_chance(const moat_worker *worker);
uint64_t moat_worker_now_us(const moat_worker *worker);
/* Worker thread: how many session ticks have run (one every
 * MOAT_WORKER_TICK_MS to 1.5 x MOAT_WORKER_TICK_MS, with the loop's next
 * wake-up after it is due). */
uint64_t moat_worker_ticks(const moat_worker *worker);
/* Any thread: microseconds since the worker's loop last went round (it does
 * at least every MOAT_WORKER_TICK_MS and a half while it runs); UINT64_MAX when the
 * worker is not started. /healthz calls a worker stuck beyond a second. */
uint64_t moat_worker_heartbeat_age_us(const moat_worker *worker);
/* When the kernel received the datagram being dispatched (same clock as
 * now_us, never later); now_us outside the receive path. For rate
 * detectors: a backlog read late keeps its real spacing. */
uint64_t moat_worker_arrival_us(const moat_worker *worker);
/* The worker's log limiters: lines from the packet path and session
 * lifecycles of every session on the worker share them, so a flood (of
 * packets or of sessions) cannot become a log flood. Debug lines have a
 * budget of their own, so turning debug on never costs an operator the
 * lifecycle lines. *suppressed (optional) gets how many lines were dropped
 * since the last one allowed. */
bool moat_worker_log_allow(moat_worker *worker, moat_log_level level, uint64_t *suppressed);
/* Only for a worker that was never started, driven by the caller's thread
 * (tests, fuzz targets): sets the clock its sessions read. */
void moat_worker_set_now_us(moat_worker *worker, uint64_t now_us);
/* Only for a worker that was never started (tests, fuzz targets): the
 * calling thread plays the worker's thread (moat_worker_is_current, the
 * relay's current worker) while `driven`, so a plugin's relay to a session
 * on this worker takes the same-worker path; false gives that up (another
 * worker driven by the same thread is then the current one).
 * moat_worker_stop ends the driving. */
void moat_worker_drive_from_caller(moat_worker *worker, bool driven);
/* Same restriction: runs the tasks posted to the worker and drains its
 * relay ring, as one wake-up of its thread would. */
void moat_worker_run_pending(moat_worker *worker);
moat_counters *moat_worker_counters_mut(moat_worker *worker);
moat_ice_checker *moat_worker_ice_checker(moat_worker *worker);
/* The data-channel limits set before start, or NULL. */
struct moat_data_limits_s *moat_worker_data_limits(moat_worker *worker);

/* What a queued datagram is, for the sent counters (counted when the kernel
 * took it, so they match the host's UDP OutDatagrams). */
typedef enum {
    MOAT_SEND_OTHER = 0, /* STUN, DTLS, plain RTP */
    MOAT_SEND_RTP,
    MOAT_SEND_RTCP,
} moat_send_kind;

/* Queues a datagram; sent with sendmmsg at the end of the current batch. */
void moat_worker_send(moat_worker *worker, const moat_path *path, const uint8_t *data,
                      size_t length);
/* Zero-copy variant: fill the returned buffer, then commit. */
uint8_t *moat_worker_send_buffer(moat_worker *worker, size_t *capacity);
void moat_worker_send_commit(moat_worker *worker, const moat_path *path, size_t length,
                             moat_send_kind kind);
/* Sends the batch. A full socket buffer is waited for (briefly) before the
 * rest is dropped as send_eagain; a datagram the kernel refuses is dropped
 * alone (send_error) and the batch goes on. */
void moat_worker_flush(moat_worker *worker);

void moat_worker_add_session(moat_worker *worker, moat_session *session);
/* Frees the session after removing it from every table. */
void moat_worker_remove_session(moat_worker *worker, moat_session *session);
moat_session *moat_worker_find_session(moat_worker *worker, const char *session_id);
/* Binding never replaces another session's entry: false when the key
 * belongs to another session (true when it is already this session's).
 * Unbinding removes the entry only if it is this session's. */
bool moat_worker_bind_ufrag(moat_worker *worker, const char *local_ufrag, moat_session *session);
void moat_worker_unbind_ufrag(moat_worker *worker, const char *local_ufrag, moat_session *session);
bool moat_worker_bind_tuple(moat_worker *worker, const struct sockaddr_in6 *remote,
                            moat_session *session);
void moat_worker_unbind_tuple(moat_worker *worker, const struct sockaddr_in6 *remote,
                              moat_session *session);
/* A 5-tuple shared by several sessions (the cascade legs between two nodes'
 * worker sockets, one per room, all from one remote socket to ours), each
 * session owning the SSRCs its peer sends from (RTP: the header's SSRC,
 * RTCP: the first packet's sender SSRC). A packet whose tuple no session
 * owns goes to the session owning its (tuple, SSRC). Same rules as the
 * tuple table: binding never replaces another session's route, and fails
 * when a session owns the whole tuple; unbinding removes only this
 * session's. Worker thread. */
typedef struct {
    struct sockaddr_in6 remote;
    uint32_t ssrc;
} moat_route;
bool moat_worker_bind_route(moat_worker *worker, const struct sockaddr_in6 *remote, uint32_t ssrc,
                            moat_session *session);
void moat_worker_unbind_route(moat_worker *worker, const struct sockaddr_in6 *remote, uint32_t ssrc,
                              moat_session *session);
/* Our host candidates' addresses (v4-mapped for IPv4) and priorities; control
 * thread, before moat_worker_start. */
#define MOAT_WORKER_MAX_CANDIDATES 16
void moat_worker_set_candidates(moat_worker *worker, const struct in6_addr *addresses,
                                const uint32_t *priorities, size_t n);
/* The priority of our candidate on `local`; the lowest host priority when
 * that address was not announced. */
uint32_t moat_worker_local_priority(const moat_worker *worker, const struct in6_addr *local);

/* Worker thread: an extra socket (plain RTP ingest) whose readiness calls
 * moat_session_plain_receive(session); remove before closing it. */
void moat_worker_add_plain(moat_worker *worker, int fd, moat_session *session);
void moat_worker_remove_plain(moat_worker *worker, int fd);
/* Worker thread: any extra socket (a call leg's RTP or RTCP port) whose
 * readiness calls on_readable(data) on this thread; remove before closing. */
typedef void (*moat_worker_socket_fn)(void *data);
void moat_worker_add_socket(moat_worker *worker, int fd, moat_worker_socket_fn on_readable,
                            void *data);
void moat_worker_remove_socket(moat_worker *worker, int fd);

#endif
