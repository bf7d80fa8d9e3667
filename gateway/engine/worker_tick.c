/* A worker's session tick: when it runs (on the loop's wake-ups, with
 * slack so that media and timers share one), and what it does (usrsctp's
 * clock, the socket's load and detector, every session's timers, the
 * kernel filter's maps, heap trimming). Worker thread only. */
#include "engine/worker_private.h"

#include "engine/session_port.h"
#include "prefilter/kernel_filter.h"
#include "prefilter/load_monitor.h"
#include "sctp/sctp_stack.h"

#include <glib.h>
#include <sys/epoll.h>
#include <time.h>

static void set_polling(moat_worker *worker, bool polling)
{
    if (polling == worker->polling)
        return;
    struct epoll_event event = {.events = polling ? 0 : EPOLLIN, .data.fd = worker->socket_fd};
    if (epoll_ctl(worker->epoll_fd, EPOLL_CTL_MOD, worker->socket_fd, &event) == 0)
        worker->polling = polling;
}

/* After a burst of handshakes (or of sessions ending) has passed: the
 * pages their short-lived allocations freed go back to the kernel. */
static void trim_heap(moat_worker *worker)
{
    uint64_t events = moat_counter_read(&worker->counters.dtls_handshakes_completed) +
                      moat_counter_read(&worker->counters.dtls_handshakes_failed) +
                      moat_counter_read(&worker->counters.dtls_retired) + worker->sessions_removed;
    if (!moat_heap_trim_due(&worker->heap_trim, events, worker->now_us))
        return;
    uint64_t ns = moat_heap_trim_run();
    moat_counter_add(&worker->counters.heap_trims, 1);
    moat_counter_add(&worker->counters.heap_trim_ns, ns);
}

/* The session tick runs once it is due and the loop is awake anyway: the
 * loop sleeps at most TICK_SLACK_US past the due time, so a worker that
 * receives media every few milliseconds is not woken a second time for its
 * timers (a wake-up costs more than the tick of a few sessions). Ticks come
 * MOAT_WORKER_TICK_MS to MOAT_WORKER_TICK_MS + TICK_SLACK_US apart. */
#define TICK_SLACK_US (MOAT_WORKER_TICK_MS * 1000u / 2)

/* What usrsctp's clock has not been given yet, in whole milliseconds. */
static uint32_t sctp_clock_advance(moat_worker *worker)
{
    uint64_t ms = (worker->now_us - worker->sctp_clock_us) / 1000u;
    worker->sctp_clock_us += ms * 1000u;
    return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

void moat_worker_tick(moat_worker *worker)
{
    uint64_t elapsed_us = worker->now_us - worker->last_tick_us;
    worker->last_tick_us = worker->now_us;
    worker->next_tick_us = worker->now_us + MOAT_WORKER_TICK_MS * 1000u;
    worker->ticks++;
    /* usrsctp's clock: the first worker to call drives it, every worker gets
     * its own associations' pending work delivered on its own thread. */
    moat_sctp_stack_handle_timers(sctp_clock_advance(worker));
    moat_socket_load socket = moat_socket_load_read(worker->socket_fd);
    moat_worker_note_socket_drops(worker, &socket);
    if (worker->prefilter) {
        moat_worker_report_detector(worker, moat_detector_tick(&worker->detector, worker->now_us));
        if (moat_load_monitor_tick(&worker->load, &socket, elapsed_us))
            moat_counter_add(&worker->counters.overloaded_ticks, 1);
        set_polling(worker, moat_load_monitor_polling(&worker->load));
    }
    GList *sessions = g_hash_table_get_values(worker->sessions_by_id);
    for (GList *it = sessions; it; it = it->next) {
        moat_session *session = it->data;
        if (!moat_session_tick(session, worker->now_us))
            moat_session_end(session, moat_session_end_reason(session));
        else if (worker->kernel)
            moat_session_kernel_sync(session, worker->kernel);
    }
    g_list_free(sessions);
    if (worker->kernel)
        moat_worker_kernel_sync(worker, worker->kernel);
    trim_heap(worker);
}

/* How long the loop may sleep: until the tick's slack runs out, or one
 * polling slice while the socket is polled. */
struct timespec moat_worker_tick_wait(const moat_worker *worker)
{
    uint64_t deadline = worker->next_tick_us + TICK_SLACK_US;
    uint64_t wait_us = deadline > worker->now_us ? deadline - worker->now_us : 0;
    if (worker->polling) {
        uint64_t slice = moat_load_monitor_slice_us(&worker->load);
        if (slice < wait_us)
            wait_us = slice;
    }
    return (struct timespec){(time_t)(wait_us / 1000000u), (long)(wait_us % 1000000u) * 1000L};
}

void moat_worker_tick_start(moat_worker *worker)
{
    worker->last_tick_us = worker->now_us;
    worker->sctp_clock_us = worker->now_us;
    worker->next_tick_us = worker->now_us + MOAT_WORKER_TICK_MS * 1000u;
}

uint64_t moat_worker_ticks(const moat_worker *worker)
{
    return worker->ticks;
}
