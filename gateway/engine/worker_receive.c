/* The receive path of a worker socket: recvmmsg batches, first-octet demux
 * (RFC 7983) and dispatch to the session that owns the 5-tuple or ufrag. */
#include "engine/worker_receive.h"

#include "engine/session_port.h"
#include "engine/worker_private.h"
#include "ice/ice_checker.h"
#include "ice/stun_classify.h"
#include "ice/stun_username.h"

#include <errno.h>
#include <glib.h>
#include <string.h>
#include <time.h>

/* Under a flood the socket never runs dry; yield to timers and tasks after
 * this many batches. */
#define MAX_BATCHES_PER_WAKE 16

void moat_receive_batch_init(moat_receive_batch *batch)
{
    batch->buffers = g_malloc((size_t)MOAT_WORKER_BATCH * MOAT_DATAGRAM_CAPACITY);
    for (unsigned i = 0; i < MOAT_WORKER_BATCH; i++) {
        batch->vectors[i].iov_base = batch->buffers + (size_t)i * MOAT_DATAGRAM_CAPACITY;
        /* Keep headroom so a session can grow a packet in place. */
        batch->vectors[i].iov_len = MOAT_DATAGRAM_CAPACITY - 64;
        batch->headers[i].msg_hdr.msg_iov = &batch->vectors[i];
        batch->headers[i].msg_hdr.msg_iovlen = 1;
        batch->headers[i].msg_hdr.msg_name = &batch->addresses[i];
        batch->headers[i].msg_hdr.msg_control = batch->controls[i].bytes;
    }
}

void moat_receive_batch_clear(moat_receive_batch *batch)
{
    g_free(batch->buffers);
    batch->buffers = NULL;
}

/* Junk dropped here (malformed, unknown tuple, STUN that names no session)
 * cost almost nothing: it is counted, but it feeds no detector. */
static void drop(moat_worker *worker, moat_drop_reason reason)
{
    moat_counter_add(&moat_worker_counters_mut(worker)->dropped[reason], 1);
}

static void dispatch_stun(moat_worker *worker, const moat_path *path, uint8_t *data, size_t length)
{
    moat_stun_kind kind = moat_stun_classify(data, length);
    if (kind == MOAT_STUN_BINDING_INDICATION || kind == MOAT_STUN_BINDING_RESPONSE) {
        /* Keepalive indications and stray responses need no answer. */
        return;
    }
    if (kind != MOAT_STUN_BINDING_REQUEST) {
        drop(worker, MOAT_DROP_MALFORMED);
        return;
    }
    /* A check from one of Moat's own sockets (a call leg steered here)
     * never makes its tuple a session's: the only way a tuple is learnt. */
    if (moat_own_sockets_is_source(worker->own, &path->remote)) {
        drop(worker, MOAT_DROP_LOOP);
        return;
    }
    char ufrag[257];
    if (moat_stun_local_ufrag(data, length, ufrag, sizeof ufrag) != 0) {
        drop(worker, MOAT_DROP_MALFORMED);
        return;
    }
    moat_session *session = moat_worker_session_by_ufrag(worker, ufrag);
    if (!session) {
        drop(worker, MOAT_DROP_STUN_AUTH);
        return;
    }
    moat_counter_add(&moat_worker_counters_mut(worker)->stun_requests, 1);
    moat_session_handle_stun(session, path, data, length);
}

/* On a tuple several sessions share: the one owning the packet's SSRC (RTP:
 * the header's; RTCP, payload types 192..223: the first packet's sender). */
static moat_session *by_route(moat_worker *worker, const moat_path *path, const uint8_t *data,
                              size_t length)
{
    if (length < 12)
        return NULL;
    size_t at = data[1] >= 192 && data[1] <= 223 ? 4 : 8;
    uint32_t ssrc = (uint32_t)data[at] << 24 | (uint32_t)data[at + 1] << 16 |
                    (uint32_t)data[at + 2] << 8 | data[at + 3];
    return moat_worker_session_by_route(worker, &path->remote, ssrc);
}

void moat_worker_dispatch(moat_worker *worker, const moat_path *path, uint8_t *data, size_t length)
{
    moat_packet_class class = moat_packet_classify(data, length);
    if (class == MOAT_PACKET_STUN) {
        dispatch_stun(worker, path, data, length);
        return;
    }
    if (class == MOAT_PACKET_UNKNOWN) {
        drop(worker, MOAT_DROP_MALFORMED);
        return;
    }
    moat_session *session = NULL;
    if (class == MOAT_PACKET_SRTP && moat_worker_is_route_tuple(worker, &path->remote)) {
        /* A cascade link's tuple, routed by SSRC first (a session that took
         * the tuple before the link opened gave it up to the link's first
         * leg, session_cascade.c, and gets none of its packets); an
         * SSRC none of its legs owns is dropped here, for a lookup (a
         * forgery from a spoofed node address, mostly). */
        session = by_route(worker, path, data, length);
        if (!session && !moat_worker_session_by_tuple(worker, &path->remote)) {
            drop(worker, MOAT_DROP_UNKNOWN_SSRC);
            return;
        }
    }
    if (!session)
        session = moat_worker_session_by_tuple(worker, &path->remote);
    if (!session) {
        drop(worker, MOAT_DROP_UNKNOWN_TUPLE);
        return;
    }
    /* The worker detector's rate counts only what reaches a transport whose
     * own detector is off (a flood at one transport is that transport's to
     * enforce against; decided before handling, which may end the session),
     * and not a session's own data channels: DTLS application data that
     * decrypted is its peer's (a legitimate bulk transfer used to switch the
     * detector on); handshakes and records that fail to decrypt count. */
    bool counts = !moat_session_own_enforcing(session);
    if (class == MOAT_PACKET_DTLS) {
        if (!moat_session_handle_dtls(session, path, data, length) && counts)
            moat_worker_note_datagram(worker);
        return;
    }
    if (counts)
        moat_worker_note_datagram(worker);
    moat_session_handle_srtp(session, path, data, length, MOAT_DATAGRAM_CAPACITY);
}

static int64_t clock_us(clockid_t clock)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

/* The kernel's receive time of a datagram on the worker's clock, given
 * `offset` (CLOCK_REALTIME minus CLOCK_MONOTONIC); the wake time when the
 * datagram carries none or a time after it. */
static uint64_t arrival_of(const moat_worker *worker, const struct msghdr *message, int64_t offset)
{
    uint64_t realtime;
    if (!moat_packet_info_get_arrival(message, &realtime))
        return worker->now_us;
    int64_t arrival = (int64_t)realtime - offset;
    if (arrival <= 0 || (uint64_t)arrival > worker->now_us)
        return worker->now_us;
    return (uint64_t)arrival;
}

/* What the kernel dropped at the media socket since the last tick (its
 * queue full while the worker fell behind, or the kernel prefilter):
 * SO_MEMINFO's running count, read once a tick. */
void moat_worker_note_socket_drops(moat_worker *worker, const moat_socket_load *socket)
{
    if (!socket->valid || socket->drops == worker->socket_drops_seen)
        return;
    moat_counter_add(&moat_worker_counters_mut(worker)->socket_drops,
                     (uint32_t)(socket->drops - worker->socket_drops_seen));
    worker->socket_drops_seen = (uint32_t)socket->drops;
}

void moat_worker_receive(moat_worker *worker, int socket_fd, moat_receive_batch *batch)
{
    moat_counters *counters = moat_worker_counters_mut(worker);
    unsigned total = 0;
    for (int round = 0; round < MAX_BATCHES_PER_WAKE; round++) {
        for (unsigned i = 0; i < MOAT_WORKER_BATCH; i++) {
            batch->headers[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in6);
            batch->headers[i].msg_hdr.msg_controllen = sizeof batch->controls[i];
        }
        int n = recvmmsg(socket_fd, batch->headers, MOAT_WORKER_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0) {
            moat_worker_note_wake(worker, total, true);
            return;
        }
        total += (unsigned)n;
        moat_counter_add(&counters->datagrams_received, (uint64_t)n);
        int64_t offset = clock_us(CLOCK_REALTIME) - clock_us(CLOCK_MONOTONIC);
        for (int i = 0; i < n; i++) {
            size_t length = batch->headers[i].msg_len;
            moat_counter_add(&counters->bytes_received, length);
            if (batch->addresses[i].sin6_family != AF_INET6) {
                drop(worker, MOAT_DROP_MALFORMED);
                continue;
            }
            if (batch->headers[i].msg_hdr.msg_flags & MSG_TRUNC) {
                /* Longer than the buffer: what we have is not the datagram. */
                drop(worker, MOAT_DROP_TRUNCATED);
                continue;
            }
            moat_path path = {.remote = batch->addresses[i]};
            moat_packet_info_get_destination(&batch->headers[i].msg_hdr, &path.local);
            worker->arrival_us = arrival_of(worker, &batch->headers[i].msg_hdr, offset);
            moat_worker_dispatch(worker, &path, batch->vectors[i].iov_base, length);
        }
        worker->arrival_us = worker->now_us;
        moat_worker_flush(worker);
        if (n < MOAT_WORKER_BATCH) {
            moat_worker_note_wake(worker, total, true);
            return;
        }
    }
    moat_worker_note_wake(worker, total, false);
}
