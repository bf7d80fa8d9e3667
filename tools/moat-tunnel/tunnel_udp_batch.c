/* moat-tunnel's UDP send batch (sendmmsg, UDP GSO) and batched reads
 * (recvmmsg): see tunnel_udp_batch.h. */
#include "tunnel_udp_batch.h"

#include <errno.h>
#include <glib.h>
#include <string.h>
#include <sys/uio.h>

tunnel_udp_batch *tunnel_udp_batch_new(int fd)
{
    tunnel_udp_batch *b = g_malloc0(sizeof *b);
    tunnel_udp_batch_set_fd(b, fd);
    return b;
}

void tunnel_udp_batch_set_fd(tunnel_udp_batch *b, int fd)
{
    if (b->fd == fd && b->count == 0)
        return;
    tunnel_udp_batch_flush(b);
    b->fd = fd;
    b->gso = fd >= 0 && moat_udp_gso_supported(fd);
}

/* Sends the plan; returns the first datagram still to send (the batch's end
 * when all left or were refused one by one), clearing *gso when the kernel
 * refused a GSO message (its datagrams then go one by one). */
static unsigned send_plan(tunnel_udp_batch *b, bool *gso)
{
    moat_udp_gso_plan *plan = &b->plan;
    unsigned m = 0;
    while (m < plan->length) {
        int n = sendmmsg(b->fd, &plan->headers[m], plan->length - m, 0);
        if (n > 0) {
            m += (unsigned)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (plan->count[m] > 1) {
            if (errno != EMSGSIZE)
                b->gso = false;
            *gso = false;
            return plan->first[m];
        }
        /* This datagram was refused (the socket is full: SCTP sends it
         * again, as after a loss on the path). */
        b->dropped++;
        m++;
    }
    return b->count;
}

void tunnel_udp_batch_flush(tunnel_udp_batch *b)
{
    unsigned next = 0;
    bool gso = b->gso;
    while (next < b->count && b->fd >= 0) {
        moat_udp_gso_plan_batch(&b->plan, b->headers, next, b->count, gso);
        next = send_plan(b, &gso);
    }
    b->count = 0;
}

void tunnel_udp_batch_add(tunnel_udp_batch *b, const uint8_t *data, size_t length,
                          const struct sockaddr_in6 *to)
{
    if (length > TUNNEL_UDP_SLOT) {
        tunnel_udp_batch_flush(b);
        if (sendto(b->fd, data, length, 0, (const struct sockaddr *)to, sizeof *to) < 0)
            b->dropped++;
        return;
    }
    if (b->count == TUNNEL_UDP_BATCH)
        tunnel_udp_batch_flush(b);
    unsigned i = b->count++;
    memcpy(b->data[i], data, length);
    b->to[i] = *to;
    b->vectors[i] = (struct iovec){.iov_base = b->data[i], .iov_len = length};
    b->headers[i] = (struct mmsghdr){.msg_hdr = {.msg_name = &b->to[i],
                                                 .msg_namelen = sizeof b->to[i],
                                                 .msg_iov = &b->vectors[i],
                                                 .msg_iovlen = 1}};
}

unsigned tunnel_udp_read(int fd, tunnel_udp_reads *r, unsigned max)
{
    if (max == 0 || max > TUNNEL_UDP_READ_BATCH)
        max = TUNNEL_UDP_READ_BATCH;
    for (unsigned i = 0; i < max; i++) {
        r->vectors[i] = (struct iovec){.iov_base = r->data[i], .iov_len = sizeof r->data[i]};
        r->headers[i] = (struct mmsghdr){.msg_hdr = {.msg_name = &r->from[i],
                                                     .msg_namelen = sizeof r->from[i],
                                                     .msg_iov = &r->vectors[i],
                                                     .msg_iovlen = 1}};
    }
    int n;
    do
        n = recvmmsg(fd, r->headers, max, MSG_DONTWAIT, NULL);
    while (n < 0 && errno == EINTR);
    return n > 0 ? (unsigned)n : 0;
}
