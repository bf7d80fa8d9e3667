/* Owns the room lease's state machine (lease.h). */
#include "cluster/lease.h"

#include <string.h>

void moat_lease_init(moat_lease *lease, uint64_t lease_ms, uint64_t now_ms, bool confirmed,
                     uint64_t sent_ms)
{
    memset(lease, 0, sizeof *lease);
    lease->state = MOAT_LEASE_OWNED;
    lease->lease_ms = lease_ms;
    lease->last_used_ms = now_ms;
    lease->last_sent_ms = confirmed ? sent_ms : 0;
    lease->expires_ms = confirmed ? sent_ms + lease_ms : 0;
}

moat_lease_action moat_lease_tick(moat_lease *lease, uint64_t now_ms, bool used)
{
    if (lease->state != MOAT_LEASE_OWNED)
        return MOAT_LEASE_WAIT;
    if (used)
        lease->last_used_ms = now_ms;
    if (now_ms - lease->last_used_ms >= lease->lease_ms) {
        lease->state = MOAT_LEASE_RELEASED;
        return MOAT_LEASE_RELEASE;
    }
    if (lease->in_flight)
        return MOAT_LEASE_WAIT;
    if (lease->last_sent_ms == 0 || now_ms - lease->last_sent_ms >= lease->lease_ms / 4)
        return MOAT_LEASE_RENEW;
    return MOAT_LEASE_WAIT;
}

void moat_lease_renew_sent(moat_lease *lease, uint64_t now_ms)
{
    lease->in_flight = true;
    lease->last_sent_ms = now_ms ? now_ms : 1;
}

void moat_lease_renew_reply(moat_lease *lease, uint64_t sent_ms, bool failed, bool ours)
{
    lease->in_flight = false;
    if (failed || lease->state != MOAT_LEASE_OWNED)
        return;
    if (ours)
        lease->expires_ms = sent_ms + lease->lease_ms;
    else
        lease->state = MOAT_LEASE_LOST;
}

bool moat_lease_valid(const moat_lease *lease, uint64_t now_ms)
{
    return lease->state == MOAT_LEASE_OWNED && lease->expires_ms > now_ms;
}

const char *moat_lease_state_name(moat_lease_state state)
{
    switch (state) {
    case MOAT_LEASE_OWNED:
        return "owned";
    case MOAT_LEASE_LOST:
        return "lost";
    case MOAT_LEASE_RELEASED:
        return "released";
    }
    return "?";
}
