/* What a session and its worker publish to the kernel filter on each tick,
 * and the kernel's drops taken back into their counters and detectors. */
#include "session/session_kernel.h"

#include "session/session_internal.h"
#include "srtpplus.h"

#include <string.h>

/* Detector calls per tick for packets the kernel dropped: far above any
 * threshold, bounded so a flood costs the tick nothing noticeable. */
#define DETECTOR_FEED_CAP 2048
/* Chain tags are exported from this far behind the highest index to D ahead. */
#define CHAIN_EXPORT_BEHIND 64
/* A session nothing enforces for is synced once in this many ticks (its turn
 * staggered by its slot): the filter passes its packets unread then, so only
 * the drop counts and a refresh are due. */
#define CALM_SYNC_TICKS 16

static const moat_drop_reason drop_reason_of[MOAT_KF_REASON_COUNT] = {
    [MOAT_KF_DROP_UNKNOWN_TUPLE] = MOAT_DROP_UNKNOWN_TUPLE,
    [MOAT_KF_DROP_UNKNOWN_SSRC] = MOAT_DROP_UNKNOWN_SSRC,
    [MOAT_KF_DROP_INDEX] = MOAT_DROP_INDEX,
    [MOAT_KF_DROP_TAG] = MOAT_DROP_TAG,
    [MOAT_KF_DROP_MALFORMED] = MOAT_DROP_MALFORMED,
};

static uint64_t capped(uint64_t n)
{
    return n < DETECTOR_FEED_CAP ? n : DETECTOR_FEED_CAP;
}

static void take_drops(moat_session *session, moat_kf_state *state, int slot)
{
    uint64_t delta[MOAT_KF_REASON_COUNT];
    moat_kf_state_take_drops(state, slot, delta);
    moat_counters *worker = moat_worker_counters_mut(session->worker);
    uint64_t total = 0;
    for (int r = 0; r < MOAT_KF_REASON_COUNT; r++) {
        if (!delta[r])
            continue;
        moat_counter_add(&session->counters.dropped[drop_reason_of[r]], delta[r]);
        moat_counter_add(&worker->dropped[drop_reason_of[r]], delta[r]);
        total += delta[r];
    }
    /* As moat_session_handle_srtp and moat_session_drop would have fed them:
     * every datagram is ingress, a wrong tag is proof of forgery. */
    for (uint64_t i = capped(total); i > 0; i--)
        moat_session_prefilter_packet(session);
    for (uint64_t i = capped(delta[MOAT_KF_DROP_TAG]); i > 0; i--)
        moat_session_note_forgery(session);
}

static bool highest_of(const moat_session *session, uint32_t ssrc, uint64_t *highest)
{
    if (session->srtpplus_rx)
        return srtpplus_receiver_highest_index(session->srtpplus_rx, ssrc, highest);
    return moat_stream_guard_highest(&session->guard, ssrc, highest);
}

static void export_chain(const moat_session *session, moat_kf_state *state, int slot, int entry,
                         uint32_t ssrc, uint64_t highest)
{
    uint64_t from = highest > CHAIN_EXPORT_BEHIND ? highest - CHAIN_EXPORT_BEHIND : 0;
    uint64_t to = highest + session->negotiation.srtpplus_scheme.depth;
    for (uint64_t index = from; index <= to; index++) {
        uint32_t tag, exported;
        if (srtpplus_receiver_learned_tag(session->srtpplus_rx, ssrc, index, &tag) &&
            !(moat_kf_state_get_tag(state, slot, entry, index, &exported) && exported == tag))
            moat_kf_state_put_tag(state, slot, entry, index, tag);
    }
}

/* Every SSRC is listed, 0 too: RFC 3550 allows it, and one seen on a packet
 * that authenticated is the peer's (the program counts the listed ones). */
static void publish_stream(const moat_session *session, moat_kf_state *state, int slot,
                           enum moat_kf_scheme scheme, uint32_t ssrc)
{
    int entry = moat_kf_state_ssrc(state, slot, ssrc);
    uint64_t highest;
    if (entry < 0 || !highest_of(session, ssrc, &highest))
        return;
    bool advanced = moat_kf_state_set_highest(state, slot, entry, highest);
    if (scheme == MOAT_KF_SCHEME_PRN) {
        struct srtpplus_window_view window;
        if (srtpplus_receiver_rtp_window(session->srtpplus_rx, ssrc, &window))
            moat_kf_state_export_window(state, slot, entry, window.tags, window.mask, window.lo,
                                        window.hi);
    } else if (scheme == MOAT_KF_SCHEME_CHAIN && advanced) {
        /* Tags are learned as the stream advances: nothing new otherwise. */
        export_chain(session, state, slot, entry, ssrc, highest);
    }
}

/* An SSRC the SDP declared: 0 there means none was. */
static void publish_declared(const moat_session *session, moat_kf_state *state, int slot,
                             enum moat_kf_scheme scheme, uint32_t ssrc)
{
    if (ssrc)
        publish_stream(session, state, slot, scheme, ssrc);
}

/* Every tick while the session or its worker enforces, and the tick after
 * either stopped (the kernel must stop too); otherwise a staggered refresh, so
 * hundreds of calm sessions (an SFU's subscribers) cost the tick little. */
static bool sync_due(const moat_session *session, const moat_kf_state *state, int slot,
                     bool enforcing)
{
    if (enforcing || (state->shared.sessions[slot].flags & MOAT_KF_SESSION_ENFORCING))
        return true;
    uint64_t tick = moat_worker_ticks(session->worker);
    return (tick + (uint64_t)slot) % CALM_SYNC_TICKS == 0;
}

void moat_session_kernel_sync(moat_session *session, moat_kernel_filter *filter)
{
    moat_session_kernel_publish(session, moat_kernel_filter_state(filter));
}

void moat_session_kernel_publish(moat_session *session, moat_kf_state *state)
{
    int slot = moat_kf_state_slot(state, session, false);
    if (slot < 0)
        return;
    bool enforcing = moat_session_enforcing(session);
    if (!sync_due(session, state, slot, enforcing))
        return;
    /* Whether the kernel enforces already: a calm session's published
     * indexes may be stale, so it switches on only once they are fresh. */
    bool was_enforcing = state->shared.sessions[slot].flags & MOAT_KF_SESSION_ENFORCING;
    take_drops(session, state, slot);
    enum moat_kf_scheme scheme = MOAT_KF_SCHEME_NONE;
    if (session->srtpplus_rx)
        scheme = strcmp(session->negotiation.srtpplus_scheme.scheme, "chain") == 0
                     ? MOAT_KF_SCHEME_CHAIN
                     : MOAT_KF_SCHEME_PRN;
    moat_kf_session_view view = {
        .enforcing = enforcing && was_enforcing,
        .scheme = scheme,
        .behind = session->prefilter->window_behind,
        .ahead = session->prefilter->window_ahead,
        .min_rtp_len = session->srtpplus_rx ? 12 + 4 : 12,
        .generation = session->srtpplus_rx,
    };
    moat_kf_state_publish(state, slot, &view);
    for (size_t i = 0; i < session->n_media; i++) {
        publish_declared(session, state, slot, scheme, session->media[i].remote_ssrc);
        publish_declared(session, state, slot, scheme, session->media[i].remote_rtx_ssrc);
    }
    for (size_t i = 0; i < session->n_incoming; i++)
        publish_stream(session, state, slot, scheme, session->incoming[i].ssrc);
    if (enforcing && !was_enforcing) {
        view.enforcing = true;
        moat_kf_state_publish(state, slot, &view);
    }
}

void moat_worker_kernel_sync(moat_worker *worker, moat_kernel_filter *filter)
{
    moat_kernel_filter_set_worker_enforcing(filter, moat_worker_enforcing(worker));
    uint64_t delta[MOAT_KF_REASON_COUNT];
    moat_kf_state_take_unowned(moat_kernel_filter_state(filter), delta);
    for (int r = 0; r < MOAT_KF_REASON_COUNT; r++)
        moat_counter_add(&moat_worker_counters_mut(worker)->dropped[drop_reason_of[r]], delta[r]);
    /* Like worker_receive.c's drops before a transport: junk no session owns
     * (unknown 5-tuples, malformed) cost nothing to drop and feed no
     * detector, so an off-path sender cannot switch a worker on. */
}
