/* Owns the RTP ingest leg of a session: its UDP socket, the sender it
 * accepts (given by the API or latched on the first packet) and the hand-off
 * of each packet to the same delivery as decrypted SRTP. Plain RTP carries no
 * authentication: anyone who can reach the port before the real sender (or
 * spoof the latched address) can inject media; "source" narrows that. With
 * SRTP keys (the API's "srtp") each packet takes the WebRTC receive path
 * (prefilter, srtp_unprotect) and only an authentic one latches the sender.
 * An ingest that receives no valid RTP for its idle timeout ends (session.c's
 * tick), so an abandoned one frees its socket. A datagram from one of
 * Moat's own sockets (a call leg whose party named this port before the
 * ingest bound it) is dropped as "loop" before anything else: it neither
 * latches nor delivers (engine/own_sockets.h). */
#include "session/session_internal.h"

#include "engine/counters.h"
#include "engine/packet_info.h"
#include "engine/worker.h"
#include "rtp/rtp_packet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <openssl/crypto.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PLAIN_BATCH 64 /* datagrams per wake-up, then other work runs */

void moat_session_set_plain_keys(moat_session *session, const moat_srtp_keying *keys)
{
    moat_session_plain_clear_keys(session);
    session->plain_keys = g_memdup2(keys, sizeof *keys);
}

void moat_session_plain_clear_keys(moat_session *session)
{
    if (!session->plain_keys)
        return;
    OPENSSL_cleanse(session->plain_keys, sizeof *session->plain_keys);
    g_free(session->plain_keys);
    session->plain_keys = NULL;
}

/* SRTP ingest: the keys go where a finished DTLS handshake would put them. */
static void install_keys(moat_session *session)
{
    if (moat_session_media_keys(session, session->plain_keys) != 0 ||
        moat_session_prefilter_keys(session, session->plain_keys) != 0) {
        session->end_reason = "srtp setup failed";
        session->ending = true;
    }
    moat_session_plain_clear_keys(session);
}

void moat_session_plain_start(moat_session *session)
{
    if (session->plain_keys)
        install_keys(session);
    /* Each datagram carries the socket's drop count (note_queue_drops). */
    int on = 1;
    setsockopt(session->plain_fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof on);
    session->plain_last_rx_us = session->created_us;
    moat_worker_add_plain(session->worker, session->plain_fd, session);
}

void moat_session_plain_mark_own(moat_session *session)
{
    struct sockaddr_in6 local;
    socklen_t length = sizeof local;
    if (session->plain_fd < 0 ||
        getsockname(session->plain_fd, (struct sockaddr *)&local, &length) != 0 ||
        local.sin6_family != AF_INET6)
        return;
    session->plain_port = ntohs(local.sin6_port);
    moat_own_sockets_hold(moat_worker_own_sockets(session->worker), session->plain_port);
}

void moat_session_plain_stop(moat_session *session)
{
    if (session->plain_fd < 0)
        return;
    moat_worker_remove_plain(session->worker, session->plain_fd);
    /* Unmarked before the close: the port may be bound again at once. */
    moat_own_sockets_release(moat_worker_own_sockets(session->worker), session->plain_port);
    session->plain_port = 0;
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
static bool source_allowed(const moat_session *session, const struct sockaddr_in6 *from)
{
    return !(session->plain_latched || session->plain_source_fixed) ||
           same_address(&session->plain_source, from);
}

static void latch_source(moat_session *session, const struct sockaddr_in6 *from)
{
    session->plain_source = *from;
    session->plain_latched = true;
}

void moat_session_plain_handle(moat_session *session, const struct sockaddr_in6 *from,
                               uint8_t *data, size_t length, size_t capacity)
{
    if (length > capacity - 64) {
        moat_session_drop(session, MOAT_DROP_TRUNCATED);
        return;
    }
    /* Before the source: a latched sender on this host (loopback) must not
     * let a call leg's relay in from another of its ports. */
    if (moat_own_sockets_is_source(moat_worker_own_sockets(session->worker), from)) {
        moat_session_drop(session, MOAT_DROP_LOOP);
        return;
    }
    if (from->sin6_family != AF_INET6 || !source_allowed(session, from)) {
        moat_session_drop(session, MOAT_DROP_UNKNOWN_TUPLE);
        return;
    }
    /* RTCP (rtcp-mux) from the sender is not needed: nothing is sent back,
     * but it is counted. */
    if (length < 12 || (data[0] >> 6) != 2) {
        moat_session_drop(session, MOAT_DROP_MALFORMED);
        return;
    }
    if (moat_rtp_is_rtcp(data, length)) {
        moat_session_drop(session, MOAT_DROP_RTCP_IGNORED);
        return;
    }
    uint64_t now_us = moat_worker_now_us(session->worker);
    if (session->srtp) {
        /* Prefilter, srtp_unprotect and delivery; a drop is counted there. */
        if (!moat_session_handle_srtp(session, NULL, data, length, capacity))
            return;
    } else if (!moat_session_deliver_rtp(session, data, length, capacity, now_us)) {
        return; /* not RTP (counted): it neither latches nor keeps the ingest alive */
    }
    latch_source(session, from);
    session->plain_last_rx_us = now_us; /* what keeps the ingest from its idle timeout */
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
