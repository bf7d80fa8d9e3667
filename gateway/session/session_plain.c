/* Owns the plain RTP ingest leg of a session: its UDP socket, the sender it
 * accepts (given by the API or latched on the first packet) and the hand-off
 * of each packet to the same delivery as decrypted SRTP. Plain RTP carries no
 * authentication: anyone who can reach the port before the real sender (or
 * spoof the latched address) can inject media; "source" narrows that. An
 * ingest that receives no valid RTP for its idle timeout ends (session.c's
 * tick), so an abandoned one frees its socket. */
#include "session/session_internal.h"

#include "engine/counters.h"
#include "engine/packet_info.h"
#include "engine/worker.h"
#include "rtp/rtp_packet.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PLAIN_BATCH 64 /* datagrams per wake-up, then other work runs */

void moat_session_plain_start(moat_session *session)
{
    /* Each datagram carries the socket's drop count (note_queue_drops). */
    int on = 1;
    setsockopt(session->plain_fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on);
    session->plain_last_rx_us = session->created_us;
    moat_worker_add_plain(session->worker, session->plain_fd, session);
}

void moat_session_plain_stop(moat_session *session)
{
    if (session->plain_fd < 0)
        return;
    moat_worker_remove_plain(session->worker, session->plain_fd);
    close(session->plain_fd);
    session->plain_fd = -1;
}

static bool same_address(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b)
{
    return memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
}

/* Latching: the first sender's address (matching "source" when given) is
 * the only one accepted from then on, from any port, so that audio and video
 * may come from two sockets of one sender (two udpsinks). */
static bool accept_source(moat_session *session, const struct sockaddr_in6 *from)
{
    if (session->plain_latched || session->plain_source_fixed) {
        if (!same_address(&session->plain_source, from))
            return false;
    }
    session->plain_source = *from;
    session->plain_latched = true;
    return true;
}

void moat_session_plain_handle(moat_session *session, const struct sockaddr_in6 *from,
                               uint8_t *data, size_t length, size_t capacity)
{
    if (length > capacity - 64) {
        moat_session_drop(session, MOAT_DROP_TRUNCATED);
        return;
    }
    if (from->sin6_family != AF_INET6 || !accept_source(session, from)) {
        moat_session_drop(session, MOAT_DROP_UNKNOWN_TUPLE);
        return;
    }
    /* RTCP (rtcp-mux) from the sender is not needed: nothing is sent back. */
    if (length < 12 || (data[0] >> 6) != 2) {
        moat_session_drop(session, MOAT_DROP_MALFORMED);
        return;
    }
    if (moat_rtp_is_rtcp(data, length))
        return;
    uint64_t now_us = moat_worker_now_us(session->worker);
    session->plain_last_rx_us = now_us; /* what keeps the ingest from its idle timeout */
    moat_session_deliver_rtp(session, data, length, capacity, now_us);
}

/* What the kernel dropped at the ingest's socket while its queue was full
 * (the worker behind or stalled): the running count the datagram carries
 * (SO_RXQ_OVFL), counted with the worker socket's drops as it first shows. */
static void note_queue_drops(moat_session *session, const struct msghdr *message)
{
    uint32_t drops;
    if (!moat_packet_info_get_queue_drops(message, &drops) || drops == session->plain_queue_drops)
        return;
    moat_counter_add(&moat_worker_counters_mut(session->worker)->socket_drops,
                     (uint32_t)(drops - session->plain_queue_drops));
    session->plain_queue_drops = drops;
}

void moat_session_plain_receive(moat_session *session)
{
    uint8_t buffer[MOAT_DATAGRAM_CAPACITY];
    union {
        struct cmsghdr align;
        uint8_t bytes[CMSG_SPACE(sizeof(uint32_t))];
    } control;
    for (int i = 0; i < PLAIN_BATCH && session->plain_fd >= 0 && !session->ending; i++) {
        struct sockaddr_in6 from;
        struct iovec iov = {buffer, sizeof buffer - 64};
        struct msghdr message = {.msg_name = &from,
                                 .msg_namelen = sizeof from,
                                 .msg_iov = &iov,
                                 .msg_iovlen = 1,
                                 .msg_control = &control,
                                 .msg_controllen = sizeof control};
        ssize_t n = recvmsg(session->plain_fd, &message, MSG_TRUNC);
        if (n < 0)
            return;
        note_queue_drops(session, &message);
        /* MSG_TRUNC: n is the datagram's length, larger than what was read. */
        moat_session_plain_handle(session, &from, buffer, (size_t)n, sizeof buffer);
    }
}
