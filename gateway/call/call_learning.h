/* How a call leg learns where its party is (issue 20, "Call legs learn
 * endpoints safely"; the "RTP bleed" class): which source a datagram may
 * come from, and whether it latches the leg's destination. Pure decisions
 * over addresses; the leg (call_media.c) commits a latch only after the
 * packet passed its authentication (SDES legs), and resets it only on new
 * signalling. Any thread.
 *
 * [call] learning:
 *   sdp (default)  only packets from the IP address the party's SDP names
 *                  (any port, for NAT); the first one latches the port,
 *                  and the exact SDP address (IP and port), when it
 *                  speaks later, takes the leg over once (a same-IP
 *                  stranger who spoke first keeps nothing).
 *   heuristic      the first sender latches (symmetric RTP as it was).
 *   off            send to the SDP address, accept only exactly it.
 * In every mode a latched leg accepts its latched address alone until new
 * signalling (sdp mode: or its exact SDP address, as above; never a new
 * IP); RTCP latches only to the IP its RTP latched to (before that, sdp
 * mode: the SDP IP; heuristic: nothing); ng asymmetric never latches
 * (strict-source: exactly the SDP address, else the mode's IP rule; the
 * heuristic mode then accepts any source, as before). */
#ifndef MOAT_CALL_LEARNING_H
#define MOAT_CALL_LEARNING_H

#include <netinet/in.h>
#include <stdbool.h>

typedef enum {
    MOAT_CALL_LEARNING_SDP = 0,
    MOAT_CALL_LEARNING_HEURISTIC,
    MOAT_CALL_LEARNING_OFF,
} moat_call_learning;

/* 0, or -1 when text is not sdp, heuristic or off. */
int moat_call_learning_parse(const char *text, moat_call_learning *out);
const char *moat_call_learning_name(moat_call_learning learning);

typedef enum {
    MOAT_CALL_SOURCE_DROP = 0,
    MOAT_CALL_SOURCE_ACCEPT, /* accepted, nothing learned */
    MOAT_CALL_SOURCE_LATCH,  /* accepted; the leg sends to this source from now on */
} moat_call_source_verdict;

typedef struct {
    moat_call_learning learning;
    bool latching;      /* symmetric RTP (not ng asymmetric) */
    bool strict_source; /* ng strict-source */
    bool rtcp;          /* the flow is RTCP on its own socket */
    /* The flow's SDP address; sin6_family != AF_INET6: none (not known, hold). */
    const struct sockaddr_in6 *sdp;
    /* Where the flow latched; NULL: not latched. */
    const struct sockaddr_in6 *latched;
    /* RTCP: the address its RTP latched to; NULL: RTP not latched. */
    const struct sockaddr_in6 *rtp_latched;
} moat_call_source_rule;

moat_call_source_verdict moat_call_source_decide(const moat_call_source_rule *rule,
                                                 const struct sockaddr_in6 *from);

bool moat_call_same_address(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b);
bool moat_call_same_ip(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b);

#endif
