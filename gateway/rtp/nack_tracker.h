/* Loss recovery toward a sender (RFC 4585 generic NACK, receiver side):
 * which packets of one RTP stream are missing, when to NACK them (at once,
 * then again about one and a half round trips later), and when to give up
 * (too many tries, or too old for the answer to arrive in time: then a
 * video receiver asks for a keyframe). The round trip is learned from how
 * long a NACK takes to be answered (Karn: first tries only). It also tells
 * a retransmission that repairs a loss from a duplicate of a packet
 * already received. Bounded: at most MOAT_NACK_MAX_MISSING outstanding
 * (the oldest is given up beyond), a gap of more than MOAT_NACK_MAX_GAP
 * is a restart of the stream, not a loss. Pure state; one owner, one
 * thread. */
#ifndef MOAT_RTP_NACK_TRACKER_H
#define MOAT_RTP_NACK_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_NACK_WINDOW       1024 /* sequence numbers remembered as received */
#define MOAT_NACK_MAX_MISSING  256
#define MOAT_NACK_MAX_GAP      500
#define MOAT_NACK_MAX_TRIES    8
#define MOAT_NACK_MAX_AGE_US   1000000u /* a packet later than this is of no use */
#define MOAT_NACK_INITIAL_RTT  100000u
#define MOAT_NACK_MIN_RTT      5000u
#define MOAT_NACK_MIN_RETRY_US 20000u

typedef enum {
    MOAT_NACK_NEW = 0,   /* first arrival of a packet not asked for */
    MOAT_NACK_REPAIRED,  /* first arrival of a packet that was NACKed or missing */
    MOAT_NACK_DUPLICATE, /* received before */
    MOAT_NACK_TOO_OLD,   /* older than the window: cannot tell, of no use */
} moat_nack_verdict;

typedef struct {
    uint16_t seq;
    uint8_t tries;
    uint64_t missing_us; /* when the gap was seen */
    uint64_t sent_us;    /* last NACK, 0 none */
} moat_nack_missing;

typedef struct {
    uint64_t nacked;   /* sequence numbers put in NACKs (each try) */
    uint64_t repaired; /* missing packets that arrived after all */
    uint64_t given_up; /* missing packets dropped from the list */
    uint64_t restarts; /* gaps too large to be losses */
    uint64_t duplicates;
} moat_nack_counters;

typedef struct {
    bool started;
    uint16_t highest;
    uint64_t rtt_us;
    uint64_t received[MOAT_NACK_WINDOW / 64]; /* bit per seq % window */
    moat_nack_missing missing[MOAT_NACK_MAX_MISSING];
    size_t n_missing;  /* in order of sequence */
    size_t overflowed; /* given up for room, not yet reported by due */
    moat_nack_counters counters;
} moat_nack_tracker;

void moat_nack_init(moat_nack_tracker *t);
/* One packet (a first transmission or a retransmission) arrived. */
moat_nack_verdict moat_nack_on_packet(moat_nack_tracker *t, uint16_t seq, uint64_t now_us);
/* The sequence numbers to NACK now (at most `max`, written to `out`),
 * marked as sent; missing packets past hope are dropped, *gave_up says how
 * many (the caller asks for a keyframe). Returns how many were written. */
size_t moat_nack_due(moat_nack_tracker *t, uint64_t now_us, uint16_t *out, size_t max,
                     size_t *gave_up);
uint64_t moat_nack_rtt_us(const moat_nack_tracker *t);

#endif
