/* Which publisher of a room sends an SSRC: the first to claim it. A room
 * names its publishers' streams by SSRC (subscribers map a relayed packet
 * to its publisher's codecs by it, and the gateway's shared retransmission
 * sources are keyed by the room and the SSRC: room_forward.c), so a second
 * publisher sending an SSRC another one already sends would have its
 * packets stored as the first one's and resent to the first one's viewers
 * in answer to their NACKs. Its packets are dropped instead, and counted. */
#include "room.h"

/* Room lock held. */
static bool sends(room_peer *p, uint32_t ssrc)
{
    if (atomic_load(&p->ssrcs[0]) == ssrc || atomic_load(&p->ssrcs[1]) == ssrc)
        return true;
    for (size_t l = 0; l < p->n_layers; l++) {
        if (atomic_load(&p->layers[l].ssrc) == ssrc)
            return true;
    }
    return false;
}

bool room_ssrc_claim(room_peer *publisher, _Atomic uint32_t *slot, uint32_t ssrc)
{
    room *r = publisher->room;
    bool taken = false;
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->n_publishers && !taken; i++)
        taken = r->publishers[i] != publisher && sends(r->publishers[i], ssrc);
    if (!taken)
        atomic_store(slot, ssrc);
    pthread_mutex_unlock(&r->lock);
    if (taken)
        atomic_fetch_add_explicit(&publisher->ssrc_refused, 1, memory_order_relaxed);
    return !taken;
}
