/* replay: legitimate SRTP packets the sessions sent, captured after
 * protection, sent again on the same 5-tuple. Only packets at least
 * MIN_AGE_US old are replayed, so the receiver has authenticated the
 * original and sees an index it already accepted. */
#include "attack_generator.h"

#include <glib.h>
#include <stdio.h>

#define MIN_AGE_US 20000u

typedef struct {
    flood_session *const *sessions;
    size_t n_sessions;
    size_t next_session;
    unsigned *cursors; /* one per session */
} replay_state;

static void *create_replay(const attack_environment *env, char *error, size_t error_size)
{
    if (env->n_sessions == 0) {
        snprintf(error, error_size, "no connected session to replay packets of");
        return NULL;
    }
    for (size_t i = 0; i < env->n_sessions; i++) {
        if (env->sessions[i]->capture == NULL) {
            snprintf(error, error_size, "session %zu captures no packets", i);
            return NULL;
        }
    }
    replay_state *r = g_new0(replay_state, 1);
    r->sessions = env->sessions;
    r->n_sessions = env->n_sessions;
    r->cursors = g_new0(unsigned, env->n_sessions);
    return r;
}

static size_t fill_replay(void *state, attack_batch *batch, size_t max, uint64_t now_us)
{
    replay_state *r = state;
    /* The first session with packets old enough takes the whole batch. */
    for (size_t tried = 0; tried < r->n_sessions; tried++) {
        size_t index = r->next_session;
        r->next_session = (r->next_session + 1) % r->n_sessions;
        flood_session *s = r->sessions[index];
        size_t n = 0;
        while (n < max) {
            size_t length = capture_ring_pick(s->capture, now_us, MIN_AGE_US, &r->cursors[index],
                                              batch->datagrams[n], ATTACK_DATAGRAM_CAPACITY);
            if (length == 0)
                break;
            batch->lengths[n++] = length;
        }
        if (n > 0) {
            attack_batch_aim_at_session(batch, s);
            return n;
        }
    }
    return 0;
}

static void destroy_replay(void *state)
{
    replay_state *r = state;
    g_free(r->cursors);
    g_free(r);
}

const attack_generator attack_replay = {
    .kind = ATTACK_REPLAY,
    .create = create_replay,
    .fill = fill_replay,
    .destroy = destroy_replay,
};
