/* The worker's writes into the memory it shares with the kernel filter
 * (kernel_filter_state.h): slots, SSRC entries, tag rings, drop counts. */
#include "prefilter/kernel_filter_state.h"

#include <string.h>

static void store32(moat_kf_u32 *word, uint32_t value)
{
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

static void store64(moat_kf_u64 *word, uint64_t value)
{
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

typedef struct {
    const void *owner;
    uint32_t value;
    bool in_map;
} tuple_entry;

static guint tuple_hash(gconstpointer key)
{
    const unsigned char *bytes = key;
    guint hash = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < sizeof(struct moat_kf_tuple); i++)
        hash = (hash ^ bytes[i]) * 16777619u;
    return hash;
}

static gboolean tuple_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(struct moat_kf_tuple)) == 0;
}

void moat_kf_state_init(moat_kf_state *state, moat_kf_shared shared)
{
    memset(state, 0, sizeof *state);
    state->shared = shared;
    state->slot_of = g_hash_table_new(g_direct_hash, g_direct_equal);
    state->tuples = g_hash_table_new_full(tuple_hash, tuple_equal, g_free, g_free);
    memset(shared.sessions, 0, sizeof(struct moat_kf_session) * MOAT_KF_MAX_SESSIONS);
    memset(shared.control, 0, sizeof *shared.control);
    store32(&shared.control->strict_tuples, 1);
}

void moat_kf_state_clear(moat_kf_state *state)
{
    if (state->tuples)
        g_hash_table_destroy(state->tuples);
    state->tuples = NULL;
    if (state->slot_of)
        g_hash_table_destroy(state->slot_of);
    state->slot_of = NULL;
}

int moat_kf_state_slot(moat_kf_state *state, const void *owner, bool create)
{
    gpointer found = g_hash_table_lookup(state->slot_of, owner);
    if (found)
        return GPOINTER_TO_INT(found) - 1;
    if (!create)
        return -1;
    for (int slot = 0; slot < MOAT_KF_MAX_SESSIONS; slot++) {
        if (state->slots[slot].owner)
            continue;
        moat_kf_slot *mirror = &state->slots[slot];
        memset(mirror, 0, sizeof *mirror);
        mirror->owner = owner;
        struct moat_kf_session *session = &state->shared.sessions[slot];
        store32(&session->flags, 0);
        memset(session, 0, sizeof *session);
        store32(&session->flags, MOAT_KF_SESSION_ACTIVE);
        g_hash_table_insert(state->slot_of, (gpointer)owner, GINT_TO_POINTER(slot + 1));
        return slot;
    }
    return -1;
}

static void release_rings(moat_kf_state *state, struct moat_kf_session *session)
{
    for (uint32_t i = 0; i < session->n_ssrcs && i < MOAT_KF_SESSION_SSRCS; i++) {
        uint32_t ring = session->ssrcs[i].ring;
        if (ring < MOAT_KF_MAX_RINGS)
            state->ring_used[ring] = false;
        __atomic_store_n(&session->ssrcs[i].ring, (moat_kf_u16)MOAT_KF_NO_RING, __ATOMIC_RELEASE);
    }
}

void moat_kf_state_release(moat_kf_state *state, int slot)
{
    if (slot < 0 || slot >= MOAT_KF_MAX_SESSIONS || !state->slots[slot].owner)
        return;
    struct moat_kf_session *session = &state->shared.sessions[slot];
    store32(&session->flags, 0); /* the program passes everything from here on */
    release_rings(state, session);
    store32(&session->n_ssrcs, 0);
    g_hash_table_remove(state->slot_of, state->slots[slot].owner);
    memset(&state->slots[slot], 0, sizeof state->slots[slot]);
}

static int take_ring(moat_kf_state *state)
{
    for (int ring = 0; ring < MOAT_KF_MAX_RINGS; ring++) {
        if (!state->ring_used[ring]) {
            state->ring_used[ring] = true;
            memset(&state->shared.rings[ring], 0, sizeof state->shared.rings[ring]);
            return ring;
        }
    }
    return -1;
}

static struct moat_kf_ring *ring_of(const moat_kf_state *state, int slot, int entry)
{
    if (slot < 0 || slot >= MOAT_KF_MAX_SESSIONS || entry < 0 || entry >= MOAT_KF_SESSION_SSRCS)
        return NULL;
    uint32_t ring = state->shared.sessions[slot].ssrcs[entry].ring;
    return ring < MOAT_KF_MAX_RINGS ? &state->shared.rings[ring] : NULL;
}

void moat_kf_state_publish(moat_kf_state *state, int slot, const moat_kf_session_view *view)
{
    if (slot < 0 || slot >= MOAT_KF_MAX_SESSIONS || !state->slots[slot].owner)
        return;
    struct moat_kf_session *session = &state->shared.sessions[slot];
    moat_kf_slot *mirror = &state->slots[slot];
    if (mirror->generation != view->generation || session->scheme != (uint32_t)view->scheme) {
        /* New keys (or a new scheme): every exported tag is wrong now. */
        for (uint32_t i = 0; i < session->n_ssrcs && i < MOAT_KF_SESSION_SSRCS; i++) {
            struct moat_kf_ring *ring = ring_of(state, slot, (int)i);
            if (ring)
                memset(ring, 0, sizeof *ring);
            mirror->cursor[i] = 0;
        }
        mirror->generation = view->generation;
    }
    store32(&session->scheme, (uint32_t)view->scheme);
    store32(&session->behind, view->behind);
    store32(&session->ahead, view->ahead);
    store32(&session->min_rtp_len, view->min_rtp_len);
    store32(&session->flags,
            MOAT_KF_SESSION_ACTIVE | (view->enforcing ? MOAT_KF_SESSION_ENFORCING : 0u));
}

int moat_kf_state_ssrc(moat_kf_state *state, int slot, uint32_t ssrc)
{
    if (slot < 0 || slot >= MOAT_KF_MAX_SESSIONS || !state->slots[slot].owner)
        return -1;
    struct moat_kf_session *session = &state->shared.sessions[slot];
    uint32_t n = session->n_ssrcs;
    for (uint32_t i = 0; i < n && i < MOAT_KF_SESSION_SSRCS; i++) {
        if (session->ssrcs[i].ssrc == ssrc) {
            /* A stream that missed a ring (all taken) gets one when freed. */
            if (session->ssrcs[i].ring == MOAT_KF_NO_RING &&
                session->scheme != MOAT_KF_SCHEME_NONE) {
                int ring = take_ring(state);
                if (ring >= 0)
                    session->ssrcs[i].ring = (moat_kf_u16)ring;
            }
            return (int)i;
        }
    }
    if (n >= MOAT_KF_SESSION_SSRCS)
        return -1;
    /* Filled in before the count makes it visible to the program. */
    struct moat_kf_ssrc *entry = &session->ssrcs[n];
    entry->ssrc = ssrc;
    entry->flags = 0;
    entry->highest = 0;
    int ring = session->scheme != MOAT_KF_SCHEME_NONE ? take_ring(state) : -1;
    entry->ring = ring >= 0 ? (moat_kf_u16)ring : (moat_kf_u16)MOAT_KF_NO_RING;
    state->slots[slot].cursor[n] = 0;
    store32(&session->n_ssrcs, n + 1);
    return (int)n;
}

bool moat_kf_state_set_highest(moat_kf_state *state, int slot, int entry, uint64_t highest)
{
    if (slot < 0 || slot >= MOAT_KF_MAX_SESSIONS || entry < 0 || entry >= MOAT_KF_SESSION_SSRCS)
        return false;
    struct moat_kf_ssrc *ssrc = &state->shared.sessions[slot].ssrcs[entry];
    if ((ssrc->flags & MOAT_KF_SSRC_HAS_HIGHEST) && ssrc->highest == highest)
        return false;
    store64(&ssrc->highest, highest);
    if (!(ssrc->flags & MOAT_KF_SSRC_HAS_HIGHEST))
        __atomic_store_n(&ssrc->flags, (moat_kf_u16)(ssrc->flags | MOAT_KF_SSRC_HAS_HIGHEST),
                         __ATOMIC_RELEASE);
    return true;
}

void moat_kf_state_put_tag(moat_kf_state *state, int slot, int entry, uint64_t index, uint32_t tag)
{
    struct moat_kf_ring *ring = ring_of(state, slot, entry);
    if (ring)
        store64(&ring->slots[index & (MOAT_KF_RING_SIZE - 1)],
                (uint64_t)moat_kf_ring_key(index) << 32 | tag);
}

bool moat_kf_state_get_tag(const moat_kf_state *state, int slot, int entry, uint64_t index,
                           uint32_t *tag)
{
    const struct moat_kf_ring *ring = ring_of(state, slot, entry);
    if (!ring)
        return false;
    uint64_t word = ring->slots[index & (MOAT_KF_RING_SIZE - 1)];
    if ((uint32_t)(word >> 32) != moat_kf_ring_key(index))
        return false;
    *tag = (uint32_t)word;
    return true;
}

size_t moat_kf_state_export_window(moat_kf_state *state, int slot, int entry, const uint32_t *tags,
                                   uint64_t mask, uint64_t lo, uint64_t hi)
{
    if (!ring_of(state, slot, entry) || hi <= lo)
        return 0;
    uint64_t *cursor = &state->slots[slot].cursor[entry];
    uint64_t from = *cursor > lo && *cursor <= hi ? *cursor : lo;
    /* The kernel ring holds MOAT_KF_RING_SIZE indexes: the newest ones win. */
    if (hi - from > MOAT_KF_RING_SIZE)
        from = hi - MOAT_KF_RING_SIZE;
    for (uint64_t index = from; index < hi; index++)
        moat_kf_state_put_tag(state, slot, entry, index, tags[index & mask]);
    *cursor = hi;
    return (size_t)(hi - from);
}

void moat_kf_state_take_drops(moat_kf_state *state, int slot, uint64_t delta[MOAT_KF_REASON_COUNT])
{
    memset(delta, 0, sizeof(uint64_t) * MOAT_KF_REASON_COUNT);
    if (slot < 0 || slot >= MOAT_KF_MAX_SESSIONS || !state->slots[slot].owner)
        return;
    const struct moat_kf_session *session = &state->shared.sessions[slot];
    for (int r = 0; r < MOAT_KF_REASON_COUNT; r++) {
        uint64_t now = __atomic_load_n(&session->dropped[r], __ATOMIC_RELAXED);
        delta[r] = now - state->slots[slot].seen[r];
        state->slots[slot].seen[r] = now;
    }
}

void moat_kf_state_take_unowned(moat_kf_state *state, uint64_t delta[MOAT_KF_REASON_COUNT])
{
    for (int r = 0; r < MOAT_KF_REASON_COUNT; r++) {
        uint64_t now = __atomic_load_n(&state->shared.control->unowned[r], __ATOMIC_RELAXED);
        delta[r] = now - state->unowned_seen[r];
        state->unowned_seen[r] = now;
    }
}

/* ---- the tuple map ---- */

void moat_kf_state_set_tuple_ops(moat_kf_state *state, moat_kf_tuple_ops ops)
{
    state->tuple_ops = ops;
}

static bool map_update(moat_kf_state *state, const struct moat_kf_tuple *key, uint32_t value)
{
    return state->tuple_ops.update && state->tuple_ops.update(state->tuple_ops.context, key, value);
}

static void map_remove(moat_kf_state *state, const struct moat_kf_tuple *key)
{
    if (state->tuple_ops.remove)
        state->tuple_ops.remove(state->tuple_ops.context, key);
}

/* Waiting tuples go in while there is room; strict dropping is on exactly
 * when none waits. */
static void settle(moat_kf_state *state)
{
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, state->tuples);
    while (state->n_waiting > 0 && g_hash_table_iter_next(&it, &key, &value)) {
        tuple_entry *entry = value;
        if (entry->in_map)
            continue;
        if (!map_update(state, key, entry->value))
            break; /* still full */
        entry->in_map = true;
        state->n_waiting--;
    }
    store32(&state->shared.control->strict_tuples, state->n_waiting == 0 ? 1u : 0u);
}

static bool bind_value(moat_kf_state *state, const void *owner, const struct moat_kf_tuple *key,
                       uint32_t value);

bool moat_kf_state_bind_tuple(moat_kf_state *state, const void *owner,
                              const struct moat_kf_tuple *key)
{
    int slot = moat_kf_state_slot(state, owner, true);
    return bind_value(state, owner, key, slot >= 0 ? (uint32_t)slot : MOAT_KF_UNTRACKED);
}

bool moat_kf_state_pass_tuple(moat_kf_state *state, const void *owner,
                              const struct moat_kf_tuple *key)
{
    return bind_value(state, owner, key, MOAT_KF_UNTRACKED);
}

static bool bind_value(moat_kf_state *state, const void *owner, const struct moat_kf_tuple *key,
                       uint32_t value)
{
    tuple_entry *entry = g_hash_table_lookup(state->tuples, key);
    if (!entry) {
        entry = g_new0(tuple_entry, 1);
        g_hash_table_insert(state->tuples, g_memdup2(key, sizeof *key), entry);
        state->n_waiting++; /* until it is in the map */
    }
    entry->owner = owner;
    entry->value = value;
    bool added = map_update(state, key, value);
    if (added && !entry->in_map)
        state->n_waiting--;
    else if (!added && entry->in_map) {
        map_remove(state, key);
        state->n_waiting++;
    }
    entry->in_map = added;
    settle(state);
    return added;
}

static void drop_entry(moat_kf_state *state, const struct moat_kf_tuple *key,
                       const tuple_entry *entry)
{
    if (entry->in_map)
        map_remove(state, key);
    else
        state->n_waiting--;
}

void moat_kf_state_unbind_tuple(moat_kf_state *state, const struct moat_kf_tuple *key)
{
    tuple_entry *entry = g_hash_table_lookup(state->tuples, key);
    if (!entry) {
        map_remove(state, key);
        return;
    }
    drop_entry(state, key, entry);
    g_hash_table_remove(state->tuples, key);
    settle(state);
}

void moat_kf_state_forget(moat_kf_state *state, const void *owner)
{
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, state->tuples);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        tuple_entry *entry = value;
        if (entry->owner != owner)
            continue;
        drop_entry(state, key, entry);
        g_hash_table_iter_remove(&it);
    }
    moat_kf_state_release(state, moat_kf_state_slot(state, owner, false));
    settle(state);
}

size_t moat_kf_state_tuples(const moat_kf_state *state, size_t *waiting)
{
    if (waiting)
        *waiting = state->n_waiting;
    return state->tuples ? g_hash_table_size(state->tuples) : 0;
}
