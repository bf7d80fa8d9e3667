/* Datagram Packetization Layer Path MTU Discovery (RFC 8899) for one SCTP
 * association over DTLS: the state machine of RFC 8899 §5.2, as pure logic.
 * It does no I/O and reads no clock: the owner feeds it the time and the
 * events (association up, probe acknowledged, loss suspected) and asks it
 * which probe to send now (moat_plpmtud_poll), when to call again
 * (moat_plpmtud_deadline) and what the PLPMTU is. Probes themselves are
 * built and recognised by sctp_probe.c.
 *
 * Sizes are whole SCTP packets (common header included), the unit of
 * moat_sctp_association_set_mtu. The search starts from the base (1200
 * bytes, what browsers use; never less) and probes the maximum and three
 * evenly spaced sizes below it (plus common link MTUs' sizes) at once, so a
 * path that carries the maximum (loopback) is confirmed in one round trip,
 * and every round that confirms nothing new narrows the interval fivefold.
 * A size is known too big once MAX_PROBES probes of its round went
 * unacknowledged, PROBE_TIMER apart. Probes are HEARTBEATs, outside SCTP's
 * congestion control (RFC 8899 §4.1): their rate is bounded instead, at
 * most ROUND_SIZES per PROBE_TIMER while searching, two per
 * CONFIRMATION_TIMER after.
 *
 * Threading: none of its own; one owner (the association's thread). */
#ifndef MOAT_SCTP_PLPMTUD_H
#define MOAT_SCTP_PLPMTUD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* BASE_PLPMTU: the size every path is assumed to carry (MOAT_SCTP_MTU). */
#define MOAT_PLPMTUD_BASE 1200u
/* Largest size ever probed: a DTLS record's plaintext (MOAT_SCTP_MAX_MTU). */
#define MOAT_PLPMTUD_MAX 16384u
/* Probes of one round sent before its unacknowledged sizes count as too big
 * (RFC 8899 §5.1.2 MAX_PROBES). */
#define MOAT_PLPMTUD_MAX_PROBES 3u
/* Time a probe has to be acknowledged (RFC 8899 §5.1.1: not less than 1 s). */
#define MOAT_PLPMTUD_PROBE_TIMER_US 1000000
/* Time in SEARCH_COMPLETE before probing for a larger PMTU again (RFC 8899
 * §5.1.1 PMTU_RAISE_TIMER). */
#define MOAT_PLPMTUD_RAISE_TIMER_US 600000000LL
/* Time in SEARCH_COMPLETE between probes of the PLPMTU itself, which detect
 * a path that no longer carries it even when no loss was reported (RFC 8899
 * §5.1.1 CONFIRMATION_TIMER). */
#define MOAT_PLPMTUD_CONFIRMATION_TIMER_US 30000000LL
/* The search ends when the largest confirmed size is this close to the
 * smallest size known too big. Probe sizes are multiples of 4 (SCTP chunks
 * are padded to 4 bytes). */
#define MOAT_PLPMTUD_GRANULARITY 16u
/* Sizes probed at once in one round, at most. */
#define MOAT_PLPMTUD_ROUND_SIZES 6u

typedef enum {
    MOAT_PLPMTUD_DISABLED,        /* before start, or max <= base: PLPMTU is the base */
    MOAT_PLPMTUD_BASE_STATE,      /* black hole detected: waiting to search again */
    MOAT_PLPMTUD_SEARCHING,       /* rounds of probes between PLPMTU and the failed size */
    MOAT_PLPMTUD_SEARCH_COMPLETE, /* PLPMTU found; confirmation and raise timers run */
} moat_plpmtud_state;

typedef struct {
    uint64_t probes_sent;  /* probe packets asked for by poll */
    uint64_t probes_acked; /* acknowledgements of probes of the current round */
    uint64_t probes_lost;  /* probes whose timer expired without acknowledgement */
    uint64_t searches;     /* searches started (first, after a raise timer, after a black hole) */
    uint64_t black_holes;  /* PLPMTU fell back to the base */
} moat_plpmtud_counters;

/* One probe to send: an SCTP packet of exactly size bytes whose heartbeat
 * carries seq. */
typedef struct {
    uint32_t seq;
    uint32_t size;
} moat_plpmtud_probe;

typedef struct {
    moat_plpmtud_state state;
    uint32_t max;    /* largest size probed, base..MOAT_PLPMTUD_MAX */
    uint32_t plpmtu; /* largest confirmed size */
    uint32_t failed; /* smallest size known too big; max + 4 when none */
    /* The current search round. */
    uint32_t sizes[MOAT_PLPMTUD_ROUND_SIZES];
    unsigned count;
    uint32_t acked;      /* bit i: sizes[i] acknowledged */
    uint32_t pending;    /* bit i: sizes[i] still to be sent this attempt */
    uint32_t round_seq;  /* first sequence number of the round */
    unsigned attempts;   /* expiries of the round's probe timer so far */
    int64_t deadline_us; /* SEARCHING: probe timer; BASE: when to search again */
    /* Confirmation of the PLPMTU (after a suspected loss, and periodically in
     * SEARCH_COMPLETE): each attempt probes the PLPMTU and the base. */
    bool confirming;
    uint32_t confirm_pending; /* bit 0: the PLPMTU's probe, bit 1: the base's */
    bool confirm_base_acked;  /* the path carried a base-size probe meanwhile */
    uint32_t confirm_seq;     /* sequence number of the first confirmation probe */
    unsigned confirm_attempts;
    int64_t confirm_deadline_us; /* probe timer while confirming, else next confirmation */
    int64_t raise_at_us;         /* SEARCH_COMPLETE: when to search upwards again */
    uint32_t next_seq;           /* sequence number of the next probe */
    moat_plpmtud_counters counters;
} moat_plpmtud;

/* Disabled, PLPMTU = base; max is clamped to base..MOAT_PLPMTUD_MAX and
 * rounded down to a multiple of 4. */
void moat_plpmtud_init(moat_plpmtud *p, uint32_t max);

/* The association is up (the base is confirmed by its handshake and data):
 * the search starts now. Ignored unless disabled and max > base. */
void moat_plpmtud_start(moat_plpmtud *p, int64_t now_us);

/* Runs the timers due at now_us, then returns true with the next probe to
 * send now, or false when there is none. Call until false. */
bool moat_plpmtud_poll(moat_plpmtud *p, int64_t now_us, moat_plpmtud_probe *probe);

/* When poll has something to do next (INT64_MAX for never). */
int64_t moat_plpmtud_deadline(const moat_plpmtud *p);

/* A probe's acknowledgement arrived. Returns true when the PLPMTU grew.
 * Acknowledgements of earlier rounds, or of sizes not probed, are ignored. */
bool moat_plpmtud_on_ack(moat_plpmtud *p, uint32_t seq, uint32_t size, int64_t now_us);

/* The association saw loss that may mean packets of PLPMTU size no longer
 * get through (an SCTP retransmission timeout). A confirmation goes out now:
 * a probe of the PLPMTU and one of the base, every PROBE_TIMER. When
 * MAX_PROBES of the PLPMTU's are lost while the base's got through, the
 * PLPMTU falls back to the base (black hole, RFC 8899 §4.3); when the base's
 * are lost too, the path is congested or down rather than smaller, and the
 * confirmation goes on. The same confirmation runs every
 * CONFIRMATION_TIMER in SEARCH_COMPLETE. No effect at the base. */
void moat_plpmtud_suspect(moat_plpmtud *p, int64_t now_us);

static inline uint32_t moat_plpmtud_pmtu(const moat_plpmtud *p)
{
    return p->plpmtu;
}

const char *moat_plpmtud_state_name(moat_plpmtud_state state);

#endif
