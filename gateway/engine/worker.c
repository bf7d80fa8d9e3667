/* A media worker: its thread and epoll loop and the task queue other
 * threads post to. Its session tick, tables, socket defences and the send
 * batch live in worker_tick.c, worker_tables.c, worker_prefilter.c and
 * worker_send.c. */
#include "engine/worker_private.h"
#include "engine/relay.h"

#include "engine/session_port.h"
#include "engine/packet_info.h"
#include "engine/worker_receive.h"
#include "base/log.h"
#include "prefilter/load_monitor.h"
#include "prefilter/stream_guard.h"
#include "ice/ice_checker.h"
#include "prefilter/kernel_filter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Log lines a worker lets through per second (see moat_worker_log_allow). */
#define WORKER_LOG_BURST 200

static uint64_t monotonic_us(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
}

static guint tuple_hash(gconstpointer key)
{
    const struct sockaddr_in6 *address = key;
    uint32_t words[4];
    memcpy(words, &address->sin6_addr, sizeof words);
    uint32_t hash = 2166136261u;
    for (int i = 0; i < 4; i++)
        hash = (hash ^ words[i]) * 16777619u;
    return (hash ^ address->sin6_port) * 16777619u;
}

static gboolean tuple_equal(gconstpointer a, gconstpointer b)
{
    const struct sockaddr_in6 *x = a, *y = b;
    return x->sin6_port == y->sin6_port &&
           memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
}

static guint route_hash(gconstpointer key)
{
    const moat_route *route = key;
    return (tuple_hash(&route->remote) ^ route->ssrc) * 16777619u;
}

static gboolean route_equal(gconstpointer a, gconstpointer b)
{
    const moat_route *x = a, *y = b;
    return x->ssrc == y->ssrc && tuple_equal(&x->remote, &y->remote);
}

static void free_session(gpointer data)
{
    moat_session_free(data);
}

/* Data channel packets grow to what path MTU discovery (RFC 8899, in
 * gateway/sctp) confirms, so a datagram larger than the path must be lost,
 * never fragmented: IP_PMTUDISC_PROBE sends with DF set and ignores the
 * kernel's path MTU cache; a datagram above the interface MTU fails with
 * EMSGSIZE (a send error, counted, for that datagram alone). Media and the
 * DTLS handshake stay below 1280 bytes and never meet either. Both options:
 * the socket is dual-stack, and IPv4 peers go through the IPv4 one. A
 * kernel that refuses them only makes the probes' answers less exact. */
static void no_fragmentation(int fd)
{
    int probe6 = IPV6_PMTUDISC_PROBE, probe4 = IP_PMTUDISC_PROBE;
    setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &probe6, sizeof probe6);
    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &probe4, sizeof probe4);
}

moat_worker *moat_worker_new(unsigned index, const char *bind_address, uint16_t port, char *error,
                             size_t error_size)
{
    struct sockaddr_in6 local = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
    struct in_addr v4;
    if (inet_pton(AF_INET6, bind_address, &local.sin6_addr) != 1) {
        if (inet_pton(AF_INET, bind_address, &v4) != 1) {
            snprintf(error, error_size, "[media] bind = \"%s\": not an IP address", bind_address);
            return NULL;
        }
        /* IPv4 on the dual-stack socket is the v4-mapped form. */
        local.sin6_addr.s6_addr[10] = 0xff;
        local.sin6_addr.s6_addr[11] = 0xff;
        memcpy(&local.sin6_addr.s6_addr[12], &v4, 4);
    }
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(error, error_size, "cannot create UDP socket: %s", strerror(errno));
        return NULL;
    }
    int off = 0, buffer = 4 * 1024 * 1024;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    if (moat_packet_info_enable(fd) != 0) {
        snprintf(error, error_size, "cannot enable IP_PKTINFO on the media socket: %s",
                 strerror(errno));
        close(fd);
        return NULL;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
    /* A fan-out burst (a keyframe to every subscriber) outgrows the
     * default net.core.wmem_max cap; with CAP_NET_ADMIN the cap is passed
     * by, without it the capped size stays. */
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buffer, sizeof buffer);
    no_fragmentation(fd);
    if (bind(fd, (struct sockaddr *)&local, sizeof local) < 0) {
        snprintf(error, error_size, "cannot bind UDP media port %s:%u: %s", bind_address, port,
                 strerror(errno));
        close(fd);
        return NULL;
    }
    moat_worker *worker = g_new0(moat_worker, 1);
    worker->index = index;
    worker->port = port;
    worker->socket_fd = fd;
    worker->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    worker->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    g_mutex_init(&worker->task_lock);
    g_queue_init(&worker->tasks);
    worker->accepting_tasks = true;
    worker->ice_checker = moat_ice_checker_new();
    moat_log_limiter_init(&worker->log_limiter, WORKER_LOG_BURST, 1000000u);
    moat_log_limiter_init(&worker->debug_log_limiter, WORKER_LOG_BURST, 1000000u);
    worker->sessions_by_id = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, free_session);
    worker->sessions_by_ufrag = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    worker->sessions_by_tuple = g_hash_table_new_full(tuple_hash, tuple_equal, g_free, NULL);
    worker->sessions_by_route = g_hash_table_new_full(route_hash, route_equal, g_free, NULL);
    worker->route_tuples = g_hash_table_new_full(tuple_hash, tuple_equal, g_free, NULL);
    moat_receive_batch_init(&worker->receive);
    moat_worker_send_batch_init(worker);
    if (worker->epoll_fd < 0 || worker->event_fd < 0) {
        snprintf(error, error_size, "cannot create worker event sources: %s", strerror(errno));
        moat_worker_free(worker);
        return NULL;
    }
    return worker;
}

int moat_worker_force_receive_buffer(moat_worker *worker, int bytes)
{
    return setsockopt(worker->socket_fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes);
}

uint64_t moat_worker_cpu_ns(const moat_worker *worker)
{
    clockid_t clock;
    struct timespec used;
    if (!__atomic_load_n(&worker->started, __ATOMIC_ACQUIRE) ||
        pthread_getcpuclockid(worker->thread, &clock) != 0 || clock_gettime(clock, &used) != 0)
        return 0;
    return (uint64_t)used.tv_sec * 1000000000u + (uint64_t)used.tv_nsec;
}

unsigned moat_worker_index(const moat_worker *worker)
{
    return worker->index;
}

uint16_t moat_worker_port(const moat_worker *worker)
{
    return worker->port;
}

unsigned moat_worker_session_count(const moat_worker *worker)
{
    return __atomic_load_n(&worker->session_count, __ATOMIC_RELAXED);
}

const moat_counters *moat_worker_counters(const moat_worker *worker)
{
    return &worker->counters;
}

moat_counters *moat_worker_counters_mut(moat_worker *worker)
{
    return &worker->counters;
}

moat_ice_checker *moat_worker_ice_checker(moat_worker *worker)
{
    return worker->ice_checker;
}

json_t *moat_worker_describe(moat_worker *worker)
{
    json_t *transports = json_array();
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, worker->sessions_by_id);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        json_t *transport = moat_session_describe(value);
        json_object_set_new(transport, "worker", json_integer(worker->index));
        json_array_append_new(transports, transport);
    }
    json_t *description = json_pack(
        "{s:i, s:b, s:f, s:I, s:o}", "index", (int)worker->index, "enforcing",
        moat_worker_enforcing(worker), "ingress_pps", moat_detector_rate(&worker->detector),
        "switches_on", (json_int_t)worker->detector.switches_on, "transports", transports);
    /* How the socket is read: wake-ups, datagrams, polling, admission chance. */
    json_object_set_new(
        description, "receive",
        json_pack("{s:I, s:I, s:b, s:i, s:f}", "wakes", (json_int_t)worker->load.wakes, "datagrams",
                  (json_int_t)worker->load.datagrams, "polling", worker->polling, "slice_us",
                  (int)moat_load_monitor_slice_us(&worker->load), "admission_chance",
                  moat_load_monitor_chance(&worker->load) / (double)MOAT_GUARD_CHANCE_ALL));
    return description;
}

static void run_tasks(moat_worker *worker);

bool moat_worker_is_current(const moat_worker *worker)
{
    pthread_t owner;
    __atomic_load(&worker->owner, &owner, __ATOMIC_ACQUIRE);
    return (__atomic_load_n(&worker->started, __ATOMIC_ACQUIRE) ||
            __atomic_load_n(&worker->driven, __ATOMIC_ACQUIRE)) &&
           pthread_equal(pthread_self(), owner);
}

void moat_worker_drive_from_caller(moat_worker *worker, bool driven)
{
    g_assert(!__atomic_load_n(&worker->started, __ATOMIC_ACQUIRE));
    pthread_t self = pthread_self();
    __atomic_store(&worker->owner, &self, __ATOMIC_RELEASE);
    __atomic_store_n(&worker->driven, driven, __ATOMIC_RELEASE);
    moat_relay_set_current(driven ? (int)worker->index : -1);
}

void moat_worker_run_pending(moat_worker *worker)
{
    g_assert(!__atomic_load_n(&worker->started, __ATOMIC_ACQUIRE));
    run_tasks(worker);
    if (worker->relay)
        moat_relay_drain(worker->relay, worker->index);
}

uint64_t moat_worker_now_us(const moat_worker *worker)
{
    return worker->now_us;
}

uint64_t moat_worker_arrival_us(const moat_worker *worker)
{
    return worker->arrival_us;
}

bool moat_worker_log_allow(moat_worker *worker, moat_log_level level, uint64_t *suppressed)
{
    moat_log_limiter *limiter =
        level >= MOAT_LOG_DEBUG ? &worker->debug_log_limiter : &worker->log_limiter;
    return moat_log_limiter_allow(limiter, worker->now_us, suppressed);
}

void moat_worker_set_now_us(moat_worker *worker, uint64_t now_us)
{
    worker->now_us = now_us;
    worker->arrival_us = now_us;
}

void moat_worker_post(moat_worker *worker, moat_worker_task_fn task, void *data,
                      void (*release)(void *data))
{
    g_mutex_lock(&worker->task_lock);
    if (!worker->accepting_tasks) {
        g_mutex_unlock(&worker->task_lock);
        if (release)
            release(data);
        return;
    }
    worker_task *entry = g_new(worker_task, 1);
    *entry = (worker_task){task, data, release};
    g_queue_push_tail(&worker->tasks, entry);
    g_mutex_unlock(&worker->task_lock);
    uint64_t one = 1;
    ssize_t written = write(worker->event_fd, &one, sizeof one);
    (void)written; /* a full counter still wakes the worker */
}

static void run_tasks(moat_worker *worker)
{
    uint64_t value;
    ssize_t got = read(worker->event_fd, &value, sizeof value);
    (void)got;
    GQueue pending = G_QUEUE_INIT;
    g_mutex_lock(&worker->task_lock);
    pending = worker->tasks;
    g_queue_init(&worker->tasks);
    g_mutex_unlock(&worker->task_lock);
    worker_task *entry;
    while ((entry = g_queue_pop_head(&pending))) {
        entry->task(worker, entry->data);
        g_free(entry);
    }
}

void moat_worker_set_relay(moat_worker *worker, struct moat_relay *relay)
{
    worker->relay = relay;
}

struct moat_relay *moat_worker_relay(const moat_worker *worker)
{
    return worker->relay;
}

void moat_worker_wake(moat_worker *worker)
{
    uint64_t one = 1;
    ssize_t written = write(worker->event_fd, &one, sizeof one);
    (void)written; /* a full counter still wakes the worker */
}

typedef struct {
    moat_worker_socket_fn on_readable;
    void *data;
} extra_socket;

void moat_worker_add_socket(moat_worker *worker, int fd, moat_worker_socket_fn on_readable,
                            void *data)
{
    if (!worker->plain_by_fd)
        worker->plain_by_fd = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    extra_socket *entry = g_new(extra_socket, 1);
    *entry = (extra_socket){on_readable, data};
    g_hash_table_insert(worker->plain_by_fd, GINT_TO_POINTER(fd), entry);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};
    epoll_ctl(worker->epoll_fd, EPOLL_CTL_ADD, fd, &event);
}

void moat_worker_remove_socket(moat_worker *worker, int fd)
{
    if (worker->plain_by_fd)
        g_hash_table_remove(worker->plain_by_fd, GINT_TO_POINTER(fd));
    epoll_ctl(worker->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}

static void plain_readable(void *data)
{
    moat_session_plain_receive(data);
}

void moat_worker_add_plain(moat_worker *worker, int fd, moat_session *session)
{
    moat_worker_add_socket(worker, fd, plain_readable, session);
}

void moat_worker_remove_plain(moat_worker *worker, int fd)
{
    moat_worker_remove_socket(worker, fd);
}

static void receive_extra(moat_worker *worker, int fd)
{
    extra_socket *entry =
        worker->plain_by_fd ? g_hash_table_lookup(worker->plain_by_fd, GINT_TO_POINTER(fd)) : NULL;
    if (entry)
        entry->on_readable(entry->data);
}

static void *worker_main(void *arg)
{
    moat_worker *worker = arg;
    moat_relay_set_current((int)worker->index);
    /* Before any task runs: a task posted before start already sees its
     * worker as current. */
    pthread_t self = pthread_self();
    __atomic_store(&worker->owner, &self, __ATOMIC_RELEASE);
    char name[16];
    snprintf(name, sizeof name, "moat-worker-%u", worker->index);
    pthread_setname_np(pthread_self(), name);
    struct epoll_event events[4];
    while (worker->running) {
        struct timespec timeout = moat_worker_tick_wait(worker);
        int n = epoll_pwait2(worker->epoll_fd, events, 4, &timeout, NULL);
        worker->now_us = monotonic_us();
        worker->arrival_us = worker->now_us;
        if (worker->polling)
            moat_worker_receive(worker, worker->socket_fd, &worker->receive);
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == worker->socket_fd)
                moat_worker_receive(worker, worker->socket_fd, &worker->receive);
            else if (fd == worker->event_fd)
                run_tasks(worker);
            else
                receive_extra(worker, fd);
        }
        if (worker->now_us >= worker->next_tick_us)
            moat_worker_tick(worker);
        if (worker->relay)
            moat_relay_drain(worker->relay, worker->index);
        moat_worker_flush(worker);
        __atomic_store_n(&worker->heartbeat_us, worker->now_us, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void end_sessions_task(moat_worker *worker, void *data)
{
    GList *sessions = g_hash_table_get_values(worker->sessions_by_id);
    for (GList *it = sessions; it; it = it->next) {
        if (!moat_session_draining(it->data)) /* a drain under way ends itself */
            moat_session_end(it->data, "shutdown");
    }
    g_list_free(sessions);
}

void moat_worker_end_sessions(moat_worker *worker)
{
    moat_worker_post(worker, end_sessions_task, NULL, NULL);
}

static void stop_task(moat_worker *worker, void *data)
{
    worker->running = false;
}

int moat_worker_start(moat_worker *worker, char *error, size_t error_size)
{
    int fds[] = {worker->socket_fd, worker->event_fd};
    for (int i = 0; i < 2; i++) {
        struct epoll_event event = {.events = EPOLLIN, .data.fd = fds[i]};
        if (epoll_ctl(worker->epoll_fd, EPOLL_CTL_ADD, fds[i], &event) < 0) {
            snprintf(error, error_size, "epoll_ctl: %s", strerror(errno));
            return -1;
        }
    }
    worker->running = true;
    worker->now_us = monotonic_us();
    moat_worker_tick_start(worker);
    worker->arrival_us = worker->now_us;
    __atomic_store_n(&worker->heartbeat_us, worker->now_us, __ATOMIC_RELAXED);
    /* Set before the thread exists, so the thread never sees it change. */
    __atomic_store_n(&worker->started, true, __ATOMIC_RELEASE);
    if (pthread_create(&worker->thread, NULL, worker_main, worker) != 0) {
        __atomic_store_n(&worker->started, false, __ATOMIC_RELEASE);
        snprintf(error, error_size, "cannot start worker thread");
        return -1;
    }
    return 0;
}

/* Sessions end on the joining thread, now that the worker is gone. No tick
 * runs any more to finish a drain (the gateway's wait for them is over):
 * a session still draining, or that begins to, is cut (SCTP ABORT to its
 * peer, moat_session_cut_drain) instead of being freed unannounced. */
static void end_sessions_now(moat_worker *worker)
{
    GList *sessions = g_hash_table_get_values(worker->sessions_by_id);
    for (GList *it = sessions; it; it = it->next) {
        if (!moat_session_draining(it->data))
            moat_session_end(it->data, "shutdown");
    }
    g_list_free(sessions);
    sessions = g_hash_table_get_values(worker->sessions_by_id);
    for (GList *it = sessions; it; it = it->next)
        moat_session_cut_drain(it->data);
    g_list_free(sessions);
}

void moat_worker_stop(moat_worker *worker)
{
    bool started = __atomic_load_n(&worker->started, __ATOMIC_ACQUIRE);
    if (!started && !__atomic_load_n(&worker->driven, __ATOMIC_ACQUIRE))
        return;
    if (started) {
        moat_worker_post(worker, stop_task, NULL, NULL);
        pthread_join(worker->thread, NULL);
    }
    g_mutex_lock(&worker->task_lock);
    worker->accepting_tasks = false;
    g_mutex_unlock(&worker->task_lock);
    run_tasks(worker); /* tasks that raced with the stop still release their data */
    end_sessions_now(worker);
    moat_worker_flush(worker); /* close_notify and ABORTs */
    __atomic_store_n(&worker->started, false, __ATOMIC_RELEASE);
    __atomic_store_n(&worker->driven, false, __ATOMIC_RELEASE);
}

void moat_worker_set_local(moat_worker *worker, void *data, void (*free_fn)(void *data))
{
    if (worker->local && worker->local_free)
        worker->local_free(worker->local);
    worker->local = data;
    worker->local_free = free_fn;
}

void *moat_worker_local(const moat_worker *worker)
{
    return worker->local;
}

void moat_worker_free(moat_worker *worker)
{
    if (!worker)
        return;
    moat_worker_stop(worker);
    moat_worker_set_local(worker, NULL, NULL);
    g_hash_table_destroy(worker->sessions_by_tuple);
    g_hash_table_destroy(worker->sessions_by_route);
    g_hash_table_destroy(worker->route_tuples);
    g_hash_table_destroy(worker->sessions_by_ufrag);
    g_hash_table_destroy(worker->sessions_by_id);
    if (worker->plain_by_fd)
        g_hash_table_destroy(worker->plain_by_fd);
    moat_ice_checker_free(worker->ice_checker);
    moat_receive_batch_clear(&worker->receive);
    moat_kernel_filter_free(worker->kernel);
    if (worker->event_fd >= 0)
        close(worker->event_fd);
    if (worker->epoll_fd >= 0)
        close(worker->epoll_fd);
    moat_worker_set_own_sockets(worker, NULL); /* its port unmarked before the close */
    close(worker->socket_fd);
    /* A worker that never ran still owes its tasks' data a release. */
    worker_task *entry;
    while ((entry = g_queue_pop_head(&worker->tasks))) {
        if (entry->release)
            entry->release(entry->data);
        g_free(entry);
    }
    g_mutex_clear(&worker->task_lock);
    g_free(worker);
}

uint64_t moat_worker_heartbeat_age_us(const moat_worker *worker)
{
    if (!__atomic_load_n(&worker->started, __ATOMIC_ACQUIRE))
        return UINT64_MAX;
    uint64_t beat = __atomic_load_n(&worker->heartbeat_us, __ATOMIC_RELAXED);
    uint64_t now = monotonic_us();
    return now > beat ? now - beat : 0;
}
