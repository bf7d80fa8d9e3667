/* Local addresses of datagrams on the dual-stack media socket: which of the
 * host's addresses a datagram arrived on (IP_PKTINFO / IPV6_PKTINFO), and
 * setting the source of a reply to that same address. IPv4 traffic appears
 * as v4-mapped IPv6 addresses throughout. */
#ifndef MOAT_PACKET_INFO_H
#define MOAT_PACKET_INFO_H

#include <netinet/in.h>
#include <sys/socket.h>

#include <stdbool.h>
#include <stdint.h>

/* Control buffer big enough for either kind of packet info and a receive
 * timestamp. */
typedef union {
    char bytes[128];
    struct cmsghdr align;
} moat_packet_info_buffer;

/* Packet info and kernel receive timestamps (SO_TIMESTAMPNS). */
int moat_packet_info_enable(int fd);
/* The kernel's receive time of a message (CLOCK_REALTIME, microseconds);
 * false when the control data carries none. */
bool moat_packet_info_get_arrival(const struct msghdr *message, uint64_t *realtime_us);
/* The socket's running count of datagrams the kernel dropped, as of this
 * message's queueing (SO_RXQ_OVFL, set on the socket by its owner); false
 * when the control data carries none. */
bool moat_packet_info_get_queue_drops(const struct msghdr *message, uint32_t *drops);
/* Reads the destination address from a received message's control data;
 * leaves `local` zeroed (the unspecified address) when there is none. */
void moat_packet_info_get_destination(const struct msghdr *message, struct in6_addr *local);
/* Makes `message` leave from `local` (nothing is set for ::). */
void moat_packet_info_set_source(struct msghdr *message, moat_packet_info_buffer *buffer,
                                 const struct in6_addr *local);

#endif
