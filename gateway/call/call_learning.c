/* Owns the source and latching decisions of call legs (call_learning.h). */
#include "call/call_learning.h"

#include <string.h>

int moat_call_learning_parse(const char *text, moat_call_learning *out)
{
    if (!text)
        return -1;
    if (strcmp(text, "sdp") == 0)
        *out = MOAT_CALL_LEARNING_SDP;
    else if (strcmp(text, "heuristic") == 0)
        *out = MOAT_CALL_LEARNING_HEURISTIC;
    else if (strcmp(text, "off") == 0)
        *out = MOAT_CALL_LEARNING_OFF;
    else
        return -1;
    return 0;
}

const char *moat_call_learning_name(moat_call_learning learning)
{
    switch (learning) {
    case MOAT_CALL_LEARNING_HEURISTIC:
        return "heuristic";
    case MOAT_CALL_LEARNING_OFF:
        return "off";
    default:
        return "sdp";
    }
}

bool moat_call_same_ip(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b)
{
    return a->sin6_family == AF_INET6 && b->sin6_family == AF_INET6 &&
           memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
}

bool moat_call_same_address(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b)
{
    return moat_call_same_ip(a, b) && a->sin6_port == b->sin6_port;
}

static bool known(const struct sockaddr_in6 *address)
{
    return address && address->sin6_family == AF_INET6;
}

/* Without latching (off, asymmetric): nothing is learned. */
static moat_call_source_verdict fixed(const moat_call_source_rule *rule,
                                      const struct sockaddr_in6 *from)
{
    if (rule->learning == MOAT_CALL_LEARNING_OFF || rule->strict_source)
        return known(rule->sdp) && moat_call_same_address(rule->sdp, from) ? MOAT_CALL_SOURCE_ACCEPT
                                                                           : MOAT_CALL_SOURCE_DROP;
    if (rule->learning == MOAT_CALL_LEARNING_HEURISTIC)
        return MOAT_CALL_SOURCE_ACCEPT;
    return known(rule->sdp) && moat_call_same_ip(rule->sdp, from) ? MOAT_CALL_SOURCE_ACCEPT
                                                                  : MOAT_CALL_SOURCE_DROP;
}

/* sdp mode: a leg latched to another port of its SDP's IP (NAT, or a
 * stranger on the party's host or behind its NAT who spoke first) moves to
 * the exact address its SDP names when that speaks: the address signalling
 * named, on the same IP. Never away from it, never to a new IP. */
static bool sdp_address_takes_over(const moat_call_source_rule *rule,
                                   const struct sockaddr_in6 *from)
{
    return rule->latching && rule->learning == MOAT_CALL_LEARNING_SDP && known(rule->sdp) &&
           moat_call_same_address(rule->sdp, from) &&
           !moat_call_same_address(rule->sdp, rule->latched);
}

moat_call_source_verdict moat_call_source_decide(const moat_call_source_rule *rule,
                                                 const struct sockaddr_in6 *from)
{
    if (rule->latched) {
        if (moat_call_same_address(rule->latched, from))
            return MOAT_CALL_SOURCE_ACCEPT;
        return sdp_address_takes_over(rule, from) ? MOAT_CALL_SOURCE_LATCH : MOAT_CALL_SOURCE_DROP;
    }
    if (!rule->latching || rule->learning == MOAT_CALL_LEARNING_OFF)
        return fixed(rule, from);
    /* RTCP follows RTP: only the IP its RTP latched to. */
    if (rule->rtcp && rule->rtp_latched)
        return moat_call_same_ip(rule->rtp_latched, from) ? MOAT_CALL_SOURCE_LATCH
                                                          : MOAT_CALL_SOURCE_DROP;
    if (rule->learning == MOAT_CALL_LEARNING_HEURISTIC)
        return rule->rtcp ? MOAT_CALL_SOURCE_DROP : MOAT_CALL_SOURCE_LATCH;
    return known(rule->sdp) && moat_call_same_ip(rule->sdp, from) ? MOAT_CALL_SOURCE_LATCH
                                                                  : MOAT_CALL_SOURCE_DROP;
}
