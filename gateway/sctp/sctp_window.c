/* The association's send and receive buffers, within half of the session's
 * data-channel memory each.
 *
 * Receive: the whole half from the start. The window advertised in INIT is
 * also the peer's initial ssthresh (RFC 9260 §7.2.1), so a smaller start
 * ends the peer's slow start there: with 1 MiB at 71 ms the congestion
 * window stalled at 1 MiB and then grew by one packet per round trip. The
 * buffer is a bound, not an allocation: usrsctp holds only what arrived out
 * of order or unread, so the limit is what a peer leaving gaps in what it
 * sends can make the association hold.
 *
 * Send: starts at MOAT_SCTP_SOCKET_BUFFER_SIZE and grows to twice the
 * congestion window (SCTP's estimate of the bandwidth-delay product), so a
 * window's worth waits behind what is in flight, as TCP's autotuning does. */
#include <errno.h>
#include <glib.h>

#include "sctp/sctp_association_private.h"
#include "sctp/sctp_socket.h"
#include "sctp/sctp_tuning.h"

/* Shortest interval between two tuning passes. */
#define TUNE_INTERVAL_US 10000
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
    size_t cap = direction_cap(a->window.limit);
    return apply(a, clamp_size(MOAT_SCTP_SOCKET_BUFFER_SIZE, 0, cap), cap);
}

void moat_sctp_window_set_limit(moat_sctp_association *a, size_t limit)
{
    a->window.limit = limit;
    update_max_send_size(a);
    size_t cap = direction_cap(limit);
    /* A larger send limit is grown into by tuning, as the path asks. */
    size_t send = a->window.send > cap ? cap : a->window.send;
    if (send != a->window.send || cap != a->window.receive)
        (void)apply(a, send, cap);
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
    if (send != w->send)
        (void)apply(a, send, w->receive);
}
