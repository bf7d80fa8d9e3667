/* The association's send and receive buffers, within half of the session's
 * data-channel memory each, and what they cost the owner's memory budget.
 *
 * Without a budget (moat_sctp_association_set_memory_budget):
 * - Receive: the whole half from the start. The window advertised in INIT is
 *   also the peer's initial ssthresh (RFC 9260 §7.2.1), so a smaller start
 *   ends the peer's slow start there: with 1 MiB at 71 ms the congestion
 *   window stalled at 1 MiB and then grew by one packet per round trip. The
 *   buffer is a bound, not an allocation: usrsctp holds only what arrived
 *   out of order or unread (it drops new TSNs once the window is spent), so
 *   the limit is what a peer leaving gaps can make the association hold.
 * - Send: starts at MOAT_SCTP_SOCKET_BUFFER_SIZE and grows to twice the
 *   congestion window (SCTP's estimate of the bandwidth-delay product), so a
 *   window's worth waits behind what is in flight, as TCP's autotuning does.
 *
 * With a budget, the first MOAT_SCTP_SOCKET_BUFFER_SIZE of each buffer (the
 * "base") is the owner's, charged before; every byte above it is taken from
 * the budget before a buffer grows and given back when it shrinks or the
 * association ends. Then:
 * - INIT still advertises the whole receive half when the budget can lend it
 *   for the handshake; once the association is up the receive buffer drops
 *   to the base (giving the loan back) and the peer's ssthresh stays high.
 * - Receive grows like TCP's receive autotuning: when the peer sent more
 *   than half the window in one round trip, the window doubles.
 * - Send grows to twice the congestion window, as without a budget.
 * - Both fall back to the base after a second without traffic (noticed by
 *   the owner's periodic moat_sctp_association_tick, or the next event).
 * A refused growth leaves the buffer as it is and is retried on the next
 * pass. */
#include <errno.h>
#include <glib.h>

#include "sctp/sctp_association_private.h"
#include "sctp/sctp_socket.h"
#include "sctp/sctp_tuning.h"

/* Shortest interval between two tuning passes. */
#define TUNE_INTERVAL_US 10000
/* How much the send buffer should exceed the congestion window. */
#define SEND_HEADROOM 2
/* Round trip assumed by receive tuning before SCTP measured one. */
#define DEFAULT_RTT_US 100000
/* Shortest interval receive tuning measures the peer's rate over. */
#define MIN_RATE_INTERVAL_US 20000
/* After this long without data, budgeted buffers fall back to the base. */
#define IDLE_US 1000000
/* How often an idle association with growth to give back looks at itself
 * (moat_sctp_association_tick). */
#define IDLE_CHECK_INTERVAL_US 100000

/* Half the session's memory, at most MOAT_SCTP_MAX_WINDOW, at least
 * MOAT_SCTP_MIN_WINDOW. */
static size_t direction_cap(size_t limit)
{
    size_t cap = limit / 2;
    if (cap > MOAT_SCTP_MAX_WINDOW)
        cap = MOAT_SCTP_MAX_WINDOW;
    return cap < MOAT_SCTP_MIN_WINDOW ? MOAT_SCTP_MIN_WINDOW : cap;
}

static size_t clamp_size(size_t value, size_t low, size_t high)
{
    return value < low ? low : value > high ? high : value;
}

/* What a budgeted buffer of this size costs beyond the base. */
static size_t extra(size_t size)
{
    return size > MOAT_SCTP_SOCKET_BUFFER_SIZE ? size - MOAT_SCTP_SOCKET_BUFFER_SIZE : 0;
}

static size_t base_size(const moat_sctp_window *w)
{
    size_t cap = direction_cap(w->limit);
    return cap < MOAT_SCTP_SOCKET_BUFFER_SIZE ? cap : MOAT_SCTP_SOCKET_BUFFER_SIZE;
}

/* The largest message we send must fit the send buffer whole. */
static void update_max_send_size(moat_sctp_association *a)
{
    size_t ours = base_size(&a->window);
    size_t peer = a->peer_max_message_size;
    a->max_send_size = peer != 0 && peer < ours ? peer : ours;
}

/* Settles the budget for the new sizes (taking first, giving back only once
 * the buffers shrank) and applies them. -ENOMEM when the budget refuses. */
static int apply(moat_sctp_association *a, size_t send, size_t receive)
{
    moat_sctp_window *w = &a->window;
    bool budgeted = w->budget.take != NULL;
    size_t charge = budgeted ? extra(send) + extra(receive) : 0;
    if (charge > w->charged && !w->budget.take(w->budget.user, charge - w->charged))
        return -ENOMEM;
    size_t taken = charge > w->charged ? charge : w->charged;
    w->charged = taken;
    int rc = moat_sctp_socket_set_buffers(a->sock, send, receive);
    if (rc == 0) {
        w->send = send;
        w->receive = receive;
    }
    /* What the buffers now are is what stays charged. */
    size_t kept = budgeted ? extra(w->send) + extra(w->receive) : 0;
    if (kept < taken)
        w->budget.give(w->budget.user, taken - kept);
    w->charged = kept;
    return rc;
}

int moat_sctp_window_init(moat_sctp_association *a)
{
    a->window.limit = MOAT_SCTP_SESSION_BYTES_DEFAULT;
    update_max_send_size(a);
    size_t cap = direction_cap(a->window.limit);
    return apply(a, clamp_size(MOAT_SCTP_SOCKET_BUFFER_SIZE, 0, cap), cap);
}

/* A budgeted association's buffers before connect: the base to send, and
 * for INIT the receive half if the budget lends it, else the base. */
static void start_budgeted(moat_sctp_association *a)
{
    size_t base = base_size(&a->window);
    if (apply(a, base, direction_cap(a->window.limit)) != 0)
        (void)apply(a, base, base);
}

void moat_sctp_window_set_limit(moat_sctp_association *a, size_t limit)
{
    moat_sctp_window *w = &a->window;
    w->limit = limit;
    update_max_send_size(a);
    size_t cap = direction_cap(limit);
    if (w->budget.take != NULL && !a->up) {
        start_budgeted(a);
        return;
    }
    /* Without a budget the receive buffer is the whole half; with one it
     * only shrinks here. A larger send limit is grown into by tuning. */
    size_t receive = w->budget.take != NULL && w->receive < cap ? w->receive : cap;
    size_t send = w->send > cap ? cap : w->send;
    if (send != w->send || receive != w->receive)
        (void)apply(a, send, receive);
}

void moat_sctp_window_set_budget(moat_sctp_association *a, const moat_sctp_memory_budget *budget)
{
    moat_sctp_window *w = &a->window;
    if (w->budget.take != NULL || budget == NULL || budget->take == NULL || budget->give == NULL)
        return;
    w->budget = *budget;
    w->charged = 0;
    if (!a->up) {
        start_budgeted(a);
        return;
    }
    size_t base = base_size(w);
    (void)apply(a, MIN(w->send, base), MIN(w->receive, base));
}

void moat_sctp_window_up(moat_sctp_association *a)
{
    moat_sctp_window *w = &a->window;
    w->rx_mark_us = g_get_monotonic_time();
    w->rx_mark_bytes = a->counters.bytes_received;
    w->last_traffic_us = w->rx_mark_us;
    if (w->budget.take == NULL)
        return;
    size_t base = base_size(w);
    if (w->receive > base)
        (void)apply(a, w->send, base);
}

void moat_sctp_window_release(moat_sctp_association *a)
{
    moat_sctp_window *w = &a->window;
    if (w->budget.give != NULL && w->charged > 0)
        w->budget.give(w->budget.user, w->charged);
    w->charged = 0;
}

/* A budgeted receive window doubles when the peer sent more than half of it
 * within one round trip (it is, or is about to be, limited by it). */
static size_t receive_target(moat_sctp_association *a, int64_t now, uint32_t srtt_ms)
{
    moat_sctp_window *w = &a->window;
    int64_t rtt_us = srtt_ms > 0 ? (int64_t)srtt_ms * 1000 : DEFAULT_RTT_US;
    int64_t elapsed = now - w->rx_mark_us;
    if (elapsed < rtt_us || elapsed < MIN_RATE_INTERVAL_US)
        return w->receive;
    uint64_t arrived = a->counters.bytes_received - w->rx_mark_bytes;
    w->rx_mark_us = now;
    w->rx_mark_bytes = a->counters.bytes_received;
    double per_rtt = (double)arrived * (double)rtt_us / (double)elapsed;
    if (per_rtt * 2 <= (double)w->receive)
        return w->receive;
    return clamp_size(w->receive * 2, w->receive, direction_cap(w->limit));
}

/* Idle budgeted buffers give their growth back. */
static void shrink_when_idle(moat_sctp_association *a, int64_t now)
{
    moat_sctp_window *w = &a->window;
    if (a->counters.bytes_received != w->idle_mark_bytes ||
        a->counters.bytes_sent != w->idle_mark_sent ||
        moat_sctp_socket_buffered_amount(a->sock) != 0) {
        w->idle_mark_bytes = a->counters.bytes_received;
        w->idle_mark_sent = a->counters.bytes_sent;
        w->last_traffic_us = now;
        return;
    }
    size_t base = base_size(w);
    if (now - w->last_traffic_us >= IDLE_US && (w->send > base || w->receive > base))
        (void)apply(a, MIN(w->send, base), MIN(w->receive, base));
}

/* Grows towards the target, or as far towards it as the budget allows. */
static void grow(moat_sctp_association *a, size_t send, size_t receive)
{
    moat_sctp_window *w = &a->window;
    while ((send != w->send || receive != w->receive) && apply(a, send, receive) == -ENOMEM) {
        send = w->send + (send - w->send) / 2;
        receive = w->receive + (receive - w->receive) / 2;
        if (send - w->send < MOAT_SCTP_MIN_WINDOW && receive - w->receive < MOAT_SCTP_MIN_WINDOW)
            return;
    }
}

void moat_sctp_window_idle(moat_sctp_association *a)
{
    moat_sctp_window *w = &a->window;
    if (w->charged == 0 || !a->up || a->shutdown_requested)
        return;
    int64_t now = g_get_monotonic_time();
    if (now - w->last_idle_check_us < IDLE_CHECK_INTERVAL_US)
        return;
    w->last_idle_check_us = now;
    shrink_when_idle(a, now);
}

void moat_sctp_window_tune(moat_sctp_association *a)
{
    if (!a->up || a->shutdown_requested)
        return;
    int64_t now = g_get_monotonic_time();
    moat_sctp_window *w = &a->window;
    if (now - w->last_tune_us < TUNE_INTERVAL_US)
        return;
    w->last_tune_us = now;
    uint32_t srtt_ms, cwnd;
    if (moat_sctp_socket_path_status(a->sock, &srtt_ms, &cwnd) != 0)
        return;
    size_t send = clamp_size((size_t)cwnd * SEND_HEADROOM, w->send, direction_cap(w->limit));
    size_t receive = w->budget.take != NULL ? receive_target(a, now, srtt_ms) : w->receive;
    grow(a, send, receive);
    if (w->budget.take != NULL)
        shrink_when_idle(a, now);
}
