/* One SCTP association over DTLS (RFC 8261): its lifetime, sending messages,
 * checksum-checked inbound packets into usrsctp, and the socket and mailbox
 * drained into the owner's callbacks on its (media worker's) thread. */
#include "sctp/sctp_association.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <usrsctp.h>

#include "sctp/sctp_association_private.h"
#include "sctp/sctp_crc32c.h"
#include "sctp/sctp_socket.h"
#include "sctp/sctp_stack.h"

/* One read from usrsctp; larger messages arrive in several reads and are
 * put together by sctp_message_assembly. Most data channel messages are
 * far smaller, and the buffer is per association. */
#define RECEIVE_BUFFER_SIZE (16u * 1024u)

/* Larger "packets" are not SCTP over DTLS (a DTLS record carries at most
 * 16 KiB); refusing them keeps usrsctp from allocating for nonsense. */
#define MAX_PACKET_SIZE 65536u

moat_sctp_association *moat_sctp_association_new(bool is_dtls_client, uint16_t local_port,
                                                 uint16_t remote_port, uint32_t max_message_size,
                                                 const moat_sctp_callbacks *cb, void *user,
                                                 char *error, size_t error_size)
{
    if (cb == NULL) {
        snprintf(error, error_size, "no callbacks");
        return NULL;
    }
    int rc = moat_sctp_stack_init();
    if (rc != 0) {
        snprintf(error, error_size, "SCTP stack initialisation failed: %s", strerror(-rc));
        return NULL;
    }
    moat_sctp_association *a = g_new0(moat_sctp_association, 1);
    a->cb = *cb;
    a->user = user;
    a->is_dtls_client = is_dtls_client;
    a->remote_port = remote_port;
    a->peer_max_message_size = max_message_size;
    moat_sctp_mailbox_register(&a->mailbox, a);
    /* The AF_CONN address must be known to usrsctp before binding to it. */
    usrsctp_register_address((void *)a->mailbox.id);
    a->sock = moat_sctp_socket_open(a->mailbox.id, local_port, error, error_size);
    int window_rc = a->sock != NULL ? moat_sctp_window_init(a) : 0;
    if (a->sock == NULL || window_rc != 0) {
        if (a->sock != NULL) {
            snprintf(error, error_size, "usrsctp: sizing the buffers failed: %s",
                     strerror(-window_rc));
            moat_sctp_socket_close(a->sock);
        }
        usrsctp_deregister_address((void *)a->mailbox.id);
        moat_sctp_mailbox_unregister(&a->mailbox);
        g_free(a);
        return NULL;
    }
    a->maybe_readable = true;
    a->packets = g_byte_array_new();
    a->receive_buffer = g_malloc(RECEIVE_BUFFER_SIZE);
    a->assembly = moat_sctp_message_assembly_new(MOAT_SCTP_MAX_RECEIVE_MESSAGE_SIZE);
    a->channels = moat_data_channel_table_new();
    moat_sctp_pmtu_init(a);
    return a;
}

static void destroy(moat_sctp_association *a)
{
    /* Closing aborts the association; the ABORT lands in the mailbox, which
     * is dropped with it: no callback runs from free. */
    moat_sctp_socket_close(a->sock);
    moat_sctp_window_release(a);
    moat_sctp_mailbox_unregister(&a->mailbox);
    usrsctp_deregister_address((void *)a->mailbox.id);
    g_byte_array_unref(a->packets);
    g_free(a->receive_buffer);
    moat_sctp_message_assembly_free(a->assembly);
    moat_data_channel_table_free(a->channels);
    moat_sctp_pmtu_release(a);
    g_free(a);
}

void moat_sctp_association_free(moat_sctp_association *a)
{
    if (a == NULL || a->free_requested)
        return;
    a->free_requested = true;
    /* Inside a callback of this association: the delivery loop frees it
     * once the callback has returned. */
    if (a->delivering == 0)
        destroy(a);
}

void moat_sctp_association_abort(moat_sctp_association *a)
{
    if (a == NULL || a->free_requested)
        return;
    if (a->delivering > 0) {
        moat_sctp_association_free(a);
        return;
    }
    a->free_requested = true;
    /* Closing with SO_LINGER {1, 0} (sctp_socket.c) makes usrsctp send the
     * ABORT into the mailbox, now, on this thread: it is taken from there
     * and handed to send_packet before the mailbox goes. */
    moat_sctp_mailbox_claim(&a->mailbox);
    moat_sctp_socket_close(a->sock);
    a->sock = NULL;
    bool events = false;
    g_byte_array_set_size(a->packets, 0);
    if (moat_sctp_mailbox_take(&a->mailbox, &a->packets, &events)) {
        size_t offset = 0;
        const uint8_t *packet;
        size_t length;
        while (moat_sctp_mailbox_next_packet(a->packets, &offset, &packet, &length))
            if (a->cb.send_packet != NULL)
                a->cb.send_packet(a->user, packet, length);
    }
    destroy(a);
}

int moat_sctp_association_connect(moat_sctp_association *a)
{
    if (a == NULL)
        return -EINVAL;
    if (a->free_requested)
        return -ESHUTDOWN;
    moat_sctp_mailbox_claim(&a->mailbox);
    if (a->connect_started)
        return 0;
    int rc = moat_sctp_socket_connect(a->sock, a->mailbox.id, a->remote_port);
    if (rc == 0)
        a->connect_started = true;
    moat_sctp_association_deliver(a);
    return rc;
}

void moat_sctp_association_receive(moat_sctp_association *a, const uint8_t *packet, size_t length)
{
    if (a == NULL || a->free_requested || packet == NULL || length > MAX_PACKET_SIZE)
        return;
    /* usrsctp does not check the checksum (offload, sctp_stack.c): a packet
     * that fails it never reaches SCTP. */
    if (!moat_sctp_packet_checksum_ok(packet, length)) {
        a->counters.packets_bad_checksum++;
        return;
    }
    /* Our PLPMTUD probes' acknowledgements are not usrsctp's. */
    if (moat_sctp_pmtu_incoming(a, &packet, &length))
        return;
    moat_sctp_mailbox_claim(&a->mailbox);
    a->inbound_since_block = true;
    /* usrsctp answers an INIT that reaches a socket which has not connected
     * (and does not listen) with an ABORT; DTLS is up if SCTP arrives, so
     * this is the moment to connect anyway. */
    if (!a->connect_started &&
        moat_sctp_socket_connect(a->sock, a->mailbox.id, a->remote_port) == 0)
        a->connect_started = true;
    usrsctp_conninput((void *)a->mailbox.id, packet, length, 0);
    moat_sctp_association_deliver(a);
}

int moat_sctp_association_send_raw(moat_sctp_association *a, uint16_t stream_id, uint32_t ppid,
                                   const uint8_t *data, size_t length, bool unordered,
                                   uint16_t pr_policy, uint32_t pr_value)
{
    struct sctp_sendv_spa spa;
    memset(&spa, 0, sizeof spa);
    spa.sendv_flags = SCTP_SEND_SNDINFO_VALID;
    spa.sendv_sndinfo.snd_sid = stream_id;
    /* usrsctp passes the PPID through untouched: network byte order. */
    spa.sendv_sndinfo.snd_ppid = htonl(ppid);
    spa.sendv_sndinfo.snd_flags = unordered ? SCTP_UNORDERED : 0;
    if (pr_policy != SCTP_PR_SCTP_NONE) {
        spa.sendv_flags |= SCTP_SEND_PRINFO_VALID;
        spa.sendv_prinfo.pr_policy = pr_policy;
        spa.sendv_prinfo.pr_value = pr_value;
    }
    if (usrsctp_sendv(a->sock, data, length, NULL, 0, &spa, sizeof spa, SCTP_SENDV_SPA, 0) >= 0)
        return 0;
    if (errno == EWOULDBLOCK || errno == EAGAIN)
        return -EAGAIN;
    return -errno;
}

int moat_sctp_association_send(moat_sctp_association *a, uint16_t stream_id, uint32_t ppid,
                               const uint8_t *data, size_t length)
{
    if (a == NULL || (data == NULL && length > 0))
        return -EINVAL;
    if (a->free_requested || a->shutdown_requested)
        return -ESHUTDOWN;
    moat_sctp_mailbox_claim(&a->mailbox);
    if (!a->up)
        return -ENOTCONN;
    bool empty = false;
    switch (ppid) {
    case MOAT_SCTP_PPID_STRING:
    case MOAT_SCTP_PPID_BINARY:
        if (length == 0) {
            empty = true;
            ppid = ppid == MOAT_SCTP_PPID_STRING ? MOAT_SCTP_PPID_STRING_EMPTY
                                                 : MOAT_SCTP_PPID_BINARY_EMPTY;
        }
        break;
    case MOAT_SCTP_PPID_STRING_EMPTY:
    case MOAT_SCTP_PPID_BINARY_EMPTY:
        empty = true;
        break;
    default:
        return -EINVAL;
    }
    if (!empty && length > a->max_send_size)
        return -EMSGSIZE;
    moat_data_channel *ch = moat_data_channel_table_find(a->channels, stream_id);
    if (ch == NULL)
        return -ENOENT;
    if (ch->state != MOAT_DATA_CHANNEL_OPEN)
        return -EPIPE;
    /* The OPEN must be on the stream before any message (RFC 8832 §6). */
    if (ch->open_unsent) {
        int open_rc = moat_sctp_channels_send_open(a, ch);
        if (open_rc != 0) {
            if (open_rc == -EAGAIN)
                moat_sctp_association_send_refused(a);
            moat_sctp_association_deliver(a);
            return open_rc;
        }
    }
    uint16_t policy = SCTP_PR_SCTP_NONE;
    uint32_t value = 0;
    if (ch->info.max_retransmits >= 0) {
        policy = SCTP_PR_SCTP_RTX;
        value = (uint32_t)ch->info.max_retransmits;
    } else if (ch->info.max_lifetime_ms >= 0) {
        policy = SCTP_PR_SCTP_TTL;
        value = (uint32_t)ch->info.max_lifetime_ms;
    }
    bool unordered = !ch->info.ordered && !ch->ack_pending;
    /* Empty messages carry one byte: SCTP has no empty DATA chunk. */
    static const uint8_t empty_payload = 0;
    int rc = moat_sctp_association_send_raw(a, stream_id, ppid, empty ? &empty_payload : data,
                                            empty ? 1 : length, unordered, policy, value);
    if (rc == 0) {
        a->counters.messages_sent++;
        a->counters.bytes_sent += empty ? 0 : length;
    } else if (rc == -EAGAIN) {
        moat_sctp_association_send_refused(a);
    }
    moat_sctp_association_deliver(a);
    return rc;
}

void moat_sctp_association_pause_receive(moat_sctp_association *a, bool paused)
{
    if (a == NULL || a->free_requested || a->receive_paused == paused)
        return;
    a->receive_paused = paused;
    if (paused)
        return;
    /* What waits in the receive buffer raised no new upcall: read anyway. */
    moat_sctp_mailbox_claim(&a->mailbox);
    a->maybe_readable = true;
    moat_sctp_association_deliver(a);
}

void moat_sctp_association_shutdown(moat_sctp_association *a)
{
    if (a == NULL || a->free_requested || a->shutdown_requested)
        return;
    moat_sctp_mailbox_claim(&a->mailbox);
    a->shutdown_requested = true;
    moat_sctp_association_deliver(a);
}

void moat_sctp_association_set_memory_limit(moat_sctp_association *a, size_t bytes)
{
    if (a == NULL || a->free_requested)
        return;
    moat_sctp_window_set_limit(a, bytes);
}

void moat_sctp_association_set_memory_budget(moat_sctp_association *a,
                                             const moat_sctp_memory_budget *budget)
{
    if (a == NULL || a->free_requested)
        return;
    moat_sctp_window_set_budget(a, budget);
}

void moat_sctp_association_tick(moat_sctp_association *a)
{
    if (a == NULL || a->free_requested)
        return;
    moat_sctp_mailbox_claim(&a->mailbox);
    moat_sctp_window_idle(a);
    moat_sctp_pmtu_run(a);
}

int moat_sctp_association_set_mtu(moat_sctp_association *a, size_t mtu)
{
    if (a == NULL)
        return -EINVAL;
    if (a->free_requested)
        return -ESHUTDOWN;
    return moat_sctp_socket_set_mtu(a->sock, mtu);
}

void moat_sctp_association_buffer_sizes(const moat_sctp_association *a, size_t *send,
                                        size_t *receive)
{
    *send = a != NULL ? a->window.send : 0;
    *receive = a != NULL ? a->window.receive : 0;
}

int moat_sctp_association_path_status(moat_sctp_association *a, uint32_t *srtt_ms, uint32_t *cwnd)
{
    if (a == NULL || a->free_requested || srtt_ms == NULL || cwnd == NULL)
        return -EINVAL;
    if (!a->up)
        return -ENOTCONN;
    return moat_sctp_socket_path_status(a->sock, srtt_ms, cwnd);
}

size_t moat_sctp_association_buffered_amount(moat_sctp_association *a)
{
    if (a == NULL || a->free_requested)
        return 0;
    return moat_sctp_socket_buffered_amount(a->sock);
}

void moat_sctp_association_counters(const moat_sctp_association *a, moat_sctp_counters *out)
{
    if (out == NULL)
        return;
    if (a == NULL) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = a->counters;
}

int moat_sctp_association_channel_info(const moat_sctp_association *a, uint16_t stream_id,
                                       moat_data_channel_info *info)
{
    if (a == NULL || info == NULL)
        return -EINVAL;
    const moat_data_channel *ch = moat_data_channel_table_find(a->channels, stream_id);
    if (ch == NULL)
        return -ENOENT;
    *info = ch->info;
    return 0;
}

void moat_sctp_association_report_down(moat_sctp_association *a)
{
    a->up = false;
    if (a->ended)
        return;
    a->ended = true;
    if (moat_sctp_association_live(a) && a->cb.association_state != NULL)
        a->cb.association_state(a->user, false);
}

/* A whole user or DCEP message read from the socket. */
static void handle_message(moat_sctp_association *a, uint16_t stream_id, uint32_t ppid,
                           const uint8_t *data, size_t length)
{
    if (ppid == MOAT_SCTP_PPID_DCEP) {
        moat_sctp_channels_handle_dcep(a, stream_id, data, length);
        return;
    }
    moat_data_channel *ch = moat_data_channel_table_find(a->channels, stream_id);
    if (ch == NULL) {
        a->counters.messages_dropped++;
        return;
    }
    moat_sctp_channels_data_seen(a, ch);
    if (ppid == MOAT_SCTP_PPID_STRING_EMPTY || ppid == MOAT_SCTP_PPID_BINARY_EMPTY) {
        data = NULL;
        length = 0;
    }
    a->counters.messages_received++;
    a->counters.bytes_received += length;
    if (a->cb.message != NULL)
        a->cb.message(a->user, stream_id, ppid, data, length);
}

/* Whether the owner lets us read (backpressure); a shutdown is always read
 * to its end. */
static bool may_read(const moat_sctp_association *a)
{
    return !a->receive_paused || a->shutdown_requested;
}

/* Reads everything the socket holds, or until the owner pauses reading. */
static void drain_socket(moat_sctp_association *a)
{
    while (!a->eof && moat_sctp_association_live(a) && may_read(a)) {
        struct sctp_rcvinfo info;
        struct sockaddr_conn from;
        socklen_t from_length = sizeof from;
        socklen_t info_length = sizeof info;
        unsigned int info_type = SCTP_RECVV_NOINFO;
        int flags = 0;
        memset(&info, 0, sizeof info);
        ssize_t n =
            usrsctp_recvv(a->sock, a->receive_buffer, RECEIVE_BUFFER_SIZE, (struct sockaddr *)&from,
                          &from_length, &info, &info_length, &info_type, &flags);
        if (n < 0) {
            /* Nothing to read, or no association yet. Anything else means
             * the association is gone. Either way there is nothing more
             * until the socket's upcall says so. */
            a->maybe_readable = false;
            if (errno != EWOULDBLOCK && errno != EAGAIN && errno != ENOTCONN) {
                a->eof = true;
                moat_sctp_association_report_down(a);
            }
            return;
        }
        if (n == 0) {
            a->eof = true;
            moat_sctp_association_report_down(a);
            return;
        }
        bool last = (flags & MSG_EOR) != 0;
        uint32_t key;
        if (flags & MSG_NOTIFICATION)
            key = MOAT_SCTP_ASSEMBLY_NOTIFICATION;
        else if (info_type == SCTP_RECVV_RCVINFO)
            key = info.rcv_sid |
                  ((info.rcv_flags & SCTP_UNORDERED) ? MOAT_SCTP_ASSEMBLY_UNORDERED : 0u);
        else
            continue; /* data without its stream: cannot be placed */
        const uint8_t *message;
        size_t length;
        switch (moat_sctp_message_assembly_add(a->assembly, key, a->receive_buffer, (size_t)n, last,
                                               &message, &length)) {
        case MOAT_SCTP_ASSEMBLY_COMPLETE:
            if (key == MOAT_SCTP_ASSEMBLY_NOTIFICATION)
                moat_sctp_notification_handle(a, message, length);
            else
                handle_message(a, info.rcv_sid, ntohl(info.rcv_ppid), message, length);
            break;
        case MOAT_SCTP_ASSEMBLY_DROPPED:
            if (key != MOAT_SCTP_ASSEMBLY_NOTIFICATION)
                a->counters.messages_dropped++;
            break;
        case MOAT_SCTP_ASSEMBLY_INCOMPLETE:
            break;
        }
    }
}

static void maybe_shutdown(moat_sctp_association *a)
{
    if (!a->shutdown_requested || a->shutdown_sent)
        return;
    if (!a->up) {
        /* Nothing established, so nothing queued can be delivered: end the
         * handshake, if any, and report the end now. */
        a->shutdown_sent = true;
        if (a->connect_started) {
            usrsctp_shutdown(a->sock, SHUT_RDWR);
            moat_sctp_association_report_down(a);
        }
        return;
    }
    /* Wait for sender dry (the event brings us back here) so SHUTDOWN goes
     * out only after every queued message was acknowledged. */
    if (moat_sctp_socket_buffered_amount(a->sock) != 0)
        return;
    a->shutdown_sent = true;
    usrsctp_shutdown(a->sock, SHUT_WR);
}

void moat_sctp_association_send_refused(moat_sctp_association *a)
{
    a->send_blocked = true;
    a->blocked_buffered = moat_sctp_socket_buffered_amount(a->sock);
    a->inbound_since_block = false;
}

static void maybe_writable(moat_sctp_association *a)
{
    if (!a->send_blocked || !a->up)
        return;
    /* Half the buffer free is room for any message we accept to send,
     * unless it is larger than that, and then the caller retries anyway. */
    size_t buffered = moat_sctp_socket_buffered_amount(a->sock);
    if (buffered > a->window.send / 2)
        return;
    if (buffered >= a->blocked_buffered && !a->inbound_since_block)
        return;
    a->send_blocked = false;
    if (a->cb.writable != NULL)
        a->cb.writable(a->user);
}

static void deliver_packets(moat_sctp_association *a)
{
    size_t offset = 0;
    const uint8_t *packet;
    size_t length;
    while (moat_sctp_association_live(a) &&
           moat_sctp_mailbox_next_packet(a->packets, &offset, &packet, &length)) {
        moat_sctp_pmtu_outgoing(a, packet, length);
        if (a->cb.send_packet != NULL)
            a->cb.send_packet(a->user, packet, length);
    }
    g_byte_array_set_size(a->packets, 0);
}

void moat_sctp_association_deliver(moat_sctp_association *a)
{
    if (a->delivering > 0) {
        a->deliver_again = true;
        return;
    }
    a->delivering++;
    bool first = true;
    while (moat_sctp_association_live(a)) {
        bool events = false;
        bool work = moat_sctp_mailbox_take(&a->mailbox, &a->packets, &events);
        if (!work && !a->deliver_again && !first)
            break;
        first = false;
        a->deliver_again = false;
        deliver_packets(a);
        if (!moat_sctp_association_live(a))
            break;
        /* usrsctp raises the upcall for every message or notification it
         * queues for reading: without one, the socket has nothing (a read
         * would only take its locks to say so). */
        if (events)
            a->maybe_readable = true;
        if (a->maybe_readable)
            drain_socket(a);
        if (!moat_sctp_association_live(a))
            break;
        if (a->channel_work)
            moat_sctp_channels_retry(a);
        maybe_shutdown(a);
        moat_sctp_window_tune(a);
        moat_sctp_pmtu_run(a);
        maybe_writable(a);
    }
    a->delivering--;
    if (a->free_requested)
        destroy(a);
}
