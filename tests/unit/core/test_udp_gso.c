/* Planning a send batch into UDP GSO messages (udp_gso.c): which neighbours
 * join a run (same destination, same source, one size with a shorter last,
 * adjacent iovecs, within the kernel's segment and byte limits) and what a
 * GSO message carries (the run's iovecs, the original control data, then
 * UDP_SEGMENT with the segment size). */
#include "engine/udp_gso.h"

#include <netinet/in.h>
#include <netinet/udp.h>
#include <string.h>

#include <glib.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

typedef struct {
    struct mmsghdr headers[MOAT_UDP_GSO_MAX_BATCH];
    struct iovec vectors[MOAT_UDP_GSO_MAX_BATCH];
    struct sockaddr_in6 addresses[MOAT_UDP_GSO_MAX_BATCH];
    char controls[MOAT_UDP_GSO_MAX_BATCH][64];
    unsigned count;
} batch;

static void add(batch *b, size_t length, uint16_t port, uint8_t source)
{
    unsigned i = b->count++;
    memset(&b->addresses[i], 0, sizeof b->addresses[i]);
    b->addresses[i].sin6_family = AF_INET6;
    b->addresses[i].sin6_port = htons(port);
    b->vectors[i] = (struct iovec){.iov_base = NULL, .iov_len = length};
    memset(&b->headers[i], 0, sizeof b->headers[i]);
    struct msghdr *m = &b->headers[i].msg_hdr;
    m->msg_name = &b->addresses[i];
    m->msg_namelen = sizeof b->addresses[i];
    m->msg_iov = &b->vectors[i];
    m->msg_iovlen = 1;
    if (source != 0) {
        /* Stands in for the packet info a reply's source address takes. */
        memset(b->controls[i], 0, sizeof b->controls[i]);
        struct cmsghdr *c = (struct cmsghdr *)b->controls[i];
        c->cmsg_level = IPPROTO_IP;
        c->cmsg_type = IP_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof(struct in_pktinfo));
        CMSG_DATA(c)[4] = source;
        m->msg_control = b->controls[i];
        m->msg_controllen = CMSG_SPACE(sizeof(struct in_pktinfo));
    }
}

static void assert_plan(const moat_udp_gso_plan *plan, const unsigned *counts, unsigned n)
{
    g_assert_cmpuint(plan->length, ==, n);
    unsigned first = 0;
    for (unsigned i = 0; i < n; i++) {
        g_assert_cmpuint(plan->first[i], ==, first);
        g_assert_cmpuint(plan->count[i], ==, counts[i]);
        g_assert_cmpuint(plan->headers[i].msg_hdr.msg_iovlen, ==, counts[i]);
        first += counts[i];
    }
}

static uint16_t segment_of(const struct msghdr *m)
{
    uint16_t segment = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)m); c;
         c = CMSG_NXTHDR((struct msghdr *)m, c)) {
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_SEGMENT)
            memcpy(&segment, CMSG_DATA(c), sizeof segment);
    }
    return segment;
}

static void test_runs(void)
{
    static batch b;
    memset(&b, 0, sizeof b);
    add(&b, 1200, 1, 0); /* 0-2: one run, the last shorter */
    add(&b, 1200, 1, 0);
    add(&b, 700, 1, 0);
    add(&b, 1200, 1, 0); /* 3: a shorter one ended the run before */
    add(&b, 1200, 2, 0); /* 4-5: another destination */
    add(&b, 1200, 2, 0);
    add(&b, 1200, 2, 7); /* 6-7: the same destination from another source */
    add(&b, 1200, 2, 7);
    add(&b, 1200, 2, 8); /* 8: yet another source */
    add(&b, 100, 2, 8);  /* 9: shorter, joins 8 */
    add(&b, 200, 2, 8);  /* 10: longer than the run it follows */
    moat_udp_gso_plan plan;
    moat_udp_gso_plan_batch(&plan, b.headers, 0, b.count, true);
    static const unsigned counts[] = {3, 1, 2, 2, 2, 1};
    assert_plan(&plan, counts, G_N_ELEMENTS(counts));
    /* A run keeps its destination and its source, and says its size. */
    const struct msghdr *m = &plan.headers[3].msg_hdr;
    g_assert_true(m->msg_name == &b.addresses[6]);
    g_assert_true(m->msg_iov == &b.vectors[6]);
    g_assert_cmpuint(segment_of(m), ==, 1200);
    const struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)m);
    g_assert_cmpint(c->cmsg_type, ==, IP_PKTINFO);
    g_assert_cmpuint(CMSG_DATA(c)[4], ==, 7);
    g_assert_cmpuint(segment_of(&plan.headers[0].msg_hdr), ==, 1200);
    /* A datagram alone goes as it was. */
    g_assert_true(plan.headers[1].msg_hdr.msg_control == NULL);
    g_assert_cmpuint(segment_of(&plan.headers[5].msg_hdr), ==, 0);
    /* Without GSO, and from the middle of a batch: one message each. */
    moat_udp_gso_plan_batch(&plan, b.headers, 4, b.count, false);
    g_assert_cmpuint(plan.length, ==, b.count - 4);
    g_assert_cmpuint(plan.first[0], ==, 4);
    moat_udp_gso_plan_batch(&plan, b.headers, 4, b.count, true);
    static const unsigned from_four[] = {2, 2, 2, 1};
    g_assert_cmpuint(plan.first[0], ==, 4);
    g_assert_cmpuint(plan.length, ==, G_N_ELEMENTS(from_four));
    for (unsigned i = 0; i < plan.length; i++)
        g_assert_cmpuint(plan.count[i], ==, from_four[i]);
}

static void test_limits(void)
{
    static batch b;
    /* Bytes: 1400-byte datagrams stop below 65000 bytes (46 of them). */
    memset(&b, 0, sizeof b);
    for (unsigned i = 0; i < 50; i++)
        add(&b, 1400, 1, 0);
    moat_udp_gso_plan plan;
    moat_udp_gso_plan_batch(&plan, b.headers, 0, b.count, true);
    static const unsigned by_bytes[] = {46, 4};
    assert_plan(&plan, by_bytes, G_N_ELEMENTS(by_bytes));
    /* Segments: 64 small ones at most. */
    memset(&b, 0, sizeof b);
    for (unsigned i = 0; i < MOAT_UDP_GSO_MAX_BATCH; i++)
        add(&b, 100, 1, 0);
    moat_udp_gso_plan_batch(&plan, b.headers, 0, b.count, true);
    static const unsigned by_segments[] = {MOAT_UDP_GSO_MAX_SEGMENTS};
    assert_plan(&plan, by_segments, G_N_ELEMENTS(by_segments));
    /* Over the segment limit, empty, or not adjacent in memory: alone. */
    memset(&b, 0, sizeof b);
    add(&b, MOAT_UDP_GSO_MAX_SEGMENT + 1, 1, 0);
    add(&b, MOAT_UDP_GSO_MAX_SEGMENT + 1, 1, 0);
    add(&b, 0, 1, 0);
    add(&b, 0, 1, 0);
    add(&b, 500, 1, 0);
    add(&b, 500, 1, 0);
    b.headers[5].msg_hdr.msg_iov = &b.vectors[0];
    moat_udp_gso_plan_batch(&plan, b.headers, 0, b.count, true);
    g_assert_cmpuint(plan.length, ==, 6);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/udp-gso/runs", test_runs);
    g_test_add_func("/udp-gso/limits", test_limits);
    return g_test_run();
}
