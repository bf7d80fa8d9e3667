/* The association's send and receive buffers: sized to the bandwidth-delay
 * product as the association learns it, and never beyond half of the
 * session's data-channel memory each.
 *
 * Both start at MOAT_SCTP_SOCKET_BUFFER_SIZE and only grow while the
 * association is up, the way TCP's autotuning does:
 * - send: twice the congestion window, so a window's worth waits behind what
 *   is in flight (the window is SCTP's estimate of the path's BDP);
 * - receive: four times what was delivered in the last round trip, so the
 *   advertised window keeps ahead of a sender that doubles its window per
 *   round trip in slow start.
 * A buffer is a bound, not an allocation: usrsctp holds what is queued or
 * unread, so the limit is what a sender far ahead of its peer, or a peer
 * leaving gaps in what it sends, can make one association hold. */
#include <errno.h>
#include <glib.h>

#include "sctp/sctp_association_private.h"
#include "sctp/sctp_socket.h"
#include "sctp/sctp_tuning.h"

/* Shortest interval between two tuning passes (on loopback the round trip
 * rounds to 0 ms). */
#define TUNE_MIN_INTERVAL_US 10000
/* How much the advertised window should exceed one round trip's delivery. */
#define RECEIVE_HEADROOM 4
/* How much the send buffer should exceed the congestion window. */
#define SEND_HEADROOM 2

static size_t direction_cap(size_t limit)
{
    size_t cap = limit / 2;
    return cap < MOAT_SCTP_MIN_WINDOW ? MOAT_SCTP_MIN_WINDOW : cap;
}

static size_t clamp_size(size_t value, size_t low, size_t high)
{
    return value < low ? low : value > high ? high : value;
}

/* The largest message we send must fit the send buffer whole. */
static void update_max_send_size(moat_sctp_association *a)
{
    size_t cap = direction_cap(a->window.limit);
    size_t ours = cap < MOAT_SCTP_SOCKET_BUFFER_SIZE ? cap : MOAT_SCTP_SOCKET_BUFFER_SIZE;
    size_t peer = a->peer_max_message_size;
    a->max_send_size = peer != 0 && peer < ours ? peer : ours;
}

static int apply(moat_sctp_association *a, size_t send, size_t receive)
{
    int rc = moat_sctp_socket_set_buffers(a->sock, send, receive);
    if (rc == 0) {
        a->window.send = send;
        a->window.receive = receive;
    }
    return rc;
}

int moat_sctp_window_init(moat_sctp_association *a)
{
    a->window.limit = MOAT_SCTP_SESSION_BYTES_DEFAULT;
    update_max_send_size(a);
    size_t start = clamp_size(MOAT_SCTP_SOCKET_BUFFER_SIZE, 0, direction_cap(a->window.limit));
    return apply(a, start, start);
}

void moat_sctp_window_set_limit(moat_sctp_association *a, size_t limit)
{
    a->window.limit = limit;
    update_max_send_size(a);
    size_t cap = direction_cap(limit);
    size_t send = a->window.send > cap ? cap : a->window.send;
    size_t receive = a->window.receive > cap ? cap : a->window.receive;
    /* A larger limit is grown into by tuning, as the path asks for it. */
    if (send != a->window.send || receive != a->window.receive)
        (void)apply(a, send, receive);
}

void moat_sctp_window_tune(moat_sctp_association *a)
{
    if (!a->up || a->shutdown_requested)
        return;
    int64_t now = g_get_monotonic_time();
    moat_sctp_window *w = &a->window;
    if (now - w->last_tune_us < TUNE_MIN_INTERVAL_US)
        return;
    uint32_t srtt_ms, cwnd;
    if (moat_sctp_socket_path_status(a->sock, &srtt_ms, &cwnd) != 0)
        return;
    w->last_tune_us = now;
    size_t cap = direction_cap(w->limit);
    size_t send = clamp_size((size_t)cwnd * SEND_HEADROOM, w->send, cap);
    size_t receive = w->receive;
    int64_t sample_us = (int64_t)srtt_ms * 1000;
    if (sample_us < TUNE_MIN_INTERVAL_US)
        sample_us = TUNE_MIN_INTERVAL_US;
    if (w->receive_mark_us == 0 || now - w->receive_mark_us >= sample_us) {
        if (w->receive_mark_us != 0) {
            uint64_t delivered = a->counters.bytes_received - w->receive_mark_bytes;
            /* Per round trip, whatever the sample's length was. */
            uint64_t per_rtt =
                delivered * (uint64_t)sample_us / (uint64_t)(now - w->receive_mark_us);
            receive = clamp_size((size_t)(per_rtt * RECEIVE_HEADROOM), w->receive, cap);
        }
        w->receive_mark_us = now;
        w->receive_mark_bytes = a->counters.bytes_received;
    }
    if (send != w->send || receive != w->receive)
        (void)apply(a, send, receive);
}
