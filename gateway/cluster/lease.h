/* A room's ownership lease as its owner sees it (pure; unit-tested). The
 * owner renews every lease/4 with the claim script (cluster.c), which
 * re-takes a lapsed key too; a reply naming another node means the room was
 * lost; with no session for a whole lease the owner releases the room. The
 * local expiry is counted from when a renewal was SENT, so it never outlives
 * the key in Redis. Control thread. */
#ifndef MOAT_CLUSTER_LEASE_H
#define MOAT_CLUSTER_LEASE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    MOAT_LEASE_OWNED,    /* ours as far as we know (maybe lapsed: see expires) */
    MOAT_LEASE_LOST,     /* another node holds it */
    MOAT_LEASE_RELEASED, /* given up: no session for a lease */
} moat_lease_state;

typedef enum {
    MOAT_LEASE_WAIT,
    MOAT_LEASE_RENEW,   /* send the claim script, then renew_sent() */
    MOAT_LEASE_RELEASE, /* send the release script and forget the room */
} moat_lease_action;

typedef struct {
    moat_lease_state state;
    uint64_t lease_ms;
    uint64_t expires_ms;   /* 0: never confirmed by Redis */
    uint64_t last_sent_ms; /* the last renewal sent; 0: none */
    uint64_t last_used_ms; /* the last time a local session was in it */
    bool in_flight;
} moat_lease;

/* A lease taken (confirmed = the claim reply named us at `sent_ms`, or not
 * confirmed: placed locally while Redis was unreachable). */
void moat_lease_init(moat_lease *lease, uint64_t lease_ms, uint64_t now_ms, bool confirmed,
                     uint64_t sent_ms);
/* What to do at `now_ms`; `used`: a local session is in the room now. */
moat_lease_action moat_lease_tick(moat_lease *lease, uint64_t now_ms, bool used);
void moat_lease_renew_sent(moat_lease *lease, uint64_t now_ms);
/* The claim script's reply to the renewal sent at `sent_ms`: `ours` when it
 * named this node; `failed` when none came (timeout, Redis down). */
void moat_lease_renew_reply(moat_lease *lease, uint64_t sent_ms, bool failed, bool ours);
/* Ours and not lapsed at `now_ms`: offers may be served without asking Redis. */
bool moat_lease_valid(const moat_lease *lease, uint64_t now_ms);
const char *moat_lease_state_name(moat_lease_state state);

#endif
