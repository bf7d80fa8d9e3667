/* Shared state of build/bench/voip_load, the load generator of bench/voip:
 * the calls it sets up over ng and relays media through, and the clock.
 * One thread owns everything; no locking. */
#ifndef VOIP_LOAD_H
#define VOIP_LOAD_H

#include <netinet/in.h>
#include <stdint.h>
#include <time.h>

#define VOIP_MAX_CALLS     20000u
#define VOIP_HOSTS_PER_NET 250u

/* Where a call stands in the ng exchange. */
typedef enum {
    CALL_IDLE,
    CALL_OFFERED,  /* offer sent, no reply yet */
    CALL_ANSWERED, /* answer sent, no reply yet */
    CALL_READY,    /* both legs known: media may flow */
    CALL_DELETING,
    CALL_DELETED,
    CALL_FAILED,
} call_state;

/* One call: side 0 is the caller, side 1 the callee. Each side has its own
 * loopback address (127.1.x.y caller, 127.2.x.y callee, same port), so a
 * single socket carries every call and a datagram's destination address says
 * which call and side it belongs to. to_relay[s] is where side s sends. */
typedef struct {
    struct sockaddr_in to_relay[2];
    call_state state;
    unsigned tries;
    uint64_t deadline_ns;
} voip_call;

static inline uint64_t voip_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/* The loopback address of call `index`, side `side` (0 or 1). */
static inline struct in_addr voip_side_address(unsigned index, unsigned side)
{
    uint32_t a = 127u << 24 | (1u + side) << 16 | (index / VOIP_HOSTS_PER_NET) << 8 |
                 (1u + index % VOIP_HOSTS_PER_NET);
    return (struct in_addr){.s_addr = htonl(a)};
}

/* The inverse: 0 and the call and side when `address` is one of ours. */
static inline int voip_address_side(struct in_addr address, unsigned calls, unsigned *index,
                                    unsigned *side)
{
    uint32_t a = ntohl(address.s_addr);
    unsigned net = a >> 16 & 0xff, host = a & 0xff;
    if (a >> 24 != 127 || net < 1 || net > 2 || host < 1 || host > VOIP_HOSTS_PER_NET)
        return -1;
    unsigned i = (a >> 8 & 0xff) * VOIP_HOSTS_PER_NET + host - 1;
    if (i >= calls)
        return -1;
    *index = i;
    *side = net - 1;
    return 0;
}

#endif
