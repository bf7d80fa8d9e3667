/* The receive half of a worker's packet path: recvmmsg batches, demux by
 * first octet (RFC 7983) and dispatch to the session that owns the 5-tuple. */
#ifndef MOAT_WORKER_RECEIVE_H
#define MOAT_WORKER_RECEIVE_H

#include "engine/packet_info.h"
#include "engine/worker.h"
#include "prefilter/load_monitor.h"

#include <sys/socket.h>

typedef struct {
    struct mmsghdr headers[MOAT_WORKER_BATCH];
    struct iovec vectors[MOAT_WORKER_BATCH];
    struct sockaddr_in6 addresses[MOAT_WORKER_BATCH];
    moat_packet_info_buffer controls[MOAT_WORKER_BATCH];
    uint8_t *buffers; /* MOAT_WORKER_BATCH * MOAT_DATAGRAM_CAPACITY */
} moat_receive_batch;

typedef enum {
    MOAT_PACKET_STUN,
    MOAT_PACKET_DTLS,
    MOAT_PACKET_SRTP, /* RTP or RTCP; told apart after the tuple lookup */
    MOAT_PACKET_UNKNOWN,
} moat_packet_class;

/* RFC 7983 ranges of the first octet. */
static inline moat_packet_class moat_packet_classify(const uint8_t *data, size_t length)
{
    if (length == 0)
        return MOAT_PACKET_UNKNOWN;
    uint8_t first = data[0];
    if (first <= 3)
        return MOAT_PACKET_STUN;
    if (first >= 20 && first <= 63)
        return MOAT_PACKET_DTLS;
    if (first >= 128 && first <= 191)
        return MOAT_PACKET_SRTP;
    return MOAT_PACKET_UNKNOWN;
}

void moat_receive_batch_init(moat_receive_batch *batch);
void moat_receive_batch_clear(moat_receive_batch *batch);
/* Drains the socket (bounded number of batches per call, so timers and tasks
 * still run under a flood) and dispatches every datagram. */
void moat_worker_receive(moat_worker *worker, int socket_fd, moat_receive_batch *batch);
/* Counts what the kernel dropped at the socket since the last call (its
 * SO_MEMINFO running count, read by the caller once a tick). */
void moat_worker_note_socket_drops(moat_worker *worker, const moat_socket_load *socket);

/* One datagram, as the receive loop hands it on: demultiplexed and given to
 * the session owning its 5-tuple (STUN: its ufrag), or dropped with a
 * counted reason. `data` has MOAT_DATAGRAM_CAPACITY bytes of room. */
void moat_worker_dispatch(moat_worker *worker, const moat_path *path, uint8_t *data, size_t length);

moat_session *moat_worker_session_by_tuple(moat_worker *worker, const struct sockaddr_in6 *remote);
/* Whether cascade legs share `remote` (moat_worker_bind_route): it is
 * theirs, routed by SSRC, and no other session may take it. */
bool moat_worker_is_route_tuple(moat_worker *worker, const struct sockaddr_in6 *remote);
/* The session owning (remote, ssrc) on a shared tuple (moat_worker_bind_route). */
moat_session *moat_worker_session_by_route(moat_worker *worker, const struct sockaddr_in6 *remote,
                                           uint32_t ssrc);
moat_session *moat_worker_session_by_ufrag(moat_worker *worker, const char *ufrag);

#endif
