/* moat-tunnel's UDP socket in batches: datagrams to send wait in a batch
 * that leaves with one sendmmsg (runs of equal-sized datagrams to one
 * address as one UDP_SEGMENT message where the kernel knows GSO,
 * engine/udp_gso.h), and datagrams are read with recvmmsg. Per IP packet
 * this saves the system call and, with GSO, the trip down the stack that a
 * sendto per DTLS record costs.
 *
 * One thread (the link's loop) owns a batch; it is heap memory (about
 * 100 KiB for sending, 270 KiB for receiving). */
#ifndef TUNNEL_UDP_BATCH_H
#define TUNNEL_UDP_BATCH_H

#include "engine/udp_gso.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define TUNNEL_UDP_BATCH      64
#define TUNNEL_UDP_SLOT       1500 /* larger datagrams leave at once, in order */
#define TUNNEL_UDP_READ_BATCH 16
#define TUNNEL_UDP_READ_SIZE  (16384 + 256)

typedef struct {
    int fd;
    bool gso; /* the socket knows UDP_SEGMENT (cleared when it refuses) */
    unsigned count;
    uint64_t dropped; /* refused by the kernel (socket full, no route) */
    struct sockaddr_in6 to[TUNNEL_UDP_BATCH];
    struct iovec vectors[TUNNEL_UDP_BATCH];
    struct mmsghdr headers[TUNNEL_UDP_BATCH];
    moat_udp_gso_plan plan;
    uint8_t data[TUNNEL_UDP_BATCH][TUNNEL_UDP_SLOT];
} tunnel_udp_batch;

typedef struct {
    struct sockaddr_in6 from[TUNNEL_UDP_READ_BATCH];
    struct iovec vectors[TUNNEL_UDP_READ_BATCH];
    struct mmsghdr headers[TUNNEL_UDP_READ_BATCH];
    uint8_t data[TUNNEL_UDP_READ_BATCH][TUNNEL_UDP_READ_SIZE];
} tunnel_udp_reads;

/* A batch for fd (g_free it after tunnel_udp_batch_flush). */
tunnel_udp_batch *tunnel_udp_batch_new(int fd);
/* The socket changed (an ICE restart's new one): what waits is flushed to
 * the old one first. */
void tunnel_udp_batch_set_fd(tunnel_udp_batch *b, int fd);
/* Queues one datagram to `to` (flushing first when the batch is full; a
 * datagram over TUNNEL_UDP_SLOT is sent at once, after what waits). */
void tunnel_udp_batch_add(tunnel_udp_batch *b, const uint8_t *data, size_t length,
                          const struct sockaddr_in6 *to);
/* Sends what waits. */
void tunnel_udp_batch_flush(tunnel_udp_batch *b);

/* Reads up to max (at most TUNNEL_UDP_READ_BATCH) datagrams from fd: their count (0 when
 * none waits). Datagram i is r->data[i], r->headers[i].msg_len bytes, from
 * r->from[i]. */
unsigned tunnel_udp_read(int fd, tunnel_udp_reads *r, unsigned max);

#endif
