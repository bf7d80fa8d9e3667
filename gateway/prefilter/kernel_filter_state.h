/* What the worker publishes to its kernel filter, as plain memory writes into
 * the region it shares with the BPF program (kernel_filter_maps.h): which
 * transports it follows, whether they enforce, their allowed SSRCs with the
 * highest authenticated index of each, and the expected SRTP+ tags (the
 * receiver's precomputed prn window, or the learned chain tags). Also takes
 * the program's drop counts back, per transport, for the detectors.
 *
 * Worker thread only: the worker is the only writer. Nothing here runs per
 * packet; the worker calls it from its 10 ms tick, so map updates come in
 * batches as windows slide. No syscalls: the tuple map, which does need
 * them, lives in kernel_filter.c. The shared region can be plain memory,
 * which is how the unit tests drive it. */
#ifndef MOAT_KERNEL_FILTER_STATE_H
#define MOAT_KERNEL_FILTER_STATE_H

#include "prefilter/kernel_filter_maps.h"

#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    struct moat_kf_control *control;
    struct moat_kf_session *sessions; /* MOAT_KF_MAX_SESSIONS */
    struct moat_kf_ring *rings;       /* MOAT_KF_MAX_RINGS */
} moat_kf_shared;

/* The worker's own notes about one slot, never read by the program. */
typedef struct {
    const void *owner;                      /* the session; NULL: free */
    const void *generation;                 /* whose tags the rings hold (the SRTP+ receiver) */
    uint64_t cursor[MOAT_KF_SESSION_SSRCS]; /* prn: window exported up to here */
    uint64_t seen[MOAT_KF_REASON_COUNT];    /* drops already taken */
} moat_kf_slot;

/* The tuple hash map (kernel_filter.c: syscalls; unit tests: a fake). */
typedef struct {
    /* Adds key -> value or replaces its value; false when the map is full. */
    bool (*update)(void *context, const struct moat_kf_tuple *key, uint32_t value);
    void (*remove)(void *context, const struct moat_kf_tuple *key);
    void *context;
} moat_kf_tuple_ops;

typedef struct {
    moat_kf_shared shared;
    moat_kf_tuple_ops tuple_ops;
    /* Every tuple a session uses: key (owned) -> its owner, value and whether
     * it is in the map; those that are not (the map was full) wait. */
    GHashTable *tuples;
    size_t n_waiting;
    moat_kf_slot slots[MOAT_KF_MAX_SESSIONS];
    GHashTable *slot_of; /* owner -> slot + 1 */
    bool ring_used[MOAT_KF_MAX_RINGS];
    uint64_t unowned_seen[MOAT_KF_REASON_COUNT];
} moat_kf_state;

/* What one transport looks like to the filter right now. */
typedef struct {
    bool enforcing;
    enum moat_kf_scheme scheme;
    uint32_t behind, ahead; /* plausibility window */
    uint32_t min_rtp_len;
    const void *generation; /* changes when the SRTP+ keys (and so all tags) change */
} moat_kf_session_view;

void moat_kf_state_init(moat_kf_state *state, moat_kf_shared shared);
void moat_kf_state_clear(moat_kf_state *state);

/* The slot of `owner`, created (active, not enforcing) when `create` is set;
 * -1 when unknown or when every slot is taken. */
int moat_kf_state_slot(moat_kf_state *state, const void *owner, bool create);
/* The slot's session is gone: the program forgets it, its rings are freed. */
void moat_kf_state_release(moat_kf_state *state, int slot);

void moat_kf_state_publish(moat_kf_state *state, int slot, const moat_kf_session_view *view);
/* The entry of an allowed SSRC, added when missing; -1 when the list is full. */
int moat_kf_state_ssrc(moat_kf_state *state, int slot, uint32_t ssrc);
/* Publishes the highest authenticated index; false when it was already so
 * (nothing new to export). */
bool moat_kf_state_set_highest(moat_kf_state *state, int slot, int entry, uint64_t highest);
/* Expected tag of RTP index `index` (no-op for a stream without a ring). */
void moat_kf_state_put_tag(moat_kf_state *state, int slot, int entry, uint64_t index, uint32_t tag);
bool moat_kf_state_get_tag(const moat_kf_state *state, int slot, int entry, uint64_t index,
                           uint32_t *tag);
/* Copies the part of a prn window ([lo, hi), tags at index & mask) not yet
 * exported; a window that moved backwards is exported whole again. Returns
 * how many tags it wrote. */
size_t moat_kf_state_export_window(moat_kf_state *state, int slot, int entry, const uint32_t *tags,
                                   uint64_t mask, uint64_t lo, uint64_t hi);

/* The tuple map: remote endpoints known to belong to sessions. The program
 * drops datagrams from unknown tuples only while every tuple a session uses
 * is in the map (control->strict_tuples): when the map is full, a session's
 * new tuple waits (and unknown tuples pass to user space); as soon as
 * unbinds or ended sessions make room, waiting tuples go in and strict
 * dropping comes back. */
void moat_kf_state_set_tuple_ops(moat_kf_state *state, moat_kf_tuple_ops ops);
/* `owner` uses `key` (its slot, created if needed, is the value). Returns
 * false when the map was full (the tuple waits). */
bool moat_kf_state_bind_tuple(moat_kf_state *state, const void *owner,
                              const struct moat_kf_tuple *key);
/* A known tuple whose packets the program passes unchecked (several
 * sessions share it and check their own in user space), under `owner` for
 * moat_kf_state_forget; no slot is taken. */
bool moat_kf_state_pass_tuple(moat_kf_state *state, const void *owner,
                              const struct moat_kf_tuple *key);
void moat_kf_state_unbind_tuple(moat_kf_state *state, const struct moat_kf_tuple *key);
/* The owner left the worker: every tuple it used leaves the map, its slot
 * is released (moat_kf_state_release). */
void moat_kf_state_forget(moat_kf_state *state, const void *owner);
/* Tuples known, and how many of them wait for room in the map. */
size_t moat_kf_state_tuples(const moat_kf_state *state, size_t *waiting);

/* Drops the program counted for the slot since the last call. */
void moat_kf_state_take_drops(moat_kf_state *state, int slot, uint64_t delta[MOAT_KF_REASON_COUNT]);
/* The same for drops no session owns (unknown tuples, malformed). */
void moat_kf_state_take_unowned(moat_kf_state *state, uint64_t delta[MOAT_KF_REASON_COUNT]);

#endif
