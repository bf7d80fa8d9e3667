/* The worker's state, shared by the files that implement it (worker.c: the
 * thread, its loop, tasks and sending; worker_tables.c: sessions, ufrags,
 * 5-tuples and candidates; worker_prefilter.c: the socket's detector, load
 * monitor, data limits and kernel filter). Nobody else includes this: other
 * code sees a worker through worker.h. Worker thread unless a field says
 * otherwise. */
#ifndef MOAT_WORKER_PRIVATE_H
#define MOAT_WORKER_PRIVATE_H

#include "engine/worker.h"

#include "base/log.h"
#include "engine/heap_trim.h"
#include "engine/udp_gso.h"
#include "engine/worker_receive.h"
#include "ice/ice_checker.h"
#include "prefilter/detector.h"
#include "prefilter/kernel_filter.h"
#include "prefilter/load_monitor.h"

#include <glib.h>
#include <pthread.h>
#include <sys/socket.h>

typedef struct {
    moat_worker_task_fn task;
    void *data;
    void (*release)(void *data);
} worker_task;

struct moat_worker {
    unsigned index;
    uint16_t port;
    int socket_fd;
    int epoll_fd;
    int event_fd;
    pthread_t thread;
    /* Read from any thread: started is written by the thread that starts and
     * stops the worker, owner by the worker thread itself before it runs
     * anything, both with atomic stores (moat_worker_is_current). */
    bool started;
    bool running;
    pthread_t owner;
    /* A worker never started whose caller plays its thread (tests, fuzz
     * targets): moat_worker_drive_from_caller. */
    bool driven;

    /* Tasks from other threads: the only lock, shared with the control thread
     * alone and taken once per wake-up, never per packet. */
    GMutex task_lock;
    GQueue tasks;
    bool accepting_tasks;

    uint64_t now_us;
    /* The session tick (worker.c): when the next is due, when the last ran,
     * how many have run, and how far usrsctp's clock has been advanced. */
    uint64_t next_tick_us;
    uint64_t last_tick_us;
    uint64_t ticks;
    uint64_t sctp_clock_us;
    /* now_us at the end of the worker loop's last turn (at least every
     * MOAT_WORKER_TICK_MS and a half while it runs); atomic: /healthz reads it. */
    uint64_t heartbeat_us;
    /* Kernel receive time of the datagram being dispatched (monotonic, us);
     * now_us outside the receive loop. Feeds the detectors only. */
    uint64_t arrival_us;
    /* The media socket's drop count at the last tick (SO_MEMINFO, wraps). */
    uint32_t socket_drops_seen;
    unsigned session_count; /* read by the control thread */
    moat_counters counters;
    moat_ice_checker *ice_checker;
    const moat_prefilter_settings *prefilter;
    moat_detector detector;
    uint64_t detector_on_us;
    moat_log_limiter log_limiter;       /* error, warn and info lines */
    moat_log_limiter debug_log_limiter; /* debug lines: their own budget */
    struct moat_data_limits_s *data_limits;
    moat_own_sockets *own; /* the loop guard's record (own_sockets.h); NULL: none */
    moat_load_monitor load;
    moat_kernel_filter *kernel; /* NULL: the user-space prefilter works alone */
    struct moat_relay *relay;   /* the routing core's rings (relay.h); NULL: none */
    bool polling;               /* the socket is read on a timer (load_monitor.h) */
    /* Free heap pages back to the kernel after handshake bursts (heap_trim.h). */
    moat_heap_trim heap_trim;
    uint64_t sessions_removed;
    /* The layer above's per-worker state (moat_worker_set_local). */
    void *local;
    void (*local_free)(void *data);

    GHashTable *sessions_by_id;    /* id -> session (owned) */
    GHashTable *sessions_by_ufrag; /* local ufrag -> session */
    GHashTable *sessions_by_tuple; /* sockaddr_in6 -> session */
    /* Tuples several sessions share (cascade legs between two nodes' worker
     * sockets), told apart by the packet's SSRC: moat_route -> session, and
     * each shared tuple -> its route count (moat_worker_bind_route). */
    GHashTable *sessions_by_route;
    GHashTable *route_tuples;
    GHashTable *plain_by_fd; /* extra socket -> handler (ingest legs, call legs) */
    /* Our host candidates and their priorities (set before the thread starts). */
    struct in6_addr candidate_addresses[MOAT_WORKER_MAX_CANDIDATES];
    uint32_t candidate_priorities[MOAT_WORKER_MAX_CANDIDATES];
    size_t n_candidates;

    moat_receive_batch receive;

    struct mmsghdr send_headers[MOAT_WORKER_BATCH];
    struct iovec send_vectors[MOAT_WORKER_BATCH];
    struct sockaddr_in6 send_addresses[MOAT_WORKER_BATCH];
    moat_packet_info_buffer send_controls[MOAT_WORKER_BATCH];
    uint8_t send_buffers[MOAT_WORKER_BATCH][MOAT_DATAGRAM_CAPACITY];
    uint8_t send_kinds[MOAT_WORKER_BATCH]; /* moat_send_kind, counted once sent */
    unsigned send_count;
    /* The batch as the flush sends it: runs to one destination as UDP GSO
     * messages while the kernel takes them (udp_gso.h). */
    moat_udp_gso_plan send_plan;
    bool send_gso;
};

/* worker_tick.c, worker thread: the tick's clocks at start; how long the
 * loop may sleep (the tick's slack, or a polling slice); the tick itself,
 * run by the loop once now_us reaches next_tick_us. */
void moat_worker_tick_start(moat_worker *worker);
struct timespec moat_worker_tick_wait(const moat_worker *worker);
void moat_worker_tick(moat_worker *worker);

/* worker_send.c: points each send slot's header at its buffer and address. */
void moat_worker_send_batch_init(moat_worker *worker);

/* worker_prefilter.c: logs and counts a switch of the socket's detector. */
void moat_worker_report_detector(moat_worker *worker, moat_detector_event event);

#endif
