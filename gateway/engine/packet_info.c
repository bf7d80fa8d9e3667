/* The local address a datagram arrived on, and replies from it (packet_info.h). */
#include "engine/packet_info.h"

#include <string.h>
#include <time.h>

int moat_packet_info_enable(int fd)
{
    int on = 1;
    if (setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof on) != 0)
        return -1;
    /* Arrival times let the detectors measure the wire's rate even when the
     * worker reads a backlog late; without them they fall back to the wake
     * time, so a failure here is not fatal. */
    (void)setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    /* IPv4 datagrams on a dual-stack socket report through IP_PKTINFO. */
    return setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof on);
}

void moat_packet_info_get_destination(const struct msghdr *message, struct in6_addr *local)
{
    memset(local, 0, sizeof *local);
    for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)message); c;
         c = CMSG_NXTHDR((struct msghdr *)message, c)) {
        if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO &&
            c->cmsg_len >= CMSG_LEN(sizeof(struct in6_pktinfo))) {
            struct in6_pktinfo info;
            memcpy(&info, CMSG_DATA(c), sizeof info);
            *local = info.ipi6_addr;
            return;
        }
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO &&
            c->cmsg_len >= CMSG_LEN(sizeof(struct in_pktinfo))) {
            struct in_pktinfo info;
            memcpy(&info, CMSG_DATA(c), sizeof info);
            local->s6_addr[10] = 0xff;
            local->s6_addr[11] = 0xff;
            memcpy(&local->s6_addr[12], &info.ipi_addr, 4);
            return;
        }
    }
}

bool moat_packet_info_get_arrival(const struct msghdr *message, uint64_t *realtime_us)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)message); c;
         c = CMSG_NXTHDR((struct msghdr *)message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS ||
            c->cmsg_len < CMSG_LEN(sizeof(struct timespec)))
            continue;
        struct timespec stamp;
        memcpy(&stamp, CMSG_DATA(c), sizeof stamp);
        if (stamp.tv_sec < 0 || stamp.tv_nsec < 0)
            return false;
        *realtime_us = (uint64_t)stamp.tv_sec * 1000000u + (uint64_t)stamp.tv_nsec / 1000u;
        return true;
    }
    return false;
}

bool moat_packet_info_get_queue_drops(const struct msghdr *message, uint32_t *drops)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)message); c;
         c = CMSG_NXTHDR((struct msghdr *)message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SO_RXQ_OVFL ||
            c->cmsg_len < CMSG_LEN(sizeof(uint32_t)))
            continue;
        memcpy(drops, CMSG_DATA(c), sizeof *drops);
        return true;
    }
    return false;
}

void moat_packet_info_set_source(struct msghdr *message, moat_packet_info_buffer *buffer,
                                 const struct in6_addr *local)
{
    if (IN6_IS_ADDR_UNSPECIFIED(local)) {
        message->msg_control = NULL;
        message->msg_controllen = 0;
        return;
    }
    memset(buffer, 0, sizeof *buffer);
    message->msg_control = buffer->bytes;
    if (IN6_IS_ADDR_V4MAPPED(local)) {
        message->msg_controllen = CMSG_SPACE(sizeof(struct in_pktinfo));
        struct cmsghdr *c = CMSG_FIRSTHDR(message);
        c->cmsg_level = IPPROTO_IP;
        c->cmsg_type = IP_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof(struct in_pktinfo));
        struct in_pktinfo info;
        memset(&info, 0, sizeof info);
        memcpy(&info.ipi_spec_dst, &local->s6_addr[12], 4);
        memcpy(CMSG_DATA(c), &info, sizeof info);
    } else {
        message->msg_controllen = CMSG_SPACE(sizeof(struct in6_pktinfo));
        struct cmsghdr *c = CMSG_FIRSTHDR(message);
        c->cmsg_level = IPPROTO_IPV6;
        c->cmsg_type = IPV6_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof(struct in6_pktinfo));
        struct in6_pktinfo info;
        memset(&info, 0, sizeof info);
        info.ipi6_addr = *local;
        memcpy(CMSG_DATA(c), &info, sizeof info);
    }
}
