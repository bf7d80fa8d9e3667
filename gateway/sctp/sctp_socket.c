#include "sctp/sctp_socket.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <usrsctp.h>

#include "sctp/sctp_mailbox.h"
#include "sctp/sctp_tuning.h"

/* Not in usrsctp's public header, though the library implements both (the
 * values are FreeBSD's socket API, netinet/sctp.h, and usrsctp's own fuzzers
 * define them the same way). */
#ifndef SCTP_INTERLEAVING_SUPPORTED
#define SCTP_INTERLEAVING_SUPPORTED 0x00001206
#endif
#ifndef SCTP_GET_SNDBUF_USE
#define SCTP_GET_SNDBUF_USE 0x00001101
struct sctp_sockstat {
    sctp_assoc_t ss_assoc_id;
    uint32_t ss_total_sndbuf;
    uint32_t ss_total_recv_buf;
};
#endif

/* Source and destination port, verification tag, checksum (RFC 9260 §3.1). */
#define SCTP_COMMON_HEADER_SIZE 12

/* Notifications the association reacts to (sctp_notification.c). */
static const uint16_t subscribed_events[] = {
    SCTP_ASSOC_CHANGE,      SCTP_STREAM_RESET_EVENT,  SCTP_SENDER_DRY_EVENT,
    SCTP_SEND_FAILED_EVENT, SCTP_STREAM_CHANGE_EVENT, SCTP_PARTIAL_DELIVERY_EVENT,
    SCTP_SHUTDOWN_EVENT,
};

static struct sockaddr_conn conn_address(uintptr_t conn_id, uint16_t port)
{
    struct sockaddr_conn sconn;
    memset(&sconn, 0, sizeof sconn);
    sconn.sconn_family = AF_CONN;
    sconn.sconn_port = htons(port);
    sconn.sconn_addr = (void *)conn_id;
    return sconn;
}

static int set_option(struct socket *sock, int level, int name, const void *value, socklen_t length,
                      const char *what, char *error, size_t error_size)
{
    if (usrsctp_setsockopt(sock, level, name, value, length) == 0)
        return 0;
    int err = errno;
    snprintf(error, error_size, "usrsctp: setting %s failed: %s", what, strerror(err));
    return -err;
}

static int configure(struct socket *sock, char *error, size_t error_size)
{
    int rc = 0;
    /* Freeing an association must not leave usrsctp waiting on a graceful
     * close driven by timers: closing aborts at once. Graceful ends go
     * through moat_sctp_association_shutdown first. */
    struct linger linger = {.l_onoff = 1, .l_linger = 0};
    rc = rc ? rc
            : set_option(sock, SOL_SOCKET, SO_LINGER, &linger, sizeof linger, "SO_LINGER", error,
                         error_size);
    int buffer = MOAT_SCTP_SOCKET_BUFFER_SIZE;
    rc = rc ? rc
            : set_option(sock, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer, "SO_SNDBUF", error,
                         error_size);
    rc = rc ? rc
            : set_option(sock, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer, "SO_RCVBUF", error,
                         error_size);
    /* Messages are small and latency matters more than packing them. */
    int on = 1;
    rc = rc ? rc
            : set_option(sock, IPPROTO_SCTP, SCTP_NODELAY, &on, sizeof on, "SCTP_NODELAY", error,
                         error_size);
    rc = rc ? rc
            : set_option(sock, IPPROTO_SCTP, SCTP_RECVRCVINFO, &on, sizeof on, "SCTP_RECVRCVINFO",
                         error, error_size);
    /* Level 2: pieces of large messages on different streams may be
     * delivered interleaved, so one large message does not hold up small
     * ones on other channels; it is also what I-DATA (RFC 8260) requires. */
    uint32_t interleave = 2;
    rc = rc ? rc
            : set_option(sock, IPPROTO_SCTP, SCTP_FRAGMENT_INTERLEAVE, &interleave,
                         sizeof interleave, "SCTP_FRAGMENT_INTERLEAVE", error, error_size);
    /* Offer I-DATA: when the peer supports it too, a large message no longer
     * blocks the others on the wire either. */
    struct sctp_assoc_value idata = {.assoc_id = SCTP_FUTURE_ASSOC, .assoc_value = 1};
    rc = rc ? rc
            : set_option(sock, IPPROTO_SCTP, SCTP_INTERLEAVING_SUPPORTED, &idata, sizeof idata,
                         "SCTP_INTERLEAVING_SUPPORTED", error, error_size);
    /* Stream reset closes channels (RFC 8831 §6.7); accepting the peer's
     * requests to add streams lets it open more channels than INIT gave. */
    struct sctp_assoc_value reset = {
        .assoc_id = SCTP_FUTURE_ASSOC,
        .assoc_value = SCTP_ENABLE_RESET_STREAM_REQ | SCTP_ENABLE_CHANGE_ASSOC_REQ,
    };
    rc = rc ? rc
            : set_option(sock, IPPROTO_SCTP, SCTP_ENABLE_STREAM_RESET, &reset, sizeof reset,
                         "SCTP_ENABLE_STREAM_RESET", error, error_size);
    struct sctp_initmsg init = {
        .sinit_num_ostreams = MOAT_SCTP_STREAMS,
        .sinit_max_instreams = MOAT_SCTP_STREAMS,
    };
    rc = rc ? rc
            : set_option(sock, IPPROTO_SCTP, SCTP_INITMSG, &init, sizeof init, "SCTP_INITMSG",
                         error, error_size);
    struct sctp_paddrparams paddr;
    memset(&paddr, 0, sizeof paddr);
    paddr.spp_assoc_id = SCTP_FUTURE_ASSOC;
    paddr.spp_flags = SPP_PMTUD_DISABLE;
    /* usrsctp adds the 12-byte SCTP common header to the path MTU of an
     * AF_CONN destination (it takes the value as the MTU of what would be
     * the IP payload after SCTP's header): subtract it to bound whole
     * packets by MOAT_SCTP_MTU. */
    paddr.spp_pathmtu = MOAT_SCTP_MTU - SCTP_COMMON_HEADER_SIZE;
    rc = rc ? rc
            : set_option(sock, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &paddr, sizeof paddr,
                         "SCTP_PEER_ADDR_PARAMS", error, error_size);
    for (size_t i = 0; rc == 0 && i < sizeof subscribed_events / sizeof subscribed_events[0]; i++) {
        struct sctp_event event = {
            .se_assoc_id = SCTP_FUTURE_ASSOC,
            .se_type = subscribed_events[i],
            .se_on = 1,
        };
        rc = set_option(sock, IPPROTO_SCTP, SCTP_EVENT, &event, sizeof event, "SCTP_EVENT", error,
                        error_size);
    }
    return rc;
}

struct socket *moat_sctp_socket_open(uintptr_t conn_id, uint16_t local_port, char *error,
                                     size_t error_size)
{
    struct socket *sock = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
    if (sock == NULL) {
        snprintf(error, error_size, "usrsctp_socket failed: %s", strerror(errno));
        return NULL;
    }
    if (usrsctp_set_non_blocking(sock, 1) != 0) {
        snprintf(error, error_size, "usrsctp_set_non_blocking failed: %s", strerror(errno));
        usrsctp_close(sock);
        return NULL;
    }
    if (configure(sock, error, error_size) != 0) {
        usrsctp_close(sock);
        return NULL;
    }
    struct sockaddr_conn local = conn_address(conn_id, local_port);
    if (usrsctp_bind(sock, (struct sockaddr *)&local, sizeof local) != 0) {
        snprintf(error, error_size, "usrsctp_bind to port %u failed: %s", local_port,
                 strerror(errno));
        usrsctp_close(sock);
        return NULL;
    }
    usrsctp_set_upcall(sock, moat_sctp_mailbox_upcall, (void *)conn_id);
    return sock;
}

int moat_sctp_socket_connect(struct socket *sock, uintptr_t conn_id, uint16_t remote_port)
{
    struct sockaddr_conn remote = conn_address(conn_id, remote_port);
    if (usrsctp_connect(sock, (struct sockaddr *)&remote, sizeof remote) == 0)
        return 0;
    /* Non-blocking: the handshake goes on in the background. */
    if (errno == EINPROGRESS)
        return 0;
    return -errno;
}

size_t moat_sctp_socket_buffered_amount(struct socket *sock)
{
    struct sctp_sockstat stat;
    memset(&stat, 0, sizeof stat);
    socklen_t length = sizeof stat;
    /* One-to-one socket: assoc id 0 means "the" association. */
    if (usrsctp_getsockopt(sock, IPPROTO_SCTP, SCTP_GET_SNDBUF_USE, &stat, &length) != 0)
        return 0;
    return stat.ss_total_sndbuf;
}

void moat_sctp_socket_close(struct socket *sock)
{
    if (sock == NULL)
        return;
    usrsctp_set_upcall(sock, NULL, NULL);
    usrsctp_close(sock);
}
