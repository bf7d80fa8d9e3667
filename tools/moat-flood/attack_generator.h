/* What every attack class implements: build datagrams into a batch that the
 * attack runner hands to sendmmsg. A generator runs on the attack thread
 * only; what it reads of a session is listed in flood_session.h. */
#ifndef ATTACK_GENERATOR_H
#define ATTACK_GENERATOR_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "attack_kind.h"
#include "flood_random.h"
#include "flood_session.h"

#define ATTACK_BATCH_MAX         64
#define ATTACK_DATAGRAM_CAPACITY 1500

/* One sendmmsg call: every datagram leaves through fd towards destination. */
typedef struct {
    int fd;
    struct sockaddr_storage destination;
    socklen_t destination_length;
    size_t count;
    size_t lengths[ATTACK_BATCH_MAX];
    uint8_t datagrams[ATTACK_BATCH_MAX][ATTACK_DATAGRAM_CAPACITY];
} attack_batch;

/* What the generators may aim at. */
typedef struct {
    flood_session *const *sessions; /* connected sessions, for session classes */
    size_t n_sessions;
    struct sockaddr_in6 target; /* for session-less classes (v4-mapped for IPv4) */
    int spoof_fd;               /* raw IPv4 socket for forged-spoofed, or -1 */
} attack_environment;

typedef struct {
    attack_kind kind;
    /* NULL with a message when the class cannot run here. */
    void *(*create)(const attack_environment *env, char *error, size_t error_size);
    /* Fills up to max (<= ATTACK_BATCH_MAX) datagrams into batch and sets its
     * fd and destination; returns how many (0: nothing to send right now). */
    size_t (*fill)(void *state, attack_batch *batch, size_t max, uint64_t now_us);
    void (*destroy)(void *state);
} attack_generator;

extern const attack_generator attack_forged_own;
extern const attack_generator attack_forged_spoofed;
extern const attack_generator attack_random_ssrc;
extern const attack_generator attack_replay;
extern const attack_generator attack_forged_rtcp;
extern const attack_generator attack_stun_flood;
extern const attack_generator attack_dtls_hello_flood;
extern const attack_generator attack_malformed;

const attack_generator *attack_generator_for(attack_kind kind);

/* Points batch at a session's own socket and its selected gateway address. */
void attack_batch_aim_at_session(attack_batch *batch, const flood_session *s);
/* Points batch at an address through fd. */
void attack_batch_aim(attack_batch *batch, int fd, const struct sockaddr_in6 *to);

/* A non-blocking dual-stack UDP socket on a fresh ephemeral port, for the
 * session-less classes; -1 with a message. */
int attack_udp_socket_open(char *error, size_t error_size);

#endif
