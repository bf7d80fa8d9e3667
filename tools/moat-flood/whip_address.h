/* What a WHIP client learns about addresses and ICE credentials, shared by
 * moat-flood's sessions and moat-tunnel: a numeric SDP candidate as a
 * dual-stack socket address, the local address its host candidate announces,
 * a value of an ICE restart's SDP fragment, and whether a resource URL is on
 * the WHIP URL's origin. Pure or socket-local; no
 * state, any thread. */
#ifndef WHIP_ADDRESS_H
#define WHIP_ADDRESS_H

#include "sdp/sdp.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

/* A numeric candidate address (IPv4 mapped) into *out; false for a name, a
 * bad address or port 0. */
bool whip_candidate_address(const moat_sdp_candidate *c, struct sockaddr_in6 *out);

/* The address the kernel would send from towards url's host (learnt with a
 * throwaway connected socket, so fd keeps its port) with fd's bound port:
 * what the host candidate announces. Without a route only the port is
 * known. */
void whip_learn_local_address(const char *url, int fd, struct sockaddr_in6 *local);

/* The value of an a=<name>: line of an SDP fragment (name includes "a=" and
 * the colon) into out; false when absent, empty or longer than size - 1. */
bool whip_fragment_value(const char *fragment, const char *name, char *out, size_t size);

/* Whether url and other are absolute URLs of the same origin: the same
 * scheme, host (ASCII case ignored) and port (the scheme's default when
 * absent: 80 http, 443 https). What a WHIP resource (Location) must share
 * with the WHIP URL before the bearer token goes to it. */
bool whip_same_origin(const char *url, const char *other);

#endif
