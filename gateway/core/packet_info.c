#include "core/packet_info.h"

#include <string.h>

int moat_packet_info_enable(int fd)
{
    int on = 1;
    if (setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof on) != 0)
        return -1;
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
