/* The candidate pairs an ICE-lite agent has seen for one session (one
 * bundled component): which remote tuples passed a check on which of our
 * addresses, their priorities and nominations, and which pair is selected.
 * Pure bookkeeping, no sockets and no clock of its own; the caller (the
 * session, on its worker thread) owns it and binds/unbinds the tuples it
 * reports in the worker's table.
 *
 * Selection (RFC 8445 §7.3.1.5, §8.2 for a lite agent; RFC 7675):
 *  - Before any nomination the first authenticated pair carries DTLS
 *    (provisional selection); any nominated pair replaces a provisional one.
 *  - Among nominated pairs of the current ICE generation the highest pair
 *    priority wins. An equal priority from a new tuple is the same peer
 *    candidate seen through a new mapping (NAT rebinding, a handover that
 *    kept the candidate's priority): the newer nomination wins, so media
 *    follows the peer without a new DTLS handshake.
 *  - A lower-priority nomination does not displace a higher-priority selected
 *    pair while that pair is alive, i.e. the peer's consent checks still
 *    arrive on it (one within MOAT_ICE_PAIR_STALE_US). A peer that has left
 *    the network of the selected pair stops checking it; then the
 *    lower-priority nomination takes over. A peer cannot be made to lose
 *    media by a lower-priority check while it still uses its pair.
 *  - An ICE restart (new credentials) is a new ICE session (RFC 8445 §9):
 *    the first nomination made with the new credentials is selected whatever
 *    the old pairs' priorities; the old generation never displaces it.
 *  - A transaction id seen recently from another tuple is a replay (the
 *    integrity does not cover the source address): it is refused, so a
 *    captured check re-sent from a forged source cannot move the media.
 *  - Once the transport is up (confirm_by_media), a nomination that would
 *    move media to another remote tuple leaves it pending until something
 *    no replay can forge arrives from that tuple: an SRTP or SRTCP packet
 *    that authenticated (libsrtp's replay window) or DTLS application data
 *    (the record layer's): moat_ice_pairs_confirm. The few transaction ids
 *    remembered above do not stop a check captured longer ago, re-sent from
 *    another address; a peer that really moved sends media from its new
 *    address at once (a receive-only peer, RTCP), so the move waits for its
 *    first packet, no longer. Until then the selected pair keeps media (and
 *    its own consent, refreshed by its checks).
 *  - Consent is per pair (RFC 7675): a check on the selected pair refreshes
 *    the selected pair's; a check on the pending pair with a transaction id
 *    not seen before (not a retransmission) refreshes the pending pair's
 *    (refreshes_pending). That one keeps the session alive, never the media
 *    on it: the session stops sending to a selected pair whose consent
 *    lapsed, and ends when no pair has consent (session_ice.c).
 *  - Pairs the peer has left go (moat_ice_pairs_expire), and with them the
 *    session's hold on their remote tuples: one neither selected nor
 *    pending without a check or authenticated media for the consent
 *    timeout (the peer moved: NAT rebinding, a handover), and, once a pair
 *    of the newest generation is selected, every pair of an older one (an
 *    ICE restart from a new network is complete; the old credentials no
 *    longer answer, so nothing can check those pairs again). Before, only
 *    an eviction (a 9th pair) or the session's end removed a pair, and the
 *    old tuple stayed the session's: a client the NAT later gave that
 *    mapping could not connect from it (its checks `ice_pair` drops, its
 *    media routed to the old session). */
#ifndef MOAT_ICE_PAIRS_H
#define MOAT_ICE_PAIRS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_ICE_PAIRS_MAX 8
/* Recent transaction ids remembered for replay detection. */
#define MOAT_ICE_PAIRS_RECENT 32
/* A selected pair without an authenticated check for this long is no longer
 * in use by the peer (consent checks come every 5 s +-20% from aiortc and
 * libwebrtc, 2.5 s from a busy libwebrtc). */
#define MOAT_ICE_PAIR_STALE_US (7ull * 1000000ull)

typedef struct {
    struct sockaddr_in6 remote;
    struct in6_addr local;
    uint32_t remote_priority; /* PRIORITY of the peer's last check */
    uint32_t local_priority;  /* our candidate's, for the local address */
    uint64_t priority;        /* pair priority, RFC 8445 §6.1.2.3 (peer controlling) */
    uint32_t generation;      /* ICE generation of the last check */
    bool nominated;           /* USE-CANDIDATE seen in this generation */
    uint64_t last_check_us;
    uint64_t last_media_us; /* authenticated media from its remote (note_media), 0 none */
} moat_ice_pair;

typedef struct {
    moat_ice_pair pairs[MOAT_ICE_PAIRS_MAX];
    size_t n_pairs;
    int selected; /* index in pairs, -1 when none */
    int pending;  /* a nominated pair waiting for media from its remote, -1 none */
    uint32_t generation;
    struct {
        uint8_t id[12];
        struct sockaddr_in6 remote;
    } recent[MOAT_ICE_PAIRS_RECENT];
    size_t n_recent, next_recent;
} moat_ice_pairs;

/* One authenticated Binding request. */
typedef struct {
    const struct sockaddr_in6 *remote;
    const struct in6_addr *local;
    uint32_t remote_priority;
    uint32_t local_priority;
    bool nominated;
    bool previous_generation;   /* made with the credentials before the last restart */
    bool confirm_by_media;      /* a move to another remote waits for its media */
    const uint8_t *transaction; /* 12 bytes */
    uint64_t now_us;
} moat_ice_check_event;

typedef enum {
    MOAT_ICE_PAIRS_ACCEPTED, /* answer it */
    MOAT_ICE_PAIRS_REPLAY,   /* refused: do not answer, bind nothing */
} moat_ice_pairs_verdict;

typedef struct {
    bool bind;   /* remote is new to this session: bind it */
    bool unbind; /* evicted is no longer used by any pair: unbind it */
    struct sockaddr_in6 evicted;
    bool selection_changed; /* the selected pair is now this check's pair */
    bool refreshes_consent; /* the check was on the selected pair */
    bool selection_pending; /* this check's pair now waits for media (confirm) */
    bool refreshes_pending; /* a new check on the pending pair: its consent */
} moat_ice_pairs_outcome;

void moat_ice_pairs_init(moat_ice_pairs *p);

/* RFC 8445 §6.1.2.3 with the peer controlling: G = remote, D = local. */
uint64_t moat_ice_pair_priority(uint32_t controlling, uint32_t controlled);

/* Whether an authenticated check from this tuple would be a replay; does not
 * change anything (lets the caller decide before answering). */
bool moat_ice_pairs_is_replay(const moat_ice_pairs *p, const moat_ice_check_event *e);

/* Records the check and applies the selection rules above. */
moat_ice_pairs_verdict moat_ice_pairs_on_check(moat_ice_pairs *p, const moat_ice_check_event *e,
                                               moat_ice_pairs_outcome *out);

/* Whether any pair uses this remote tuple. */
bool moat_ice_pairs_has_remote(const moat_ice_pairs *p, const struct sockaddr_in6 *remote);

/* Authenticated, replay-protected media arrived from remote on local: true
 * when that makes the pending pair the selected one. */
bool moat_ice_pairs_confirm(moat_ice_pairs *p, const struct sockaddr_in6 *remote,
                            const struct in6_addr *local);

/* Authenticated, replay-protected media arrived on this pair (if it is
 * one): the peer still uses it, so it does not expire. */
void moat_ice_pairs_note_media(moat_ice_pairs *p, const struct sockaddr_in6 *remote,
                               const struct in6_addr *local, uint64_t now_us);

/* Removes the pairs the peer has left (see the rules above): neither the
 * selected nor the pending one; one without a check or noted media for more
 * than idle_us, or of an older generation than the selected pair's when
 * that is the newest. Writes each remote no remaining pair uses to `unbind`
 * (the caller unbinds it) and returns their number; *removed (optional)
 * gets the number of pairs removed. The selected and pending pairs keep
 * their roles. */
size_t moat_ice_pairs_expire(moat_ice_pairs *p, uint64_t now_us, uint64_t idle_us,
                             struct sockaddr_in6 unbind[MOAT_ICE_PAIRS_MAX], size_t *removed);

/* Removes every pair on `remote`: another owner took that address (a
 * cascade link's, session_cascade.c). true when the selected pair was one
 * of them (nothing is selected then: the peer's next nominating check on
 * another pair selects it); a move pending there ends. */
bool moat_ice_pairs_forget(moat_ice_pairs *p, const struct sockaddr_in6 *remote);

/* New credentials were installed: a new generation begins. */
void moat_ice_pairs_restart(moat_ice_pairs *p);

/* NULL while nothing is selected. */
const moat_ice_pair *moat_ice_pairs_selected(const moat_ice_pairs *p);

#endif
