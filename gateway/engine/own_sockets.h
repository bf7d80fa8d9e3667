/* Moat's own UDP sockets, for the loop guard: which ports Moat holds now
 * (call legs, RTP ingests, the workers' and the ng socket) and this host's
 * addresses. A datagram from a port Moat holds on loopback or one of this
 * host's addresses was sent by Moat itself (a call leg steered at another of
 * its sockets): whatever receives it drops it (counted "loop") rather than
 * latch on it or take media from it, whichever path steered it there and
 * whenever that port was bound.
 *
 * Threads: a port is marked by whoever binds it (before the socket is read
 * or sends) and cleared by whoever closes it (before the close); marks are
 * atomic counts, read lock-free by any thread, one byte load for a port
 * Moat does not hold. The host addresses are read once, at creation. Every
 * function takes NULL (no record: nothing is own). */
#ifndef MOAT_OWN_SOCKETS_H
#define MOAT_OWN_SOCKETS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_OWN_SOCKETS_MAX_HOSTS 32

typedef struct moat_own_sockets moat_own_sockets;

/* For sockets bound on `binds` (text addresses: [media] bind, [ng] bind):
 * a wildcard ("::", "0.0.0.0", or one that does not parse) covers loopback
 * and this host's interface addresses (getifaddrs, up to
 * MOAT_OWN_SOCKETS_MAX_HOSTS), any other covers only itself, so a process
 * using the same port number on another local address is not Moat. */
moat_own_sockets *moat_own_sockets_new_for_binds(const char *const *binds, size_t n_binds);
/* With exactly these addresses besides loopback (tests). */
moat_own_sockets *moat_own_sockets_new_with_hosts(const struct in6_addr *hosts, size_t n_hosts);
void moat_own_sockets_free(moat_own_sockets *own);

/* `port` was bound (hold) / is about to close (release). Any thread. */
void moat_own_sockets_hold(moat_own_sockets *own, uint16_t port);
void moat_own_sockets_release(moat_own_sockets *own, uint16_t port);
bool moat_own_sockets_holds(const moat_own_sockets *own, uint16_t port);

/* Whether `source` (AF_INET6; IPv4 as v4-mapped) is one of Moat's own
 * sockets: a port it holds, on an address one of its binds covers.
 * The port first: a datagram from anywhere else costs one byte load. */
bool moat_own_sockets_is_source(const moat_own_sockets *own, const struct sockaddr_in6 *source);

#endif
