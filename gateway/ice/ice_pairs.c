/* The ICE-lite agent's candidate-pair table and selection rules for one
 * session (see ice_pairs.h for the rules and why). */
#include "ice/ice_pairs.h"

#include <string.h>

void moat_ice_pairs_init(moat_ice_pairs *p)
{
    memset(p, 0, sizeof *p);
    p->selected = -1;
    p->pending = -1;
}

uint64_t moat_ice_pair_priority(uint32_t controlling, uint32_t controlled)
{
    uint64_t g = controlling, d = controlled;
    uint64_t low = g < d ? g : d, high = g < d ? d : g;
    return (low << 32) + 2 * high + (g > d ? 1 : 0);
}

static bool same_remote(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b)
{
    return a->sin6_port == b->sin6_port &&
           memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0;
}

bool moat_ice_pairs_has_remote(const moat_ice_pairs *p, const struct sockaddr_in6 *remote)
{
    for (size_t i = 0; i < p->n_pairs; i++) {
        if (same_remote(&p->pairs[i].remote, remote))
            return true;
    }
    return false;
}

bool moat_ice_pairs_is_replay(const moat_ice_pairs *p, const moat_ice_check_event *e)
{
    /* A STUN retransmission keeps its transaction id and its source; the same
     * id from another source is a copy someone else sent. */
    for (size_t i = 0; i < p->n_recent; i++) {
        if (memcmp(p->recent[i].id, e->transaction, sizeof p->recent[i].id) == 0)
            return !same_remote(&p->recent[i].remote, e->remote);
    }
    return false;
}

/* False when the id is remembered already (a retransmission: same source). */
static bool remember_transaction(moat_ice_pairs *p, const moat_ice_check_event *e)
{
    for (size_t i = 0; i < p->n_recent; i++) {
        if (memcmp(p->recent[i].id, e->transaction, sizeof p->recent[i].id) == 0)
            return false;
    }
    memcpy(p->recent[p->next_recent].id, e->transaction, sizeof p->recent[0].id);
    p->recent[p->next_recent].remote = *e->remote;
    p->next_recent = (p->next_recent + 1) % MOAT_ICE_PAIRS_RECENT;
    if (p->n_recent < MOAT_ICE_PAIRS_RECENT)
        p->n_recent++;
    return true;
}

static int find_pair(const moat_ice_pairs *p, const moat_ice_check_event *e)
{
    for (size_t i = 0; i < p->n_pairs; i++) {
        if (same_remote(&p->pairs[i].remote, e->remote) &&
            memcmp(&p->pairs[i].local, e->local, sizeof *e->local) == 0)
            return (int)i;
    }
    return -1;
}

/* A slot for a new pair: a free one, else the least recently checked pair
 * that is not selected (never the selected one). */
static int new_slot(moat_ice_pairs *p, moat_ice_pairs_outcome *out)
{
    if (p->n_pairs < MOAT_ICE_PAIRS_MAX)
        return (int)p->n_pairs++;
    int oldest = -1;
    for (int i = 0; i < (int)p->n_pairs; i++) {
        if (i == p->selected)
            continue;
        if (oldest < 0 || p->pairs[i].last_check_us < p->pairs[oldest].last_check_us)
            oldest = i;
    }
    if (oldest == p->pending)
        p->pending = -1;
    struct sockaddr_in6 evicted = p->pairs[oldest].remote;
    memset(&p->pairs[oldest].remote, 0, sizeof p->pairs[oldest].remote);
    if (!moat_ice_pairs_has_remote(p, &evicted)) {
        out->unbind = true;
        out->evicted = evicted;
    }
    return oldest;
}

/* Whether candidate (nominated) replaces the selected pair current. */
static bool displaces(const moat_ice_pair *candidate, const moat_ice_pair *current, uint64_t now_us)
{
    if (!current->nominated)
        return true; /* provisional selection */
    if (candidate->generation != current->generation)
        return candidate->generation > current->generation; /* restart: a new ICE session */
    if (candidate->priority >= current->priority)
        return true; /* higher, or the same candidate through a new mapping */
    /* Lower priority: only once the peer has stopped using the selected pair. */
    return now_us - current->last_check_us > MOAT_ICE_PAIR_STALE_US;
}

moat_ice_pairs_verdict moat_ice_pairs_on_check(moat_ice_pairs *p, const moat_ice_check_event *e,
                                               moat_ice_pairs_outcome *out)
{
    memset(out, 0, sizeof *out);
    if (moat_ice_pairs_is_replay(p, e))
        return MOAT_ICE_PAIRS_REPLAY;
    bool fresh = remember_transaction(p, e);

    /* Staleness of the selected pair is judged before this check counts. */
    moat_ice_pair current = p->selected >= 0 ? p->pairs[p->selected] : (moat_ice_pair){0};

    int index = find_pair(p, e);
    if (index < 0) {
        out->bind = !moat_ice_pairs_has_remote(p, e->remote);
        index = new_slot(p, out);
        if (out->unbind && same_remote(&out->evicted, e->remote)) {
            /* The evicted pair's remote comes back at once under the new one. */
            out->unbind = false;
            out->bind = false;
        }
        memset(&p->pairs[index], 0, sizeof p->pairs[index]);
        p->pairs[index].remote = *e->remote;
        p->pairs[index].local = *e->local;
        p->pairs[index].generation = UINT32_MAX; /* no generation yet */
    }
    moat_ice_pair *pair = &p->pairs[index];
    uint32_t generation =
        e->previous_generation && p->generation > 0 ? p->generation - 1 : p->generation;
    if (pair->generation != generation)
        pair->nominated = false;
    pair->generation = generation;
    pair->nominated = pair->nominated || e->nominated;
    pair->remote_priority = e->remote_priority;
    pair->local_priority = e->local_priority;
    pair->priority = moat_ice_pair_priority(e->remote_priority, e->local_priority);
    pair->last_check_us = e->now_us;

    if (index == p->selected) {
        out->refreshes_consent = true;
        return MOAT_ICE_PAIRS_ACCEPTED;
    }
    /* The pending pair's own consent: it keeps the session, not the media
     * (a retransmitted id refreshes nothing: consent wants a new one). */
    if (index == p->pending)
        out->refreshes_pending = fresh;
    /* Only the nominating check itself moves media: a pair nominated earlier
     * that checks in again (a late retransmission, consent) does not take
     * the selection back from a newer nomination. */
    if (p->selected < 0 || (e->nominated && displaces(pair, &current, e->now_us))) {
        if (p->selected >= 0 && e->confirm_by_media && current.nominated &&
            !same_remote(&pair->remote, &current.remote)) {
            out->selection_pending = p->pending != index; /* a new pending move */
            p->pending = index;                           /* moves when its media comes (confirm) */
            out->refreshes_pending = fresh;
            return MOAT_ICE_PAIRS_ACCEPTED;
        }
        p->selected = index;
        p->pending = -1;
        out->selection_changed = true;
        out->refreshes_consent = true;
    }
    return MOAT_ICE_PAIRS_ACCEPTED;
}

bool moat_ice_pairs_confirm(moat_ice_pairs *p, const struct sockaddr_in6 *remote,
                            const struct in6_addr *local)
{
    if (p->pending < 0)
        return false;
    const moat_ice_pair *pair = &p->pairs[p->pending];
    if (!same_remote(&pair->remote, remote) || memcmp(&pair->local, local, sizeof *local) != 0)
        return false;
    p->selected = p->pending;
    p->pending = -1;
    return true;
}

void moat_ice_pairs_note_media(moat_ice_pairs *p, const struct sockaddr_in6 *remote,
                               const struct in6_addr *local, uint64_t now_us)
{
    for (size_t i = 0; i < p->n_pairs; i++) {
        if (same_remote(&p->pairs[i].remote, remote) &&
            memcmp(&p->pairs[i].local, local, sizeof *local) == 0) {
            p->pairs[i].last_media_us = now_us;
            return;
        }
    }
}

/* Removes the pairs marked in `drop`, keeping the others in order and the
 * selected and pending ones in their roles; true when the selected pair
 * was among the removed (nothing is selected then). */
static bool remove_pairs(moat_ice_pairs *p, const bool *drop)
{
    bool selected_lost = false;
    int selected = -1, pending = -1;
    size_t kept = 0;
    for (size_t i = 0; i < p->n_pairs; i++) {
        bool is_selected = (int)i == p->selected, is_pending = (int)i == p->pending;
        if (drop[i]) {
            selected_lost = selected_lost || is_selected;
            continue;
        }
        if (is_selected)
            selected = (int)kept;
        if (is_pending)
            pending = (int)kept;
        p->pairs[kept++] = p->pairs[i];
    }
    memset(&p->pairs[kept], 0, (p->n_pairs - kept) * sizeof p->pairs[0]);
    p->n_pairs = kept;
    p->selected = selected;
    p->pending = pending;
    return selected_lost;
}

bool moat_ice_pairs_forget(moat_ice_pairs *p, const struct sockaddr_in6 *remote)
{
    bool drop[MOAT_ICE_PAIRS_MAX] = {false};
    for (size_t i = 0; i < p->n_pairs; i++)
        drop[i] = same_remote(&p->pairs[i].remote, remote);
    return remove_pairs(p, drop);
}

/* Whether pair i is one the peer has left (moat_ice_pairs_expire). */
static bool left(const moat_ice_pairs *p, size_t i, uint64_t now_us, uint64_t idle_us)
{
    if ((int)i == p->selected || (int)i == p->pending)
        return false;
    const moat_ice_pair *pair = &p->pairs[i];
    /* A restart is complete once the newest generation has the selection:
     * the older generations' credentials answer no more. */
    if (p->selected >= 0 && p->pairs[p->selected].generation == p->generation &&
        pair->generation != p->generation)
        return true;
    uint64_t last =
        pair->last_media_us > pair->last_check_us ? pair->last_media_us : pair->last_check_us;
    return now_us > last && now_us - last > idle_us;
}

size_t moat_ice_pairs_expire(moat_ice_pairs *p, uint64_t now_us, uint64_t idle_us,
                             struct sockaddr_in6 unbind[MOAT_ICE_PAIRS_MAX], size_t *removed)
{
    bool drop[MOAT_ICE_PAIRS_MAX] = {false};
    struct sockaddr_in6 gone[MOAT_ICE_PAIRS_MAX];
    size_t n_gone = 0;
    for (size_t i = 0; i < p->n_pairs; i++) {
        drop[i] = left(p, i, now_us, idle_us);
        if (drop[i])
            gone[n_gone++] = p->pairs[i].remote;
    }
    if (removed)
        *removed = n_gone;
    if (n_gone == 0)
        return 0;
    remove_pairs(p, drop);
    /* A remote shared with a kept pair (another of our addresses) stays
     * bound; one shared by two removed pairs is unbound once. */
    size_t n_unbind = 0;
    for (size_t i = 0; i < n_gone; i++) {
        bool listed = false;
        for (size_t j = 0; j < n_unbind && !listed; j++)
            listed = same_remote(&unbind[j], &gone[i]);
        if (!listed && !moat_ice_pairs_has_remote(p, &gone[i]))
            unbind[n_unbind++] = gone[i];
    }
    return n_unbind;
}

void moat_ice_pairs_restart(moat_ice_pairs *p)
{
    p->generation++;
    p->pending = -1; /* the old generation's: the new one nominates again */
}

const moat_ice_pair *moat_ice_pairs_selected(const moat_ice_pairs *p)
{
    return p->selected >= 0 ? &p->pairs[p->selected] : NULL;
}
