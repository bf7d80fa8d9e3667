/* The attack classes' common plumbing: the generator table by class, aiming a
 * batch at an address or a session's 5-tuple, and the UDP socket session-less
 * classes send from. */
#include "attack_generator.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const attack_generator *attack_generator_for(attack_kind kind)
{
    static const attack_generator *const all[ATTACK_KIND_COUNT] = {
        [ATTACK_FORGED_OWN] = &attack_forged_own,
        [ATTACK_FORGED_SPOOFED] = &attack_forged_spoofed,
        [ATTACK_RANDOM_SSRC] = &attack_random_ssrc,
        [ATTACK_REPLAY] = &attack_replay,
        [ATTACK_FORGED_RTCP] = &attack_forged_rtcp,
        [ATTACK_STUN_FLOOD] = &attack_stun_flood,
        [ATTACK_DTLS_HELLO_FLOOD] = &attack_dtls_hello_flood,
        [ATTACK_MALFORMED] = &attack_malformed,
    };
    return kind < ATTACK_KIND_COUNT ? all[kind] : NULL;
}

void attack_batch_aim(attack_batch *batch, int fd, const struct sockaddr_in6 *to)
{
    batch->fd = fd;
    memset(&batch->destination, 0, sizeof batch->destination);
    memcpy(&batch->destination, to, sizeof *to);
    batch->destination_length = sizeof *to;
}

void attack_batch_aim_at_session(attack_batch *batch, const flood_session *s)
{
    attack_batch_aim(batch, s->fd, &s->remote);
}

int attack_udp_socket_open(char *error, size_t error_size)
{
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(error, error_size, "socket: %s", strerror(errno));
        return -1;
    }
    int off = 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    struct sockaddr_in6 any = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT};
    if (bind(fd, (struct sockaddr *)&any, sizeof any) != 0) {
        snprintf(error, error_size, "bind: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}
