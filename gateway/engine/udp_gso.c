/* Groups a send batch into UDP GSO messages (udp_gso.h). */
#include "engine/udp_gso.h"

#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef SOL_UDP
#define SOL_UDP 17
#endif

bool moat_udp_gso_supported(int fd)
{
    int size = 0;
    socklen_t length = sizeof size;
    return getsockopt(fd, SOL_UDP, UDP_SEGMENT, &size, &length) == 0;
}

static bool same_route(const struct msghdr *a, const struct msghdr *b)
{
    return a->msg_namelen == b->msg_namelen &&
           (a->msg_namelen == 0 || memcmp(a->msg_name, b->msg_name, a->msg_namelen) == 0) &&
           a->msg_controllen == b->msg_controllen &&
           (a->msg_controllen == 0 ||
            memcmp(a->msg_control, b->msg_control, a->msg_controllen) == 0);
}

/* How many datagrams from batch[at] can leave as one GSO message. */
static unsigned run_length(const struct mmsghdr *batch, unsigned at, unsigned end)
{
    const struct msghdr *first = &batch[at].msg_hdr;
    size_t segment = first->msg_iov[0].iov_len;
    if (segment == 0 || segment > MOAT_UDP_GSO_MAX_SEGMENT)
        return 1;
    size_t total = segment;
    unsigned n = 1;
    while (at + n < end && n < MOAT_UDP_GSO_MAX_SEGMENTS) {
        const struct msghdr *next = &batch[at + n].msg_hdr;
        size_t length = next->msg_iovlen == 1 ? next->msg_iov[0].iov_len : 0;
        /* The kernel reads the run's payload from one iovec array. */
        if (length == 0 || length > segment || next->msg_iov != first->msg_iov + n ||
            total + length > MOAT_UDP_GSO_MAX_BYTES || !same_route(first, next))
            break;
        total += length;
        n++;
        if (length < segment)
            break; /* only the last may be shorter */
    }
    return n;
}

static void add_gso_message(moat_udp_gso_plan *plan, const struct mmsghdr *batch, unsigned at,
                            unsigned n)
{
    unsigned i = plan->length;
    const struct msghdr *first = &batch[at].msg_hdr;
    struct msghdr *m = &plan->headers[i].msg_hdr;
    *m = *first;
    m->msg_iovlen = n;
    moat_udp_gso_control *control = &plan->controls[i];
    memset(control, 0, sizeof *control);
    if (first->msg_controllen > 0)
        memcpy(control->bytes, first->msg_control, first->msg_controllen);
    m->msg_control = control->bytes;
    m->msg_controllen = first->msg_controllen + CMSG_SPACE(sizeof(uint16_t));
    /* The appended header starts where the copied control data ends. */
    struct cmsghdr *c = (struct cmsghdr *)(control->bytes + first->msg_controllen);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    uint16_t segment = (uint16_t)first->msg_iov[0].iov_len;
    memcpy(CMSG_DATA(c), &segment, sizeof segment);
    plan->headers[i].msg_len = 0;
    plan->first[i] = (uint8_t)at;
    plan->count[i] = (uint8_t)n;
    plan->length++;
}

void moat_udp_gso_plan_batch(moat_udp_gso_plan *plan, const struct mmsghdr *batch, unsigned from,
                             unsigned count, bool gso)
{
    plan->length = 0;
    if (count > MOAT_UDP_GSO_MAX_BATCH)
        count = MOAT_UDP_GSO_MAX_BATCH;
    unsigned at = from;
    while (at < count) {
        unsigned n = gso && batch[at].msg_hdr.msg_iovlen == 1 ? run_length(batch, at, count) : 1;
        if (n > 1) {
            add_gso_message(plan, batch, at, n);
        } else {
            unsigned i = plan->length++;
            plan->headers[i] = batch[at];
            plan->first[i] = (uint8_t)at;
            plan->count[i] = 1;
        }
        at += n;
    }
}
