/* UDP segmentation offload (UDP_SEGMENT, Linux 4.18) for a send batch:
 * consecutive datagrams to the same destination, from the same source, of
 * one size (the last of a run may be shorter) leave as one message of the
 * sendmmsg, which the kernel (or the NIC) cuts back into the same datagrams.
 * A data channel's DTLS records are such runs: one route lookup, one socket
 * buffer and one trip down the stack per run instead of per datagram.
 *
 * Pure planning over the caller's arrays: no state, any thread. */
#ifndef MOAT_UDP_GSO_H
#define MOAT_UDP_GSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Datagrams per GSO message: the kernel's UDP_MAX_SEGMENTS. */
#define MOAT_UDP_GSO_MAX_SEGMENTS 64
/* Payload of one GSO message: under the 65507 bytes of one IPv4 datagram. */
#define MOAT_UDP_GSO_MAX_BYTES 65000u
/* Larger datagrams are not grouped: the kernel refuses a segment size that
 * the path's MTU cannot carry unfragmented (where a plain send fragments);
 * 1452 bytes fit IPv6 and IPv4 over a 1500-byte MTU. */
#define MOAT_UDP_GSO_MAX_SEGMENT 1452u
/* Largest batch a plan covers. */
#define MOAT_UDP_GSO_MAX_BATCH 64

/* The original message's control data (packet info), then UDP_SEGMENT. */
typedef union {
    char bytes[192];
    struct cmsghdr align;
} moat_udp_gso_control;

/* The messages for one sendmmsg: message i sends datagrams
 * [first[i], first[i] + count[i]) of the batch. */
typedef struct {
    struct mmsghdr headers[MOAT_UDP_GSO_MAX_BATCH];
    moat_udp_gso_control controls[MOAT_UDP_GSO_MAX_BATCH];
    uint8_t first[MOAT_UDP_GSO_MAX_BATCH];
    uint8_t count[MOAT_UDP_GSO_MAX_BATCH];
    unsigned length;
} moat_udp_gso_plan;

/* Whether the kernel knows UDP_SEGMENT on this socket. */
bool moat_udp_gso_supported(int fd);

/* Plans batch[from, count) (at most MOAT_UDP_GSO_MAX_BATCH datagrams, each
 * message with exactly one iovec) into plan. With gso false, or for a
 * datagram no neighbour can join, a message is a copy of the datagram's own
 * header. The plan points into batch's iovecs, names and control data: they
 * must stay as they are until it is sent. */
void moat_udp_gso_plan_batch(moat_udp_gso_plan *plan, const struct mmsghdr *batch, unsigned from,
                             unsigned count, bool gso);

#endif
