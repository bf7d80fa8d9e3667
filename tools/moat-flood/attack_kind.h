/* The attack classes moat-flood sends and what each needs. Each class is
 * built so that every datagram reaches exactly one of the gateway's drop
 * counters. */
#ifndef ATTACK_KIND_H
#define ATTACK_KIND_H

#include <stdbool.h>

typedef enum {
    ATTACK_FORGED_OWN,       /* forged SRTP, live SSRC, from the session's own socket */
    ATTACK_FORGED_SPOOFED,   /* the same, from a raw socket spoofing the session's address */
    ATTACK_RANDOM_SSRC,      /* forged SRTP with SSRCs nobody declared */
    ATTACK_REPLAY,           /* captured legitimate SRTP packets sent again */
    ATTACK_FORGED_RTCP,      /* forged SRTCP compound packets */
    ATTACK_STUN_FLOOD,       /* Binding requests for ufrags that do not exist */
    ATTACK_DTLS_HELLO_FLOOD, /* DTLS ClientHellos from fresh source ports */
    ATTACK_MALFORMED,        /* datagrams no RFC 7983 demultiplexer accepts */
    ATTACK_KIND_COUNT
} attack_kind;

/* "forged-own", ... as on the command line and in reports. */
const char *attack_kind_name(attack_kind kind);
/* false when the name is unknown. */
bool attack_kind_from_name(const char *name, attack_kind *out);
/* Classes sent on a live WHIP session's 5-tuple. */
bool attack_kind_needs_session(attack_kind kind);
/* What the class does, for --help. */
const char *attack_kind_description(attack_kind kind);

#endif
