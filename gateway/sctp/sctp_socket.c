/* The usrsctp AF_CONN socket behind an association: opens it non-blocking
 * with the options WebRTC peers expect, connects it, and sets its buffers and
 * path MTU. */
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
    /* The buffers are sized by sctp_window.c once the socket is open. */
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
    if (rc == 0 && moat_sctp_socket_set_mtu(sock, MOAT_SCTP_MTU) != 0) {
        rc = -errno;
        snprintf(error, error_size, "usrsctp: setting the path MTU failed: %s", strerror(errno));
    }
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

int moat_sctp_socket_set_buffers(struct socket *sock, size_t send, size_t receive)
{
    int send_bytes = (int)send, receive_bytes = (int)receive;
    if (usrsctp_setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &send_bytes, sizeof send_bytes) != 0 ||
        usrsctp_setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &receive_bytes, sizeof receive_bytes) != 0)
        return -errno;
    return 0;
}

static int set_path_mtu(struct socket *sock, sctp_assoc_t assoc_id, size_t mtu)
{
    struct sctp_paddrparams paddr;
    memset(&paddr, 0, sizeof paddr);
    paddr.spp_assoc_id = assoc_id;
    /* The wildcard AF_CONN address: every path of the association (with no
     * address family at all, usrsctp refuses an established association
     * with EAFNOSUPPORT). */
    struct sockaddr_conn *any = (struct sockaddr_conn *)&paddr.spp_address;
    any->sconn_family = AF_CONN;
    paddr.spp_flags = SPP_PMTUD_DISABLE;
    /* usrsctp adds the 12-byte SCTP common header to the path MTU of an
     * AF_CONN destination (it takes the value as the MTU of what would be
     * the IP payload after SCTP's header): subtract it to bound whole
     * packets by mtu. */
    paddr.spp_pathmtu = (uint32_t)(mtu - SCTP_COMMON_HEADER_SIZE);
    return usrsctp_setsockopt(sock, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &paddr, sizeof paddr);
}

int moat_sctp_socket_set_mtu(struct socket *sock, size_t mtu)
{
    if (mtu < MOAT_SCTP_MTU || mtu > MOAT_SCTP_MAX_MTU) {
        errno = EINVAL;
        return -EINVAL;
    }
    if (set_path_mtu(sock, SCTP_FUTURE_ASSOC, mtu) != 0)
        return -errno;
    /* One-to-one socket: assoc id 0 is the association, if there is one
     * already (ENOENT or EINVAL before). */
    (void)set_path_mtu(sock, 0, mtu);
    return 0;
}

int moat_sctp_socket_path_status(struct socket *sock, uint32_t *srtt_ms, uint32_t *cwnd)
{
    struct sctp_status status;
    memset(&status, 0, sizeof status);
    socklen_t length = sizeof status;
    if (usrsctp_getsockopt(sock, IPPROTO_SCTP, SCTP_STATUS, &status, &length) != 0)
        return -errno;
    *srtt_ms = status.sstat_primary.spinfo_srtt;
    *cwnd = status.sstat_primary.spinfo_cwnd;
    return 0;
}

void moat_sctp_socket_close(struct socket *sock)
{
    if (sock == NULL)
        return;
    usrsctp_set_upcall(sock, NULL, NULL);
    usrsctp_close(sock);
}
