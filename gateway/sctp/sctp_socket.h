/* The usrsctp socket behind an association: created non-blocking on AF_CONN,
 * configured the way WebRTC peers expect, bound and connected. */
#ifndef MOAT_SCTP_SOCKET_H
#define MOAT_SCTP_SOCKET_H

#include <stddef.h>
#include <stdint.h>

struct socket;

/* A one-to-one socket bound to AF_CONN address conn_id and local_port, whose
 * upcall (moat_sctp_mailbox_upcall) gets conn_id as argument. NULL on
 * failure, with a reason in error. */
struct socket *moat_sctp_socket_open(uintptr_t conn_id, uint16_t local_port, char *error,
                                     size_t error_size);

/* Starts the association towards remote_port. 0 or -errno. */
int moat_sctp_socket_connect(struct socket *sock, uintptr_t conn_id, uint16_t remote_port);

/* Bytes in the send queue not yet acknowledged; 0 without an association. */
size_t moat_sctp_socket_buffered_amount(struct socket *sock);

/* Sets SO_SNDBUF and SO_RCVBUF; 0 or -errno. usrsctp reads both limits at
 * every send and every window computation, so they apply to an established
 * association too. */
int moat_sctp_socket_set_buffers(struct socket *sock, size_t send, size_t receive);

/* Largest SCTP packet, common header included (MOAT_SCTP_MTU ..
 * MOAT_SCTP_MAX_MTU), for the association to come and, once it exists, for
 * it. 0 or -errno. */
int moat_sctp_socket_set_mtu(struct socket *sock, size_t mtu);

/* The primary path's smoothed round-trip time (ms) and congestion window
 * (bytes); -errno without an association. */
int moat_sctp_socket_path_status(struct socket *sock, uint32_t *srtt_ms, uint32_t *cwnd);

/* Detaches the upcall and closes the socket, aborting any association. */
void moat_sctp_socket_close(struct socket *sock);

#endif
