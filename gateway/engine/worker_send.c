/* A worker's send batch: the slots sessions fill (zero-copy), and the
 * sendmmsg that empties them, with the sent counters and the send drops.
 * Runs of equal datagrams to one destination (a data channel's DTLS records)
 * leave as single UDP GSO messages. */
#include "engine/worker_private.h"

#include "engine/packet_info.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

_Static_assert(MOAT_WORKER_BATCH <= MOAT_UDP_GSO_MAX_BATCH, "a plan covers the whole batch");

/* How long one flush waits for a full socket send buffer to drain before the
 * rest of the batch is dropped (the worker reads nothing meanwhile). */
#define SEND_WAIT_MS 2

void moat_worker_send_batch_init(moat_worker *worker)
{
    for (unsigned i = 0; i < MOAT_WORKER_BATCH; i++) {
        worker->send_vectors[i].iov_base = worker->send_buffers[i];
        worker->send_headers[i].msg_hdr.msg_iov = &worker->send_vectors[i];
        worker->send_headers[i].msg_hdr.msg_iovlen = 1;
        worker->send_headers[i].msg_hdr.msg_name = &worker->send_addresses[i];
        worker->send_headers[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in6);
    }
    worker->send_gso = moat_udp_gso_supported(worker->socket_fd);
}

/* Slots [from, to) left the socket. */
static void count_sent(moat_worker *worker, unsigned from, unsigned to)
{
    uint64_t rtp = 0, rtcp = 0, bytes = 0;
    for (unsigned i = from; i < to; i++) {
        rtp += worker->send_kinds[i] == MOAT_SEND_RTP;
        rtcp += worker->send_kinds[i] == MOAT_SEND_RTCP;
        bytes += worker->send_vectors[i].iov_len;
    }
    moat_counter_add(&worker->counters.rtp_sent, rtp);
    moat_counter_add(&worker->counters.rtcp_sent, rtcp);
    moat_counter_add(&worker->counters.bytes_sent, bytes);
}

/* True once the socket can take more within SEND_WAIT_MS. */
static bool wait_writable(moat_worker *worker)
{
    struct pollfd entry = {.fd = worker->socket_fd, .events = POLLOUT};
    int ready;
    do
        ready = poll(&entry, 1, SEND_WAIT_MS);
    while (ready < 0 && errno == EINTR);
    return ready > 0 && (entry.revents & POLLOUT);
}

/* Sends the plan's messages. Returns the first slot of the batch still to
 * send: the batch's end once everything left or was dropped, or the first
 * slot of a GSO message the kernel refused (with *gso cleared, for those
 * datagrams to go again one by one). */
static unsigned send_plan(moat_worker *worker, moat_udp_gso_plan *plan, bool *waited, bool *gso)
{
    struct mmsghdr *headers = plan->headers;
    unsigned m = 0;
    while (m < plan->length) {
        int n = sendmmsg(worker->socket_fd, &headers[m], plan->length - m, 0);
        if (n > 0) {
            for (unsigned k = m; k < m + (unsigned)n; k++)
                count_sent(worker, plan->first[k], plan->first[k] + plan->count[k]);
            m += (unsigned)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        bool full = n == 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS;
        if (full && !*waited) {
            *waited = true;
            if (wait_writable(worker))
                continue;
        }
        if (full) {
            moat_counter_add(&worker->counters.dropped[MOAT_DROP_SEND_EAGAIN],
                             worker->send_count - plan->first[m]);
            return worker->send_count;
        }
        if (plan->count[m] > 1) {
            /* EMSGSIZE: the segments do not fit this route's MTU (the
             * sockets are IP(V6)_PMTUDISC_PROBE, so nothing fragments):
             * send them one by one, and each datagram is accepted or
             * refused on its own, as PLPMTUD expects; anything else: this
             * socket cannot segment at all. */
            if (errno != EMSGSIZE)
                worker->send_gso = false;
            *gso = false;
            return plan->first[m];
        }
        /* This datagram alone (its destination, its size) was refused. */
        moat_counter_add(&worker->counters.dropped[MOAT_DROP_SEND_ERROR], 1);
        m++;
    }
    return worker->send_count;
}

void moat_worker_flush(moat_worker *worker)
{
    unsigned next = 0;
    bool waited = false;
    bool gso = worker->send_gso;
    while (next < worker->send_count) {
        moat_udp_gso_plan_batch(&worker->send_plan, worker->send_headers, next, worker->send_count,
                                gso);
        next = send_plan(worker, &worker->send_plan, &waited, &gso);
    }
    worker->send_count = 0;
}

uint8_t *moat_worker_send_buffer(moat_worker *worker, size_t *capacity)
{
    if (worker->send_count == MOAT_WORKER_BATCH)
        moat_worker_flush(worker);
    *capacity = MOAT_DATAGRAM_CAPACITY;
    return worker->send_buffers[worker->send_count];
}

void moat_worker_send_commit(moat_worker *worker, const moat_path *path, size_t length,
                             moat_send_kind kind)
{
    unsigned slot = worker->send_count;
    worker->send_addresses[slot] = path->remote;
    worker->send_vectors[slot].iov_len = length;
    worker->send_kinds[slot] = (uint8_t)kind;
    moat_packet_info_set_source(&worker->send_headers[slot].msg_hdr, &worker->send_controls[slot],
                                &path->local);
    worker->send_count++;
}

void moat_worker_send(moat_worker *worker, const moat_path *path, const uint8_t *data,
                      size_t length)
{
    size_t capacity;
    uint8_t *buffer = moat_worker_send_buffer(worker, &capacity);
    if (length > capacity)
        return;
    memcpy(buffer, data, length);
    moat_worker_send_commit(worker, path, length, MOAT_SEND_OTHER);
}
